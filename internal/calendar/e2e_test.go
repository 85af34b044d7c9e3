package calendar

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// clients starts one server of the given services and connects go-sdk
// clients to it over stdio (ServeStdio on pipes) and over HTTP.
func clients(t *testing.T, p *mcpserver.Profile, svcs ...mcpserver.Service) map[string]*mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test", Profile: p}, mcpserver.Filters{Toolsets: []string{"calendar", "reminders"}, Profile: p}, svcs...)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		_ = mcpserver.ServeStdio(ctx, srv.SDK, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	ts := httptest.NewServer(mcpserver.NewHTTPHandler(srv.SDK, mcpserver.HTTPOptions{}))
	t.Cleanup(ts.Close)
	out := map[string]*mcp.ClientSession{}
	for name, tr := range map[string]mcp.Transport{
		"stdio": &mcp.IOTransport{Reader: outR, Writer: inW},
		"http":  &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"},
	} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "calendar-test", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		out[name] = cs
	}
	return out
}

// call runs a tool and decodes its structured result into out; it
// returns the isError text ("" on success) and the result's _meta.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) (string, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return strings.Join(text, " "), res.Meta
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, b, err)
		}
	}
	return "", res.Meta
}

// eventsResult decodes any of the six tools' results.
type eventsResult struct {
	Events []eventOut      `json:"events"`
	Hidden *hiddenNoteJSON `json:"hidden"`
	Calend []calendarOut   `json:"calendars"`
	Rem    []reminderOut   `json:"reminders"`
	One    reminderOut     `json:"reminder"`
	New    eventOut        `json:"created"`
}

// radicaleSet starts Radicale with alice's Work calendar holding the set
// and her Tasks list holding one to-do, and returns the store over it.
func radicaleSet(t *testing.T) (*radicale, *Store) {
	r := startRadicale(t)
	r.mkcalendar(t, "alice", "work", "Work", "VEVENT")
	r.mkcalendar(t, "alice", "tasks", "Tasks", "VTODO")
	for uid, ics := range setObjects(t) {
		r.put(t, "alice", "/alice/work/"+strings.TrimSuffix(uid, "@set")+".ics", ics)
	}
	r.put(t, "alice", "/alice/tasks/plumber.ics", wrapCal("",
		"BEGIN:VTODO\r\nUID:plumber@set\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:Call the plumber\r\nDUE;VALUE=DATE:20260305\r\n"+
			"DESCRIPTION:Door code 4471\r\nSTATUS:NEEDS-ACTION\r\nEND:VTODO\r\n"))
	st := &Store{
		Backends: []Backend{r.backend(t, "alice", "alice")},
		Loc:      mustZone(t, userZone),
		Now:      testclock.Anchor,
		Blocked:  func(a string) (bool, error) { return strings.EqualFold(a, blockedAddr), nil },
		Self:     []string{"me@example.org"},
	}
	return r, st
}

// TestSixToolsAgainstRadicale: through real MCP clients (stdio and HTTP)
// against a real CalDAV server, the set lists as dateutil expands it,
// all-day events are dates, descriptions are redacted and wrapped, a
// blocked person's invitation is hidden, and create → list round-trips
// for events and reminders; a reminder completes after its list is
// re-read.
func TestSixToolsAgainstRadicale(t *testing.T) {
	_, st := radicaleSet(t)
	from, to, _ := setWindow(t)
	want := dateutilExpand(t, from, to)
	for transport, cs := range clients(t, nil, CalendarService(st, Options{AllowExternal: true}), RemindersService(st)) {
		t.Run(transport, func(t *testing.T) {
			var cals eventsResult
			if msg, _ := call(t, cs, "calendars_list", nil, &cals); msg != "" || len(cals.Calend) != 1 || cals.Calend[0].Path != "alice/Work" {
				t.Fatalf("calendars_list = %+v %q, want alice/Work only (a VTODO list is not a calendar)", cals.Calend, msg)
			}
			var ev eventsResult
			if msg, _ := call(t, cs, "calendars_list_events", map[string]any{"date_from": from.Format("2006-01-02"), "date_to": to.AddDate(0, 0, -1).Format("2006-01-02")}, &ev); msg != "" {
				t.Fatal(msg)
			}
			var uids []string
			var starts []time.Time
			byUID := map[string]eventOut{}
			for _, e := range ev.Events {
				byUID[e.UID] = e
				if e.AllDay {
					continue
				}
				s, err := time.Parse(time.RFC3339, e.Start)
				if err != nil {
					t.Fatalf("start %q: %v", e.Start, err)
				}
				uids, starts = append(uids, e.UID), append(starts, s)
			}
			got := startsByUID(uids, starts)
			for _, s := range set {
				if fmtList(got[s.UID]) != fmtList(want[s.UID]) {
					t.Errorf("%s:\n got %s\nwant %s (dateutil)", s.UID, fmtList(got[s.UID]), fmtList(want[s.UID]))
				}
			}
			if ski := byUID["allday@set"]; !ski.AllDay || ski.Start != "2026-03-20" || ski.End != "2026-03-22" {
				t.Errorf("all-day event = %+v, want dates 2026-03-20 to 2026-03-22", ski)
			}
			bank := byUID["secret@set"]
			if strings.Contains(bank.Description, "482913") || !strings.Contains(bank.Description, "[REDACTED-2FA]") ||
				!strings.HasPrefix(bank.Description, sanitize.OpenTag) || strings.Contains(bank.Title, "<") {
				t.Errorf("third-party text not redacted, wrapped and escaped: title %q description %q", bank.Title, bank.Description)
			}
			if _, shown := byUID["blocked@set"]; shown || ev.Hidden == nil || ev.Hidden.Count != 1 {
				t.Errorf("blocked person's invitation shown=%v hidden=%+v, want hidden and counted", shown, ev.Hidden)
			}

			title := "Dentist " + transport
			var created eventsResult
			if msg, _ := call(t, cs, "calendars_create_event", map[string]any{"title": title, "start": "2026-04-07T10:00", "location": "Praxis"}, &created); msg != "" {
				t.Fatal(msg)
			}
			if created.New.Start != "2026-04-07T10:00:00+02:00" || created.New.End != "2026-04-07T11:00:00+02:00" || created.New.Calendar != "alice/Work" {
				t.Errorf("created = %+v, want 10:00-11:00 CEST on alice/Work", created.New)
			}
			var day eventsResult
			call(t, cs, "calendars_list_events", map[string]any{"date_from": "2026-04-07", "date_to": "2026-04-07", "calendar_name": "alice/Work"}, &day)
			found := false
			for _, e := range day.Events {
				found = found || (e.Title == title && e.UID == created.New.UID)
			}
			if !found {
				t.Errorf("created event not listed on its day: %+v", day.Events)
			}

			var rem eventsResult
			call(t, cs, "reminders_list", nil, &rem)
			if len(rem.Rem) == 0 || rem.Rem[0].Title != "Call the plumber" || rem.Rem[0].Due != "2026-03-05" || strings.Contains(rem.Rem[0].Notes, "4471") {
				t.Errorf("reminders_list = %+v, want the plumber due 2026-03-05 with the door code masked", rem.Rem)
			}
			task := "Buy milk " + transport
			var one eventsResult
			if msg, _ := call(t, cs, "reminders_create", map[string]any{"title": task, "due": "2026-04-08", "priority": 1}, &one); msg != "" || one.One.Title != task || one.One.ListPath != "alice/Tasks" {
				t.Fatalf("reminders_create = %+v %q", one.One, msg)
			}
			var done eventsResult
			if msg, _ := call(t, cs, "reminders_complete", map[string]any{"title": task}, &done); msg != "" || !done.One.Done {
				t.Fatalf("reminders_complete = %+v %q", done.One, msg)
			}
			var all eventsResult
			call(t, cs, "reminders_list", map[string]any{"include_completed": true}, &all)
			completed := false
			for _, r := range all.Rem {
				completed = completed || (r.Title == task && r.Done)
			}
			if !completed {
				t.Errorf("completed reminder not listed as done: %+v", all.Rem)
			}
		})
	}
}
