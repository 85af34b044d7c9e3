package calendar

import (
	"context"
	"strings"
	"testing"

	"github.com/emersion/go-ical"
)

// created returns the VEVENT the last write of m stored.
func created(t *testing.T, m *memory) *ical.Component {
	t.Helper()
	if len(m.puts) == 0 {
		t.Fatal("nothing was written")
	}
	o, err := m.Get(context.Background(), m.puts[len(m.puts)-1])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range o.Cal.Children {
		if c.Name == ical.CompEvent {
			return c
		}
	}
	t.Fatal("no VEVENT written")
	return nil
}

// people renders ORGANIZER and every ATTENDEE with the parameters that
// matter, sorted as written.
func people(c *ical.Component) []string {
	var out []string
	if p := c.Props.Get(ical.PropOrganizer); p != nil {
		out = append(out, "ORGANIZER "+p.Value)
	}
	for _, p := range c.Props.Values(ical.PropAttendee) {
		out = append(out, strings.Join([]string{"ATTENDEE", p.Value, p.Params.Get(ical.ParamRole),
			p.Params.Get(ical.ParamParticipationStatus), p.Params.Get(ical.ParamRSVP)}, " "))
	}
	return out
}

// TestCreatedEventsHaveASaneOrganizer: an event created with attendees
// names the user as ORGANIZER (the account's email, else a username that
// is an address) and as the accepted chair; each invitee appears once,
// needing action with RSVP requested; the user's own address among the
// attendees is not invited again; an account with no address refuses
// attendees rather than write an invitation with no organizer; an event
// without attendees has no organizer.
func TestCreatedEventsHaveASaneOrganizer(t *testing.T) {
	for _, c := range []struct {
		name      string
		addr      string
		attendees []any
		want      []string
		refused   string
	}{
		{"attendees: the user organizes and chairs", "alice@example.org", []any{"ana@example.org", "bo@example.org"}, []string{
			"ORGANIZER mailto:alice@example.org",
			"ATTENDEE mailto:alice@example.org CHAIR ACCEPTED ",
			"ATTENDEE mailto:ana@example.org REQ-PARTICIPANT NEEDS-ACTION TRUE",
			"ATTENDEE mailto:bo@example.org REQ-PARTICIPANT NEEDS-ACTION TRUE",
		}, ""},
		{"an attendee twice and the user among them", "alice@example.org", []any{"ana@example.org", "ANA@example.org", "Alice@Example.org"}, []string{
			"ORGANIZER mailto:alice@example.org",
			"ATTENDEE mailto:alice@example.org CHAIR ACCEPTED ",
			"ATTENDEE mailto:ana@example.org REQ-PARTICIPANT NEEDS-ACTION TRUE",
		}, ""},
		{"no attendees: no organizer", "alice@example.org", nil, nil, ""},
		{"an account without an address refuses attendees", "", []any{"ana@example.org"}, nil, "email"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, alice, _ := scopeStore(t)
			alice.addr = c.addr
			cs := clients(t, nil, CalendarService(st, Options{AllowExternal: true}))["stdio"]
			args := map[string]any{"title": "Planning", "start": "2026-04-01T10:00", "calendar_name": "alice/Work"}
			if c.attendees != nil {
				args["attendees"] = c.attendees
			}
			msg, _ := call(t, cs, "calendars_create_event", args, nil)
			if c.refused != "" {
				if !strings.Contains(msg, c.refused) || len(alice.puts) != 0 {
					t.Fatalf("= %q, writes %v; want a refusal naming %q and no write", msg, alice.puts, c.refused)
				}
				return
			}
			if msg != "" {
				t.Fatal(msg)
			}
			if got := people(created(t, alice)); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("people\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestCalDAVAddressIsTheUsersOwn: the organizer address of a CalDAV
// account is its configured email, else its username when that is a bare
// address, else none.
func TestCalDAVAddressIsTheUsersOwn(t *testing.T) {
	for _, c := range []struct{ email, username, want string }{
		{"me@example.org", "me", "me@example.org"},
		{"", "me@example.org", "me@example.org"},
		{"", "alice", ""},
		{"", "", ""},
	} {
		d, err := NewCalDAV(DAVConfig{Account: "a", URL: "http://127.0.0.1:1/", Username: c.username, Email: c.email})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Address(); got != c.want {
			t.Errorf("email %q username %q: Address = %q, want %q", c.email, c.username, got, c.want)
		}
	}
}
