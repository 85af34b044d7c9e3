package calendar

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/emersion/go-ical"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// memory is an in-memory Backend: collections with fixed hrefs, objects
// by href, ETags counted per write.
type memory struct {
	account string
	cols    []Collection
	objs    map[string]map[string]Object // collection href → object href → object
	n       int
	puts    []string
	addr    string // the user's address on this account ("" = none)
}

func (m *memory) Address() string { return m.addr }

func newMemory(account string, cols ...Collection) *memory {
	m := &memory{account: account, objs: map[string]map[string]Object{}}
	for _, c := range cols {
		c.Account = account
		m.cols = append(m.cols, c)
		m.objs[c.Href] = map[string]Object{}
	}
	return m
}

func (m *memory) Account() string { return m.account }
func (m *memory) Kind() string    { return "caldav" }
func (m *memory) Collections(context.Context) ([]Collection, error) {
	return append([]Collection{}, m.cols...), nil
}
func (m *memory) Objects(_ context.Context, c Collection, comp string) ([]Object, error) {
	var out []Object
	for _, o := range m.objs[c.Href] {
		for _, ch := range o.Cal.Children {
			if ch.Name == comp {
				out = append(out, o)
				break
			}
		}
	}
	return out, nil
}
func (m *memory) Put(_ context.Context, c Collection, name string, cal *ical.Calendar, cond Cond) (string, error) {
	col, href := c.Href, c.Href+name
	if name == "" {
		for ch, objs := range m.objs {
			if _, ok := objs[c.Href]; ok {
				col, href = ch, c.Href
			}
		}
	}
	old, exists := m.objs[col][href]
	if (cond.IfNoneMatch && exists) || (cond.IfMatch != "" && (!exists || old.ETag != cond.IfMatch)) {
		return "", ErrPrecondition
	}
	m.n++
	m.objs[col][href] = Object{Href: href, ETag: string(rune('a' + m.n)), Cal: cal}
	m.puts = append(m.puts, href)
	return href, nil
}
func (m *memory) Get(_ context.Context, href string) (Object, error) {
	for _, objs := range m.objs {
		if o, ok := objs[href]; ok {
			return o, nil
		}
	}
	return Object{}, errors.New("no such object")
}

// scopeStore: two calendars named Work in two accounts, and one account
// holding two calendars named Home (and two lists named Errands).
func scopeStore(t *testing.T) (*Store, *memory, *memory) {
	alice := newMemory("alice",
		Collection{Name: "Work", Href: "/alice/work/", Components: []string{Events}},
		Collection{Name: "Home", Href: "/alice/home1/", Components: []string{Events}},
		Collection{Name: "Home", Href: "/alice/home2/", Components: []string{Events}},
		Collection{Name: "Errands", Href: "/alice/e1/", Components: []string{Todos}},
		Collection{Name: "Errands", Href: "/alice/e2/", Components: []string{Todos}},
		Collection{Name: "Chores", Href: "/alice/chores/", Components: []string{Todos}})
	bob := newMemory("bob",
		Collection{Name: "Work", Href: "/bob/work/", Components: []string{Events}},
		Collection{Name: "Chores", Href: "/bob/chores/", Components: []string{Todos}})
	alice.addr = "alice@example.org"
	return &Store{Backends: []Backend{alice, bob}, Loc: mustZone(t, userZone), Now: testclock.Anchor}, alice, bob
}

// TestScopeTablesForBothServices: listings show only what is in scope, an
// explicit name outside it is a violation, a value two resources carry is
// misconfigured (never half-granted), and a write without a target goes
// to the one in scope or asks — never to a default outside it.
func TestScopeTablesForBothServices(t *testing.T) {
	tests := []struct {
		name      string
		profile   *mcpserver.Profile
		tool      string
		args      map[string]any
		want      []string // listed paths, or the write's collection href
		refused   string
		violation bool
	}{
		{name: "no scope lists every calendar", tool: "calendars_list",
			want: []string{"alice/Work", "alice/Home", "alice/Home", "bob/Work"}},
		{name: "calendar_accounts AND calendars", tool: "calendars_list",
			profile: &mcpserver.Profile{CalendarAccounts: []string{"alice"}, Calendars: []string{"alice/Work", "bob/Work"}}, want: []string{"alice/Work"}},
		{name: "same name in two accounts: the path tells them apart", tool: "calendars_list",
			profile: &mcpserver.Profile{Calendars: []string{"bob/Work"}}, want: []string{"bob/Work"}},
		{name: "one name twice in one account is misconfigured", tool: "calendars_list",
			profile: &mcpserver.Profile{Calendars: []string{"alice/Home"}}, refused: `matches two calendars`},
		{name: "explicit calendar outside the scope is a violation", tool: "calendars_list_events",
			profile: &mcpserver.Profile{CalendarAccounts: []string{"bob"}}, args: map[string]any{"calendar_name": "alice/Work"},
			refused: `calendar "alice/Work" is outside this client's scope`, violation: true},
		{name: "explicit name two calendars carry is refused", tool: "calendars_list_events",
			args: map[string]any{"calendar_name": "alice/Home"}, refused: "two calendars are both named"},
		{name: "create without a target goes to the one calendar in scope", tool: "calendars_create_event",
			profile: &mcpserver.Profile{Calendars: []string{"bob/Work"}}, args: map[string]any{"title": "T", "start": "2026-04-01T10:00"}, want: []string{"/bob/work/"}},
		{name: "create without a target and no scope asks", tool: "calendars_create_event",
			args: map[string]any{"title": "T", "start": "2026-04-01T10:00"}, refused: "say which calendar to use"},
		{name: "create into a calendar outside the scope is a violation", tool: "calendars_create_event",
			profile: &mcpserver.Profile{Calendars: []string{"bob/Work"}}, args: map[string]any{"title": "T", "start": "2026-04-01T10:00", "calendar_name": "alice/Work"},
			refused: "outside this client's scope", violation: true},
		{name: "reminder lists: AND of reminder_accounts and reminder_lists", tool: "reminders_list",
			profile: &mcpserver.Profile{ReminderAccounts: []string{"bob"}, ReminderLists: []string{"bob/Chores", "alice/Chores"}}, want: []string{}},
		{name: "reminder list named twice in one account is misconfigured", tool: "reminders_list",
			profile: &mcpserver.Profile{ReminderLists: []string{"alice/Errands"}}, refused: "matches two reminder lists"},
		{name: "reminders_create goes to the one list in scope", tool: "reminders_create",
			profile: &mcpserver.Profile{ReminderLists: []string{"alice/Chores"}}, args: map[string]any{"title": "T"}, want: []string{"/alice/chores/"}},
		{name: "reminders_create into a list outside the scope is a violation", tool: "reminders_create",
			profile: &mcpserver.Profile{ReminderAccounts: []string{"alice"}}, args: map[string]any{"title": "T", "list_name": "bob/Chores"},
			refused: "outside this client's scope", violation: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, alice, bob := scopeStore(t)
			if tt.profile != nil {
				// A profile that may write and reach out, so only the
				// scope fields decide.
				tt.profile.Access, tt.profile.AllowExternal = "write", true
			}
			cs := clients(t, tt.profile, CalendarService(st, Options{AllowExternal: true}), RemindersService(st))["stdio"]
			var res eventsResult
			msg, meta := call(t, cs, tt.tool, tt.args, &res)
			if tt.refused != "" {
				if !strings.Contains(msg, tt.refused) {
					t.Fatalf("refusal %q, want it to contain %q", msg, tt.refused)
				}
				if v, _ := meta["scope_violation"].(bool); v != tt.violation {
					t.Errorf("scope_violation = %v, want %v", v, tt.violation)
				}
				if len(alice.puts)+len(bob.puts) != 0 {
					t.Errorf("a refused call wrote %v %v", alice.puts, bob.puts)
				}
				return
			}
			if msg != "" {
				t.Fatalf("refused: %s", msg)
			}
			var got []string
			switch tt.tool {
			case "calendars_list":
				for _, c := range res.Calend {
					got = append(got, c.Path)
				}
			case "reminders_list":
				got = []string{}
			default:
				got = append(append([]string{}, alice.puts...), bob.puts...)
				for i := range got {
					got[i] = got[i][:strings.LastIndex(got[i], "/")+1]
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestAttendeesFollowAllowExternal: with allow_external the create tool
// declares openWorldHint true (the server e-mails invitations); without,
// it declares false and refuses attendees before writing anything.
func TestAttendeesFollowAllowExternal(t *testing.T) {
	for _, allow := range []bool{true, false} {
		st, alice, _ := scopeStore(t)
		svc := CalendarService(st, Options{AllowExternal: allow})
		var tool mcpserver.Tool
		for _, tl := range svc.Tools {
			if tl.Name == "calendars_create_event" {
				tool = tl
			}
		}
		if got := *tool.Def().Annotations.OpenWorldHint; got != allow {
			t.Errorf("allow_external=%v: openWorldHint = %v", allow, got)
		}
		cs := clients(t, nil, svc)["stdio"]
		msg, _ := call(t, cs, "calendars_create_event", map[string]any{"title": "T", "start": "2026-04-01T10:00",
			"calendar_name": "alice/Work", "attendees": []any{"ana@example.org"}}, nil)
		if allow && msg != "" {
			t.Errorf("allow_external=true: refused %q", msg)
		}
		if !allow && (!strings.Contains(msg, "allow_external is false") || len(alice.puts) != 0) {
			t.Errorf("allow_external=false: %q, writes %v; want a refusal and no write", msg, alice.puts)
		}
	}
}

// TestCompleteRereadsTheListBeforeWriting: a reminder edited on the server
// after the first read is completed with the ETag of the re-read (If-Match
// the server's current version), and a stale ETag is refused by the
// server, never overwritten.
func TestCompleteRereadsTheListBeforeWriting(t *testing.T) {
	st, alice, _ := scopeStore(t)
	col := alice.cols[5] // alice/Chores
	todo := parseICS(t, wrapCal("", "BEGIN:VTODO\r\nUID:t1\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:Water plants\r\nEND:VTODO\r\n"))
	if _, err := alice.Put(context.Background(), col, "t1.ics", todo, Cond{IfNoneMatch: true}); err != nil {
		t.Fatal(err)
	}
	// Someone else edits it: a new ETag.
	if _, err := alice.Put(context.Background(), Collection{Href: col.Href + "t1.ics"}, "", todo, Cond{IfMatch: alice.objs[col.Href][col.Href+"t1.ics"].ETag}); err != nil {
		t.Fatal(err)
	}
	cs := clients(t, nil, RemindersService(st))["stdio"]
	var res eventsResult
	if msg, _ := call(t, cs, "reminders_complete", map[string]any{"title": "water PLANTS", "list_name": "alice/Chores"}, &res); msg != "" || !res.One.Done {
		t.Fatalf("complete = %+v %q", res.One, msg)
	}
	if _, err := alice.Put(context.Background(), Collection{Href: col.Href + "t1.ics"}, "", todo, Cond{IfMatch: "stale"}); !errors.Is(err, ErrPrecondition) {
		t.Errorf("stale If-Match: %v, want ErrPrecondition", err)
	}
}
