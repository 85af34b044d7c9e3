package calendar

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/scope"
)

// The Reminders service (docs/tools.md, "Reminders"): the VTODO
// collections of [[calendar.accounts]] are the reminder lists (and an ICS
// file's to-dos a read-only one): reminders_list, reminders_create,
// reminders_complete.

// NewReminders builds the Reminders service.
func NewReminders(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	st, err := StoreFromConfig(env.Config, env.Now)
	if err != nil {
		return mcpserver.Service{}, err
	}
	svc := RemindersService(st)
	if len(env.Config.Calendar.Accounts) == 0 && len(env.Config.Calendar.Files) == 0 {
		svc.Unavailable = "no [[calendar.accounts]] or [[calendar.files]] in config.toml"
	}
	return svc, nil
}

// RemindersService is the Reminders service over st.
func RemindersService(st *Store) mcpserver.Service {
	return mcpserver.Service{
		Name:        "reminders",
		Default:     len(st.Backends) > 0,
		Tools:       []mcpserver.Tool{listRemindersTool(st), createReminderTool(st), completeReminderTool(st)},
		Checks:      checks(st, "reminders"),
		Status:      status(st),
		ScopeFields: []string{string(scope.ReminderAccounts), string(scope.ReminderLists)},
	}
}

var prioritySpec = coerce.IntSpec{Name: "priority", Default: 0, Min: 0, Max: 9}

type listRemindersIn struct {
	ListName         string        `json:"list_name,omitempty" jsonschema:"Account/Name of a list (default: every list in scope)"`
	IncludeCompleted bool          `json:"include_completed,omitempty"`
	Limit            coerce.Number `json:"limit,omitzero" jsonschema:"maximum reminders, 1-500 (default 100)"`
	Query            string        `json:"query,omitempty" jsonschema:"words to find in titles and notes"`
}

// reminderOut is one to-do. ListPath is what list_name takes back.
type reminderOut struct {
	ListPath  string `json:"list_path"`
	UID       string `json:"uid"`
	Title     string `json:"title"`
	Due       string `json:"due,omitempty"`
	Priority  int    `json:"priority,omitempty"`
	Completed string `json:"completed,omitempty"`
	Done      bool   `json:"done,omitempty"`
	Notes     string `json:"notes,omitempty"`
}

type listRemindersOut struct {
	Reminders []reminderOut  `json:"reminders"`
	Page      mcpserver.Page `json:"page"`
	Problems  []string       `json:"problems,omitempty"`
}

func reminderOf(t TodoItem, loc *time.Location) reminderOut {
	r := reminderOut{ListPath: output.Name(t.List.Path()), UID: output.Name(t.UID), Title: output.Name(t.Title),
		Priority: t.Priority, Completed: t.Completed, Done: t.Done()}
	if t.Due != nil {
		r.Due = whenOut(*t.Due, loc, false)
	}
	if strings.TrimSpace(t.Description) != "" {
		r.Notes = output.Wrapped(body.Body(t.Description, nil))
	}
	return r
}

// lists resolves the lists a call reaches: the explicit one, or all in
// scope.
func lists(ctx context.Context, st *Store, name string) ([]Collection, scope.ScopedRows, []int, []string, error) {
	cols, sr, problems, err := scoped(ctx, st, Todos, scope.Reminders, "reminder list")
	if err != nil {
		return nil, sr, nil, nil, err
	}
	if strings.TrimSpace(name) != "" {
		i, err := resolve(sr, name)
		if err != nil {
			return nil, sr, nil, nil, err
		}
		return cols, sr, []int{i}, problems, nil
	}
	idx, err := sr.Allowed()
	if err != nil {
		return nil, sr, nil, nil, err
	}
	if len(idx) == 0 {
		return nil, sr, nil, nil, errors.New("no reminder list was found in the configured accounts and files")
	}
	return cols, sr, idx, problems, nil
}

func pick(cols []Collection, idx []int) []Collection {
	out := make([]Collection, len(idx))
	for k, i := range idx {
		out[k] = cols[i]
	}
	return out
}

func listRemindersTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "reminders_list", Title: "List reminders",
		Description: "List reminders (CalDAV to-dos) in the lists this client may read, open ones first by due date. Each has the list_path that list_name takes.",
		Toolset:     mcpserver.ToolsetReminders, Bridged: true, OutputSchema: remindersSchema,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[listRemindersIn, listRemindersOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in listRemindersIn) (*mcp.CallToolResult, listRemindersOut, error) {
			limit, err := coerce.Int(in.Limit, limitSpec)
			if err != nil {
				return nil, listRemindersOut{}, err
			}
			cols, _, idx, problems, err := lists(ctx, st, in.ListName)
			if err != nil {
				return nil, listRemindersOut{}, err
			}
			var items []TodoItem
			var more []string
			if strings.TrimSpace(in.Query) != "" {
				items, more, err = st.SearchTodos(ctx, pick(cols, idx), in.Query)
			} else {
				items, more, err = st.Todos(ctx, pick(cols, idx))
			}
			if err != nil {
				return nil, listRemindersOut{}, err
			}
			sortTodos(items)
			out := listRemindersOut{Reminders: []reminderOut{}, Problems: append(problems, quoteAll(more)...)}
			total := 0
			for _, t := range items {
				if t.Done() && !in.IncludeCompleted {
					continue
				}
				total++
				if len(out.Reminders) < limit {
					out.Reminders = append(out.Reminders, reminderOf(t, st.Loc))
				}
			}
			kept, page, err := mcpserver.Cut(out.Reminders, 1024, nil)
			if err != nil {
				return nil, listRemindersOut{}, err
			}
			if total > len(kept) && !page.Truncated {
				page.Truncated, page.Total = true, total
				page.Note = fmt.Sprintf("showing %d of %d reminders; pass a larger limit or a list_name", len(kept), total)
			}
			out.Reminders, out.Page = kept, page
			return nil, out, nil
		}
	})
}

// sortTodos puts open to-dos first, by due date (none last), then title.
func sortTodos(items []TodoItem) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.Done() != b.Done() {
			return !a.Done()
		}
		if (a.Due == nil) != (b.Due == nil) {
			return a.Due != nil
		}
		if a.Due != nil && !a.Due.Time.Equal(b.Due.Time) {
			return a.Due.Time.Before(b.Due.Time)
		}
		return a.Title < b.Title
	})
}

type createReminderIn struct {
	Title    string        `json:"title"`
	ListName string        `json:"list_name,omitempty" jsonschema:"Account/Name of a list (default: the only writable list in scope)"`
	Due      string        `json:"due,omitempty" jsonschema:"ISO-8601 date or date-time in the user's time zone"`
	Notes    string        `json:"notes,omitempty"`
	Priority coerce.Number `json:"priority,omitzero" jsonschema:"1 (highest) to 9, 0 = none"`
}

type reminderResult struct {
	Reminder reminderOut `json:"reminder"`
}

func createReminderTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "reminders_create", Title: "Create reminder",
		Description: "Create a reminder (a CalDAV to-do) in a list and read it back.",
		Toolset:     mcpserver.ToolsetReminders, Bridged: true, OutputSchema: reminderSchema,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[createReminderIn, reminderResult] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in createReminderIn) (*mcp.CallToolResult, reminderResult, error) {
			title := strings.TrimSpace(in.Title)
			if title == "" {
				return nil, reminderResult{}, errors.New("title is required")
			}
			if len(title) > maxText || len(in.Notes) > maxText {
				return nil, reminderResult{}, fmt.Errorf("title and notes may hold at most %d KB each", maxText>>10)
			}
			prio, err := coerce.Int(in.Priority, prioritySpec)
			if err != nil {
				return nil, reminderResult{}, err
			}
			todo := ical.NewComponent(ical.CompToDo)
			uid := NewUID()
			todo.Props.SetText(ical.PropUID, uid)
			todo.Props.SetDateTime(ical.PropDateTimeStamp, st.Now().UTC())
			todo.Props.SetText(ical.PropSummary, title)
			todo.Props.SetText(ical.PropStatus, "NEEDS-ACTION")
			if strings.TrimSpace(in.Due) != "" {
				due, date, err := ParseWhen("due", in.Due, st.Loc)
				if err != nil {
					return nil, reminderResult{}, err
				}
				if date {
					todo.Props.SetDate(ical.PropDue, due)
				} else {
					todo.Props.SetDateTime(ical.PropDue, due.UTC())
				}
			}
			if s := strings.TrimSpace(in.Notes); s != "" {
				todo.Props.SetText(ical.PropDescription, s)
			}
			if prio > 0 {
				p := ical.NewProp(ical.PropPriority)
				p.Value = strconv.Itoa(prio)
				todo.Props.Set(p)
			}
			cols, sr, _, err := scoped(ctx, st, Todos, scope.Reminders, "reminder list")
			if err != nil {
				return nil, reminderResult{}, err
			}
			c, err := target(cols, sr, in.ListName)
			if err != nil {
				return nil, reminderResult{}, err
			}
			cal := ical.NewCalendar()
			cal.Props.SetText(ical.PropVersion, "2.0")
			cal.Props.SetText(ical.PropProductID, "-//Tidings//Reminders//EN")
			cal.Children = append(cal.Children, todo)
			b, err := st.backend(c.Account)
			if err != nil {
				return nil, reminderResult{}, err
			}
			href, err := b.Put(ctx, c, strings.TrimSuffix(uid, "@tidings")+".ics", cal, Cond{IfNoneMatch: true})
			if err != nil {
				return nil, reminderResult{}, err
			}
			return readBack(ctx, st, b, c, href, uid, false)
		}
	})
}

// readBack reads a written to-do and checks it says what was written.
func readBack(ctx context.Context, st *Store, b Backend, c Collection, href, uid string, wantDone bool) (*mcp.CallToolResult, reminderResult, error) {
	back, err := b.Get(ctx, href)
	if err != nil {
		return nil, reminderResult{}, fmt.Errorf("the reminder was written but could not be read back: %w", err)
	}
	for _, t := range (Expander{Loc: st.Loc}).Todos(back.Cal) {
		if t.UID == uid && t.Done() == wantDone {
			return nil, reminderResult{Reminder: reminderOf(TodoItem{Todo: t, List: c, Href: back.Href, ETag: back.ETag}, st.Loc)}, nil
		}
	}
	return nil, reminderResult{}, errors.New("the reminder was written but reads back differently; check the list")
}

type completeReminderIn struct {
	UID      string `json:"uid,omitempty" jsonschema:"the reminder's uid from reminders_list (preferred)"`
	Title    string `json:"title,omitempty" jsonschema:"or its exact title, when only one open reminder in scope has it"`
	ListName string `json:"list_name,omitempty" jsonschema:"Account/Name of its list (default: every list in scope)"`
}

func completeReminderTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "reminders_complete", Title: "Complete reminder",
		Description: "Mark one open reminder completed, found by uid (or an exact title) in the lists in scope; its list is read again just before the write.",
		Toolset:     mcpserver.ToolsetReminders, Bridged: true, OutputSchema: reminderSchema,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[completeReminderIn, reminderResult] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in completeReminderIn) (*mcp.CallToolResult, reminderResult, error) {
			uid, title := strings.TrimSpace(in.UID), strings.TrimSpace(in.Title)
			if (uid == "") == (title == "") {
				return nil, reminderResult{}, errors.New("give uid or title (one of them)")
			}
			cols, sr, idx, _, err := lists(ctx, st, in.ListName)
			if err != nil {
				return nil, reminderResult{}, err
			}
			items, _, err := st.Todos(ctx, pick(cols, idx))
			if err != nil {
				return nil, reminderResult{}, err
			}
			hits := matchTodos(items, uid, title)
			if len(hits) == 0 {
				// Only a miss looks at every list, solely to tell "outside
				// your scope" from "there is none"; the refusal never says
				// where it is.
				if allowed, err := sr.Allowed(); err == nil {
					if in, _, _ := st.Todos(ctx, pick(cols, allowed)); len(matchTodos(in, uid, title)) > 0 {
						return nil, reminderResult{}, errors.New("no open reminder with that uid or title is in the list named")
					}
				}
				if all, _, _ := st.Todos(ctx, cols); len(matchTodos(all, uid, title)) > 0 {
					return nil, reminderResult{}, &scope.Error{Decision: scope.Violation, Message: "that reminder is outside this client's scope"}
				}
				return nil, reminderResult{}, errors.New("no open reminder has that uid or title")
			}
			if len(hits) > 1 {
				var uids []string
				for _, h := range hits[:min(len(hits), 10)] {
					uids = append(uids, fmt.Sprintf("%s (%s)", output.Name(h.UID), output.Name(h.List.Path())))
				}
				return nil, reminderResult{}, fmt.Errorf("%d open reminders have that title: pass uid, one of %s", len(hits), strings.Join(uids, ", "))
			}
			h := hits[0]
			if h.List.ReadOnly {
				return nil, reminderResult{}, fmt.Errorf("%s is a read-only ICS file or URL", output.Name(h.List.Path()))
			}
			b, err := st.backend(h.List.Account)
			if err != nil {
				return nil, reminderResult{}, err
			}
			// Re-read the list just before writing: the object, its ETag and
			// its list are the server's now, not the first read's.
			fresh, err := b.Objects(ctx, h.List, Todos)
			if err != nil {
				return nil, reminderResult{}, err
			}
			var obj *Object
			for i := range fresh {
				for _, t := range (Expander{Loc: st.Loc}).Todos(fresh[i].Cal) {
					if t.UID == h.UID {
						obj = &fresh[i]
					}
				}
			}
			if obj == nil {
				return nil, reminderResult{}, errors.New("the reminder disappeared from its list before it could be completed")
			}
			now := st.Now().UTC()
			for _, c := range obj.Cal.Children {
				if c.Name != ical.CompToDo || propText(c, ical.PropUID) != h.UID {
					continue
				}
				c.Props.SetText(ical.PropStatus, "COMPLETED")
				c.Props.SetDateTime(ical.PropCompleted, now)
				c.Props.SetDateTime(ical.PropDateTimeStamp, now)
				c.Props.SetDateTime(ical.PropLastModified, now)
				p := ical.NewProp(ical.PropPercentComplete)
				p.Value = "100"
				c.Props.Set(p)
			}
			at := h.List
			at.Href = obj.Href
			href, err := b.Put(ctx, at, "", obj.Cal, Cond{IfMatch: obj.ETag})
			if err != nil {
				return nil, reminderResult{}, err
			}
			return readBack(ctx, st, b, h.List, href, h.UID, true)
		}
	})
}

// matchTodos finds open to-dos by exact uid or folded title.
func matchTodos(items []TodoItem, uid, title string) []TodoItem {
	var out []TodoItem
	forms := output.NameForms(title)
	for _, t := range items {
		if t.Done() {
			continue
		}
		if uid != "" {
			for _, f := range output.NameForms(uid) {
				if t.UID == f {
					out = append(out, t)
					break
				}
			}
			continue
		}
		for _, f := range forms {
			if scope.Fold(t.Title) == scope.Fold(f) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}
