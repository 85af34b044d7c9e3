package calendar

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-ical"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/account"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/policy/redact"
	"github.com/tidings-mcp/tidings/internal/scope"
)

// The Calendar service (docs/tools.md, "Calendar"): calendars_list,
// calendars_list_events, calendars_create_event over every
// [[calendar.accounts]] (CalDAV) and [[calendar.files]] (read-only ICS).

// limitSpec bounds calendars_list_events' and reminders_list's limit.
var limitSpec = coerce.IntSpec{Name: "limit", Default: 100, Min: 1, Max: 500, Clamp: true}

// body redacts descriptions and notes with every class (a 2FA code in an
// invitation is masked like one in a message).
var body = output.New(redact.Default())

// Options are what the tools need besides the store.
type Options struct {
	// AllowExternal is the effective allow_external: false makes
	// calendars_create_event closed world and refuses attendees (the
	// server would e-mail invitations).
	AllowExternal bool
}

// StoreFromConfig builds the store of cfg's [calendar] table. Nothing is
// contacted and no secret is read until a tool or check runs (so `serve
// --bridge`, where the helper answers, opens nothing).
func StoreFromConfig(cfg *config.Config, now func() time.Time) (*Store, error) {
	s := &Store{Loc: cfg.Location(), Now: now}
	if cfg.Home != "" {
		s.SearchPath = cfg.Path("calendar.db")
	}
	for _, a := range cfg.Calendar.Accounts {
		src := account.PasswordSource{Account: fmt.Sprintf("calendar account %q", a.Name), Env: a.PasswordEnv, Cmd: a.PasswordCmd}
		var once sync.Once
		var secret account.Secret
		var perr error
		d, err := NewCalDAV(DAVConfig{Account: a.Name, URL: a.URL, Username: a.Username, CAFile: a.CAFile, Email: a.Email,
			Password: func(ctx context.Context) (account.Secret, error) {
				once.Do(func() { secret, perr = src.Resolve(ctx, account.Options{}) })
				return secret, perr
			}})
		if err != nil {
			return nil, err
		}
		s.Backends = append(s.Backends, d)
		if a.Username != "" {
			s.Self = append(s.Self, a.Username)
		}
		if a.Email != "" {
			s.Self = append(s.Self, a.Email)
		}
	}
	for _, f := range cfg.Calendar.Files {
		if f.Kind == config.CalendarKindApple {
			s.Backends = append(s.Backends, NewAppleCal(f.Name, f.Path))
			continue
		}
		if f.URL != "" {
			b, err := NewICSURL(f.Name, f.URL)
			if err != nil {
				return nil, err
			}
			s.Backends = append(s.Backends, b)
			continue
		}
		s.Backends = append(s.Backends, NewICSFile(f.Name, f.Path))
	}
	s.Blocked = homePolicy(cfg.Home, policy.Options{HardenedAllowlist: cfg.HardenedAllowlist})
	return s, nil
}

// homePolicy is the read policy of the Tidings home as a question about
// one address, loaded on first use and reloaded when its files change.
func homePolicy(home string, opts policy.Options) func(string) (bool, error) {
	var mu sync.Mutex
	var st *policy.Store
	return func(addr string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if st == nil {
			s, err := policy.NewStore(home, opts)
			if err != nil {
				return false, err
			}
			st = s
		}
		p, err := st.Current()
		if err != nil {
			return false, err
		}
		return p.AllowHandle(addr).Reason == policy.ReasonBlocked, nil
	}
}

// New builds the Calendar service.
func New(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	st, err := StoreFromConfig(env.Config, env.Now)
	if err != nil {
		return mcpserver.Service{}, err
	}
	svc := CalendarService(st, Options{AllowExternal: env.Config.AllowExternal})
	if len(env.Config.Calendar.Accounts) == 0 && len(env.Config.Calendar.Files) == 0 {
		svc.Unavailable = "no [[calendar.accounts]] or [[calendar.files]] in config.toml"
	}
	return svc, nil
}

// CalendarService is the Calendar service over st.
func CalendarService(st *Store, o Options) mcpserver.Service {
	return mcpserver.Service{
		Name:        "calendar",
		Default:     len(st.Backends) > 0,
		Tools:       []mcpserver.Tool{listCalendarsTool(st), listEventsTool(st), createEventTool(st, o)},
		Checks:      checks(st, "calendar"),
		Status:      status(st),
		ScopeFields: []string{string(scope.CalendarAccounts), string(scope.Calendars)},
	}
}

func checks(st *Store, what string) func(context.Context) []mcpserver.CheckResult {
	return func(ctx context.Context) []mcpserver.CheckResult {
		var out []mcpserver.CheckResult
		for _, b := range st.Backends {
			cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			_, err := b.Collections(cctx)
			cancel()
			r := mcpserver.CheckResult{Name: fmt.Sprintf("%s %s %q", what, b.Kind(), b.Account()), Status: "ok", Detail: "reachable, collections listed"}
			if err != nil {
				r.Status, r.Detail = "fail", err.Error()
				r.Fix = "check the url, username and password_env or password_cmd of this entry in config.toml (docs/configuration.md, \"Calendar\"), and that the server or file is reachable"
			}
			out = append(out, r)
		}
		return out
	}
}

func status(st *Store) func(context.Context) mcpserver.ServiceStatus {
	return func(context.Context) mcpserver.ServiceStatus {
		s := mcpserver.ServiceStatus{State: "ready"}
		for _, b := range st.Backends {
			detail := ""
			switch v := b.(type) {
			case *CalDAV:
				detail = v.Endpoint()
			case *ICS:
				detail = v.Location()
			}
			s.Backends = append(s.Backends, mcpserver.BackendStatus{Name: b.Account(), Kind: b.Kind(), State: "unknown", Detail: detail}) // not contacted here; Checks reach the backend
		}
		return s
	}
}

// calendarOut is one calendar of calendars_list.
type calendarOut struct {
	// Path is what calendar_name takes back.
	Path     string `json:"path"`
	Account  string `json:"account"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	ReadOnly bool   `json:"read_only,omitempty"`
}

type listCalendarsOut struct {
	Calendars []calendarOut `json:"calendars"`
	Problems  []string      `json:"problems,omitempty"`
}

// scoped lists the collections holding comp and scopes them by pair.
func scoped(ctx context.Context, st *Store, comp string, pair scope.Pair, noun string) ([]Collection, scope.ScopedRows, []string, error) {
	sc, err := scope.FromContext(ctx)
	if err != nil {
		return nil, scope.ScopedRows{}, nil, err
	}
	l, err := st.Collections(ctx, comp)
	if err != nil {
		return nil, scope.ScopedRows{}, nil, err
	}
	sr := sc.Rows(pair, Rows(l.Collections))
	sr.Noun = noun
	return l.Collections, sr, quoteAll(l.Problems), nil
}

// resolve is ScopedRows.Resolve over the ways a name may be meant (the
// escaped form a listing showed, or the raw one).
func resolve(sr scope.ScopedRows, name string) (int, error) {
	var first error
	for _, f := range output.NameForms(strings.TrimSpace(name)) {
		i, err := sr.Resolve(f)
		if err == nil {
			return i, nil
		}
		if first == nil {
			first = err
		}
	}
	return -1, first
}

func quoteAll(s []string) []string {
	for i := range s {
		s[i] = output.Name(s[i])
	}
	return s
}

func kindOf(st *Store, c Collection) string {
	for _, b := range st.Backends {
		if b.Account() == c.Account {
			return b.Kind()
		}
	}
	return ""
}

func listCalendarsTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "calendars_list", Title: "List calendars",
		Description: "List the calendars this client may read: CalDAV accounts and ICS files. Each path (Account/Name) is what calendar_name takes.",
		Toolset:     mcpserver.ToolsetCalendar, Bridged: true,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[struct{}, listCalendarsOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, listCalendarsOut, error) {
			cols, sr, problems, err := scoped(ctx, st, Events, scope.Calendar, "calendar")
			if err != nil {
				return nil, listCalendarsOut{}, err
			}
			idx, err := sr.Allowed()
			if err != nil {
				return nil, listCalendarsOut{}, err
			}
			if len(idx) == 0 {
				return nil, listCalendarsOut{}, errors.New("no calendar was found in the configured accounts and files")
			}
			out := listCalendarsOut{Calendars: make([]calendarOut, 0, len(idx)), Problems: problems}
			for _, i := range idx {
				c := cols[i]
				out.Calendars = append(out.Calendars, calendarOut{Path: output.Name(c.Path()), Account: output.Name(c.Account),
					Name: output.Name(c.Name), Kind: kindOf(st, c), ReadOnly: c.ReadOnly})
			}
			return nil, out, nil
		}
	})
}

type listEventsIn struct {
	DateFrom     string        `json:"date_from,omitempty" jsonschema:"ISO-8601 date or date-time, user's zone (default: today)"`
	DateTo       string        `json:"date_to,omitempty" jsonschema:"ISO-8601; a date counts whole (default: date_from + 7 days)"`
	CalendarName string        `json:"calendar_name,omitempty" jsonschema:"Account/Name from calendars_list (default: all in scope)"`
	Limit        coerce.Number `json:"limit,omitzero" jsonschema:"max events, 1-500 (default 100)"`
	Cursor       string        `json:"cursor,omitempty" jsonschema:"next_cursor of the last page"`
	Query        string        `json:"query,omitempty" jsonschema:"words in title, location or notes; dates then default to ±6 months"`
}

// eventOut is one occurrence. Times are in the user's time zone; an
// all-day event has dates (end = its last day).
type eventOut struct {
	Calendar    string   `json:"calendar"`
	UID         string   `json:"uid"`
	Title       string   `json:"title"`
	Start       string   `json:"start"`
	End         string   `json:"end"`
	AllDay      bool     `json:"all_day,omitempty"`
	TimeZone    string   `json:"time_zone,omitempty"`
	Recurring   bool     `json:"recurring,omitempty"`
	Location    string   `json:"location,omitempty"`
	Status      string   `json:"status,omitempty"`
	Organizer   string   `json:"organizer,omitempty"`
	Attendees   []string `json:"attendees,omitempty"`
	Description string   `json:"description,omitempty"`
}

type listEventsOut struct {
	TimeZone string          `json:"time_zone"`
	From     string          `json:"from"`
	To       string          `json:"to"`
	Events   []eventOut      `json:"events"`
	Page     mcpserver.Page  `json:"page"`
	Problems []string        `json:"problems,omitempty"`
	Hidden   *hiddenNoteJSON `json:"hidden,omitempty"`
}

// hiddenNoteJSON says that the read policy hid events, never which.
type hiddenNoteJSON struct {
	Count int    `json:"count"`
	Note  string `json:"note"`
}

func whenOut(w When, loc *time.Location, end bool) string {
	if w.AllDay() {
		if end {
			t, _ := time.Parse("2006-01-02", w.Date)
			return t.AddDate(0, 0, -1).Format("2006-01-02")
		}
		return w.Date
	}
	return w.Time.In(loc).Format(time.RFC3339)
}

func personOut(p Person) string {
	switch {
	case p.Name != "" && p.Address != "":
		return output.Name(p.Name + " <" + p.Address + ">")
	case p.Name != "":
		return output.Name(p.Name)
	}
	return output.Name(p.Address)
}

// EventOut is an occurrence as the tools show it: every third-party
// string through internal/output, the description redacted and wrapped as
// untrusted content.
func EventOut(e Event, loc *time.Location) eventOut {
	o := eventOut{
		Calendar: output.Name(e.Calendar.Path()), UID: output.Name(e.UID), Title: output.Name(e.Title),
		Start: whenOut(e.Start, loc, false), End: whenOut(e.End, loc, true), AllDay: e.Start.AllDay(),
		Recurring: e.Recurring, Location: output.Name(e.Location), Status: output.Name(e.Status),
	}
	if e.Start.TZID != "" && e.Start.TZID != loc.String() {
		o.TimeZone = output.Name(e.Start.TZID)
	}
	if e.Organizer != nil {
		o.Organizer = personOut(*e.Organizer)
	}
	for _, a := range e.Attendees {
		o.Attendees = append(o.Attendees, personOut(a))
	}
	if strings.TrimSpace(e.Description) != "" {
		o.Description = output.Wrapped(body.Body(e.Description, nil))
	}
	return o
}

func listEventsTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "calendars_list_events", Title: "List calendar events",
		Description: "Events in a window, recurrences expanded, by start; times in the user's zone, all-day events as dates (end = last day).",
		Toolset:     mcpserver.ToolsetCalendar, Bridged: true, OutputSchema: eventsSchema,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[listEventsIn, listEventsOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in listEventsIn) (*mcp.CallToolResult, listEventsOut, error) {
			limit, err := coerce.Int(in.Limit, limitSpec)
			if err != nil {
				return nil, listEventsOut{}, err
			}
			offset, err := cursor(in.Cursor)
			if err != nil {
				return nil, listEventsOut{}, err
			}
			from, to, err := Window(in.DateFrom, in.DateTo, st.Now(), st.Loc)
			if err != nil {
				return nil, listEventsOut{}, err
			}
			search := strings.TrimSpace(in.Query) != ""
			if search && strings.TrimSpace(in.DateFrom) == "" && strings.TrimSpace(in.DateTo) == "" {
				from, to = from.AddDate(0, -6, 0), from.AddDate(0, 6, 0)
			}
			cols, sr, problems, err := scoped(ctx, st, Events, scope.Calendar, "calendar")
			if err != nil {
				return nil, listEventsOut{}, err
			}
			var idx []int
			if strings.TrimSpace(in.CalendarName) != "" {
				i, err := resolve(sr, in.CalendarName)
				if err != nil {
					return nil, listEventsOut{}, err
				}
				idx = []int{i}
			} else if idx, err = sr.Allowed(); err != nil {
				return nil, listEventsOut{}, err
			}
			if len(idx) == 0 {
				return nil, listEventsOut{}, errors.New("no calendar was found in the configured accounts and files")
			}
			sel := make([]Collection, len(idx))
			for k, i := range idx {
				sel[k] = cols[i]
			}
			var res EventsResult
			if search {
				res, err = st.SearchEvents(ctx, sel, in.Query, from, to)
			} else {
				res, err = st.Events(ctx, sel, from, to)
			}
			if err != nil {
				return nil, listEventsOut{}, err
			}
			out := listEventsOut{TimeZone: st.Loc.String(), From: from.Format(time.RFC3339), To: to.Format(time.RFC3339),
				Events: []eventOut{}, Problems: append(problems, quoteAll(res.Problems)...)}
			if res.Hidden > 0 {
				out.Hidden = &hiddenNoteJSON{Count: res.Hidden, Note: "events with a person the read policy blocks are hidden"}
			}
			all := res.Events[min(offset, len(res.Events)):]
			for _, e := range all[:min(limit, len(all))] {
				out.Events = append(out.Events, EventOut(e, st.Loc))
			}
			kept, page, err := mcpserver.Cut(out.Events, 1024, func(n int) string { return strconv.Itoa(offset + n) })
			if err != nil {
				return nil, listEventsOut{}, err
			}
			if len(kept) == len(out.Events) && len(all) > limit {
				page.Truncated, page.NextCursor = true, strconv.Itoa(offset+limit)
				page.Note = fmt.Sprintf("showing %d of %d events; pass next_cursor to continue", limit, len(all))
			}
			if res.Cut {
				page.Note = strings.TrimSpace(page.Note + " A recurring event repeats too often to expand completely; ask for a shorter window.")
			}
			out.Events, out.Page = kept, page
			return nil, out, nil
		}
	})
}

func cursor(s string) (int, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, errors.New("cursor must be the next_cursor of a previous page")
	}
	return n, nil
}

type createEventIn struct {
	Title        string   `json:"title" jsonschema:"the event's title"`
	Start        string   `json:"start" jsonschema:"ISO-8601 date-time in the user's time zone, or a date for an all-day event"`
	End          string   `json:"end,omitempty" jsonschema:"ISO-8601 (default: start + 1 hour; all-day: the start date); all-day end is the last day"`
	Location     string   `json:"location,omitempty"`
	Description  string   `json:"description,omitempty"`
	CalendarName string   `json:"calendar_name,omitempty" jsonschema:"Account/Name from calendars_list (default: the only writable calendar in scope)"`
	Attendees    []string `json:"attendees,omitempty" jsonschema:"e-mail addresses to invite; the server e-mails them"`
}

type createEventOut struct {
	Created eventOut `json:"created"`
}

// maxText bounds a title, location or description the tools write.
const maxText = 8 << 10

func createEventTool(st *Store, o Options) mcpserver.Tool {
	desc := "Create an event on a CalDAV calendar and read it back. Attendees are e-mailed invitations by the server."
	open := mcpserver.Yes
	if !o.AllowExternal {
		// allow_external = false: no invitations leave, so the tool stays
		// closed world and refuses attendees (docs/security.md).
		desc = "Create an event on a CalDAV calendar and read it back. Attendees are refused here (allow_external is false)."
		open = mcpserver.No
	}
	return mcpserver.Define(mcpserver.Tool{
		Name: "calendars_create_event", Title: "Create calendar event", Description: desc,
		Toolset: mcpserver.ToolsetCalendar, Bridged: true, OutputSchema: createdSchema,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: open,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[createEventIn, createEventOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in createEventIn) (*mcp.CallToolResult, createEventOut, error) {
			ev, err := newEvent(st, in, o)
			if err != nil {
				return nil, createEventOut{}, err
			}
			cols, sr, _, err := scoped(ctx, st, Events, scope.Calendar, "calendar")
			if err != nil {
				return nil, createEventOut{}, err
			}
			c, err := target(cols, sr, in.CalendarName)
			if err != nil {
				return nil, createEventOut{}, err
			}
			b, err := st.backend(c.Account)
			if err != nil {
				return nil, createEventOut{}, err
			}
			if err := organize(ev, b); err != nil {
				return nil, createEventOut{}, err
			}
			uid := propText(ev.Children[0], ical.PropUID)
			href, err := b.Put(ctx, c, strings.TrimSuffix(uid, "@tidings")+".ics", ev, Cond{IfNoneMatch: true})
			if err != nil {
				return nil, createEventOut{}, err
			}
			back, err := b.Get(ctx, href)
			if err != nil {
				return nil, createEventOut{}, fmt.Errorf("the event was written but could not be read back: %w", err)
			}
			start, _ := Expander{Loc: st.Loc}.prop(back.Cal.Children[0], ical.PropDateTimeStart, nil)
			res, err := Expander{Loc: st.Loc}.Expand(back.Cal, start.Time.Add(-48*time.Hour), start.Time.Add(48*time.Hour))
			if err != nil || len(res.Occurrences) == 0 {
				return nil, createEventOut{}, fmt.Errorf("the event was written but reads back differently; check the calendar")
			}
			return nil, createEventOut{Created: EventOut(Event{Occurrence: res.Occurrences[0], Calendar: c}, st.Loc)}, nil
		}
	})
}

// target resolves a write's collection: the explicit name, or the
// scope's single writable collection; never a default outside the scope.
func target(cols []Collection, sr scope.ScopedRows, name string) (Collection, error) {
	if strings.TrimSpace(name) != "" {
		i, err := resolve(sr, name)
		if err != nil {
			return Collection{}, err
		}
		if cols[i].ReadOnly {
			return Collection{}, fmt.Errorf("%s is read-only (an ICS file or URL, or the Mac's Calendar store off macOS): choose a writable one from the listing", output.Name(cols[i].Path()))
		}
		return cols[i], nil
	}
	// Writable rows only: an ICS file can never be the target.
	var keep []int
	for i, c := range cols {
		if !c.ReadOnly {
			keep = append(keep, i)
		}
	}
	w := sr
	w.Rows = make([]scope.Row, len(keep))
	for k, i := range keep {
		w.Rows[k] = sr.Rows[i]
	}
	if len(w.Rows) == 0 {
		return Collection{}, fmt.Errorf("there is no writable %s here: add a [[calendar.accounts]] entry (ICS files are read-only)", sr.Noun)
	}
	k, err := w.Target("")
	if err != nil {
		return Collection{}, err
	}
	return cols[keep[k]], nil
}

// newEvent validates the arguments and builds the VCALENDAR.
func newEvent(st *Store, in createEventIn, o Options) (*ical.Calendar, error) {
	title := strings.TrimSpace(in.Title)
	switch {
	case title == "":
		return nil, errors.New("title is required")
	case len(title) > maxText || len(in.Location) > maxText || len(in.Description) > maxText:
		return nil, fmt.Errorf("title, location and description may hold at most %d KB each", maxText>>10)
	case len(in.Attendees) > 0 && !o.AllowExternal:
		return nil, errors.New("attendees are refused because allow_external is false: the server would e-mail them invitations")
	case len(in.Attendees) > 50:
		return nil, errors.New("at most 50 attendees")
	}
	start, startDate, err := ParseWhen("start", in.Start, st.Loc)
	if err != nil {
		return nil, err
	}
	var end time.Time
	if strings.TrimSpace(in.End) == "" {
		if startDate {
			end = start
		} else {
			end = start.Add(time.Hour)
		}
	} else {
		var endDate bool
		end, endDate, err = ParseWhen("end", in.End, st.Loc)
		if err != nil {
			return nil, err
		}
		if endDate != startDate {
			return nil, errors.New("start and end must both be dates (an all-day event) or both date-times")
		}
	}
	if end.Before(start) {
		return nil, errors.New("end must not be before start")
	}
	ev := ical.NewEvent()
	uid := NewUID()
	ev.Props.SetText(ical.PropUID, uid)
	ev.Props.SetDateTime(ical.PropDateTimeStamp, st.Now().UTC())
	ev.Props.SetText(ical.PropSummary, title)
	if startDate {
		ev.Props.SetDate(ical.PropDateTimeStart, start)
		ev.Props.SetDate(ical.PropDateTimeEnd, end.AddDate(0, 0, 1)) // DTEND of a date event is exclusive
	} else {
		ev.Props.SetDateTime(ical.PropDateTimeStart, start.UTC())
		ev.Props.SetDateTime(ical.PropDateTimeEnd, end.UTC())
	}
	if s := strings.TrimSpace(in.Location); s != "" {
		ev.Props.SetText(ical.PropLocation, s)
	}
	if s := strings.TrimSpace(in.Description); s != "" {
		ev.Props.SetText(ical.PropDescription, s)
	}
	seen := map[string]bool{}
	for _, a := range in.Attendees {
		addr, err := mail.ParseAddress(strings.TrimSpace(a))
		if err != nil || addr.Address != strings.TrimSpace(a) {
			return nil, fmt.Errorf("attendee %s is not a bare e-mail address such as ana@example.org", output.Name(a))
		}
		if st.Blocked != nil {
			if blocked, err := st.Blocked(addr.Address); err != nil || blocked {
				return nil, errors.New("an attendee is blocked by the read policy (or the policy cannot be loaded): remove them")
			}
		}
		if seen[strings.ToLower(addr.Address)] {
			continue // one invitation per person
		}
		seen[strings.ToLower(addr.Address)] = true
		p := ical.NewProp(ical.PropAttendee)
		p.Value = "mailto:" + addr.Address
		p.Params.Set(ical.ParamRole, "REQ-PARTICIPANT")
		p.Params.Set(ical.ParamParticipationStatus, "NEEDS-ACTION")
		p.Params.Set(ical.ParamRSVP, "TRUE")
		ev.Props.Add(p)
	}
	cal := ical.NewCalendar()
	cal.Props.SetText(ical.PropVersion, "2.0")
	cal.Props.SetText(ical.PropProductID, "-//Tidings//Calendar//EN")
	cal.Children = append(cal.Children, ev.Component)
	return cal, nil
}

// organize names the user as the ORGANIZER of an event with attendees,
// and as its chair who has accepted (RFC 5545 §3.8.4.1, §3.2.12; the
// invitees keep NEEDS-ACTION with RSVP=TRUE); the user's own address among
// the attendees is not invited. An event without attendees gets no
// organizer (it is no group-scheduled event), and an account without an
// address refuses attendees: an invitation without an organizer cannot be
// answered (RFC 6638 §3.1).
func organize(cal *ical.Calendar, b Backend) error {
	ev := cal.Children[0]
	atts := ev.Props.Values(ical.PropAttendee)
	if len(atts) == 0 {
		return nil
	}
	me := ""
	if a, ok := b.(Addresser); ok {
		me = a.Address()
	}
	if me == "" {
		return fmt.Errorf("attendees need the organizer's address: set email for calendar account %s in config.toml (docs/configuration.md, \"Calendar\")", output.Name(b.Account()))
	}
	org := ical.NewProp(ical.PropOrganizer)
	org.Value = "mailto:" + me
	ev.Props.Set(org)
	chair := ical.NewProp(ical.PropAttendee)
	chair.Value = "mailto:" + me
	chair.Params.Set(ical.ParamRole, "CHAIR")
	chair.Params.Set(ical.ParamParticipationStatus, "ACCEPTED")
	kept := []ical.Prop{*chair}
	for _, p := range atts {
		if !strings.EqualFold(strings.TrimPrefix(p.Value, "mailto:"), me) {
			kept = append(kept, p)
		}
	}
	ev.Props[ical.PropAttendee] = kept
	return nil
}

// Small output schemas (the tools/list budget, 1.5 KB per tool, as
// internal/system does): the items' fields are described in docs/tools.md.
var (
	eventsSchema = &jsonschema.Schema{
		Type:     "object",
		Required: []string{"time_zone", "from", "to", "events", "page"},
		Properties: map[string]*jsonschema.Schema{
			"time_zone": {Type: "string"}, "from": {Type: "string"}, "to": {Type: "string"},
			"events":   {Type: "array", Description: "calendar, uid, title, start, end, all_day, time_zone, recurring, location, status, organizer, attendees, description"},
			"page":     {Type: "object", Description: "returned, total, truncated, next_cursor, note"},
			"problems": {Type: "array"},
			"hidden":   {Type: "object", Description: "count hidden by the read policy"},
		},
	}
	createdSchema = &jsonschema.Schema{
		Type:       "object",
		Required:   []string{"created"},
		Properties: map[string]*jsonschema.Schema{"created": {Type: "object", Description: "the event as calendars_list_events shows it"}},
	}
	remindersSchema = &jsonschema.Schema{
		Type:     "object",
		Required: []string{"reminders", "page"},
		Properties: map[string]*jsonschema.Schema{
			"reminders": {Type: "array", Description: "list_path, uid, title, due, priority, completed, done, notes"},
			"page":      {Type: "object", Description: "returned, total, truncated, note"},
			"problems":  {Type: "array"},
		},
	}
	reminderSchema = &jsonschema.Schema{
		Type:       "object",
		Required:   []string{"reminder"},
		Properties: map[string]*jsonschema.Schema{"reminder": {Type: "object", Description: "as reminders_list shows it"}},
	}
)
