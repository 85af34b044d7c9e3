package calendar

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/send"
)

// appleSec is t in the store's unit: seconds since 2001-01-01 UTC.
func appleSec(t time.Time) float64 { return t.Sub(appleEpoch).Seconds() }

// newAppleDB builds a Calendar.sqlitedb from the real dump's DDL
// (testdata/applecal/README.md) and runs the inserts; it returns the path.
func newAppleDB(t *testing.T, inserts ...string) string {
	t.Helper()
	ddl, err := os.ReadFile(filepath.Join("testdata", "applecal", "calendars_11.2.sql"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "Calendar.sqlitedb")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range append([]string{string(ddl)}, inserts...) {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%v\n%s", err, stmt)
		}
	}
	return path
}

// appleRows is the fixture: two stores (one disabled), and events that
// pin each mapping. Dates are in March-April 2026, around the EU DST
// change of 2026-03-29.
func appleRows(t *testing.T) []string {
	berlin := mustZone(t, "Europe/Berlin")
	sec := func(tm time.Time) string { return ftoa(appleSec(tm)) }
	mon := time.Date(2026, 3, 23, 9, 0, 0, 0, berlin)       // literal date: the Monday before the EU DST change
	allDay := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)  // literal date: an all-day item stores UTC midnight
	float := time.Date(2026, 3, 12, 14, 0, 0, 0, time.UTC)  // literal date: a floating wall clock stored as if UTC
	meet := time.Date(2026, 3, 16, 10, 0, 0, 0, time.UTC)   // literal date: a meeting with people
	monthly := time.Date(2026, 1, 15, 8, 0, 0, 0, time.UTC) // literal date: every two months on the 15th
	odd := time.Date(2026, 2, 2, 8, 0, 0, 0, time.UTC)      // literal date: a series whose rule is not understood, first instance before the window
	daily := time.Date(2026, 3, 2, 7, 0, 0, 0, time.UTC)    // literal date: a daily series with a deleted and a moved day
	return []string{
		`INSERT INTO Store (ROWID, name, disabled) VALUES (1, 'iCloud', 0), (2, 'Old account', 1)`,
		`INSERT INTO Calendar (ROWID, store_id, title, UUID) VALUES (1, 1, 'Home', 'c1'), (2, 2, 'Gone', 'c2')`,
		`INSERT INTO Location (ROWID, title, address) VALUES (1, 'Office', 'Main St 1')`,
		// 1: weekly on Mondays in Berlin, three times, across DST.
		`INSERT INTO CalendarItem (ROWID, summary, start_date, end_date, start_tz, all_day, calendar_id, has_recurrences, unique_identifier, status, location_id)
		 VALUES (1, 'Standup', ` + sec(mon) + `, ` + sec(mon.Add(30*time.Minute)) + `, 'Europe/Berlin', 0, 1, 1, 'uid-standup', 1, 1)`,
		`INSERT INTO Recurrence (frequency, interval, count, specifier, owner_id) VALUES (2, 1, 3, 'D=0MO', 1)`,
		// 2: all-day, one day (inclusive 23:59:59 end).
		`INSERT INTO CalendarItem (ROWID, summary, start_date, end_date, start_tz, all_day, calendar_id, unique_identifier)
		 VALUES (2, 'Holiday', ` + sec(allDay) + `, ` + sec(allDay.Add(24*time.Hour-time.Second)) + `, '_float', 1, 1, 'uid-holiday')`,
		// 3: floating.
		`INSERT INTO CalendarItem (ROWID, summary, start_date, end_date, start_tz, all_day, calendar_id, UUID, description)
		 VALUES (3, 'Dentist', ` + sec(float) + `, ` + sec(float.Add(time.Hour)) + `, '_float', 0, 1, 'uuid-dentist', 'bring card')`,
		// 4: organizer and invitees.
		`INSERT INTO Identity (rowid, display_name) VALUES (1, 'Ann Organizer'), (2, 'Bob Guest')`,
		`INSERT INTO Participant (ROWID, entity_type, status, identity_id, owner_id, email) VALUES
		 (1, 8, 0, 1, 4, 'ann@example.org'), (2, 7, 1, 2, 4, 'mailto:bob@example.org'), (3, 7, 2, NULL, 4, 'cy@example.org'), (4, 7, 3, NULL, 4, 'dee@example.org')`,
		`INSERT INTO CalendarItem (ROWID, summary, start_date, end_date, start_tz, all_day, calendar_id, organizer_id, unique_identifier)
		 VALUES (4, 'Review', ` + sec(meet) + `, ` + sec(meet.Add(time.Hour)) + `, 'UTC', 0, 1, 1, 'uid-review')`,
		// 5: every two months on the 15th until April.
		`INSERT INTO CalendarItem (ROWID, summary, start_date, end_date, start_tz, all_day, calendar_id, has_recurrences, unique_identifier)
		 VALUES (5, 'Rent', ` + sec(monthly) + `, ` + sec(monthly.Add(time.Hour)) + `, 'UTC', 0, 1, 1, 'uid-rent')`,
		`INSERT INTO Recurrence (frequency, interval, end_date, specifier, owner_id) VALUES (3, 2, ` + sec(monthly.AddDate(0, 4, 1)) + `, 'M=15', 5)`,
		// 6: a specifier key nothing documents.
		`INSERT INTO CalendarItem (ROWID, summary, start_date, end_date, start_tz, all_day, calendar_id, has_recurrences, unique_identifier)
		 VALUES (6, 'Odd', ` + sec(odd) + `, ` + sec(odd.Add(time.Hour)) + `, 'UTC', 0, 1, 1, 'uid-odd')`,
		`INSERT INTO Recurrence (frequency, interval, specifier, owner_id) VALUES (2, 1, 'Y=100', 6)`,
		// 7: daily for five days, the 3rd deleted, the 4th moved to 09:00.
		`INSERT INTO CalendarItem (ROWID, summary, start_date, end_date, start_tz, all_day, calendar_id, has_recurrences, unique_identifier)
		 VALUES (7, 'Run', ` + sec(daily) + `, ` + sec(daily.Add(time.Hour)) + `, 'UTC', 0, 1, 1, 'uid-run')`,
		`INSERT INTO Recurrence (frequency, interval, count, owner_id) VALUES (1, 1, 5, 7)`,
		`INSERT INTO ExceptionDate (owner_id, date) VALUES (7, ` + sec(daily.AddDate(0, 0, 2)) + `)`,
		`INSERT INTO CalendarItem (ROWID, summary, start_date, end_date, start_tz, all_day, calendar_id, orig_item_id, orig_date, unique_identifier)
		 VALUES (8, 'Run late', ` + sec(daily.AddDate(0, 0, 3).Add(2*time.Hour)) + `, ` + sec(daily.AddDate(0, 0, 3).Add(3*time.Hour)) + `, 'UTC', 0, 1, 7, ` + sec(daily.AddDate(0, 0, 3)) + `, 'uid-run')`,
		// 9: in the disabled store's calendar.
		`INSERT INTO CalendarItem (ROWID, summary, start_date, end_date, start_tz, all_day, calendar_id, unique_identifier)
		 VALUES (9, 'Never shown', ` + sec(meet) + `, ` + sec(meet.Add(time.Hour)) + `, 'UTC', 0, 2, 'uid-gone')`,
		// 10: a frequency code nothing documents.
		`INSERT INTO CalendarItem (ROWID, summary, start_date, end_date, start_tz, all_day, calendar_id, has_recurrences, unique_identifier)
		 VALUES (10, 'Strange', ` + sec(meet) + `, ` + sec(meet.Add(time.Hour)) + `, 'UTC', 0, 1, 1, 'uid-strange')`,
		`INSERT INTO Recurrence (frequency, interval, owner_id) VALUES (9, 1, 10)`,
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// appleEvents reads the fixture through a Store, as the tools do.
func appleEvents(t *testing.T) (EventsResult, []Collection) {
	t.Helper()
	path := newAppleDB(t, appleRows(t)...)
	loc := mustZone(t, userZone)
	st := &Store{Loc: loc, Backends: []Backend{NewAppleCal("Mac", path)}}
	listed, err := st.Collections(context.Background(), Events)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, loc) // literal date: the fixture's window
	res, err := st.Events(context.Background(), listed.Collections, from, from.AddDate(0, 2, 0))
	if err != nil {
		t.Fatal(err)
	}
	return res, listed.Collections
}

// TestMacCalendarMapsEachColumn: every mapping of the apple-calendar
// backend, read from a database built with the real dump's DDL.
func TestMacCalendarMapsEachColumn(t *testing.T) {
	res, cols := appleEvents(t)
	if len(cols) != 1 || cols[0].Name != "Home" || cols[0].ReadOnly != !appleCalWrites {
		t.Fatalf("collections = %+v, want only Home (the disabled store's calendar left out), writable only on macOS", cols)
	}
	berlin := mustZone(t, "Europe/Berlin")
	byTitle := map[string][]Event{}
	for _, e := range res.Events {
		byTitle[e.Title] = append(byTitle[e.Title], e)
	}
	tests := []struct {
		promise string
		check   func() string
	}{
		{"a weekly rule keeps its Berlin wall clock across DST", func() string {
			ev := byTitle["Standup"]
			if len(ev) != 3 {
				return "want 3 Standups"
			}
			for _, e := range ev {
				if h := e.Start.Time.In(berlin).Hour(); h != 9 || e.Start.Time.In(berlin).Weekday() != time.Monday {
					return "a Standup is not Monday 09:00 Berlin: " + e.Start.Time.String()
				}
			}
			if ev[0].Location != "Office, Main St 1" || ev[0].Status != "CONFIRMED" {
				return "location/status = " + ev[0].Location + "/" + ev[0].Status
			}
			return ""
		}},
		{"an all-day item is one date", func() string {
			ev := byTitle["Holiday"]
			if len(ev) != 1 || ev[0].Start.Date != "2026-03-10" || ev[0].End.Date != "2026-03-11" {
				return "Holiday wrong"
			}
			return ""
		}},
		{"a floating time is the wall clock in the user's zone", func() string {
			ev := byTitle["Dentist"]
			if len(ev) != 1 || !ev[0].Start.Floating || ev[0].Start.Time.Hour() != 14 || ev[0].UID != "uuid-dentist" || ev[0].Description != "bring card" {
				return "Dentist wrong"
			}
			return ""
		}},
		{"organizer and invitees with their answers", func() string {
			ev := byTitle["Review"]
			if len(ev) != 1 || ev[0].Organizer == nil || ev[0].Organizer.Address != "ann@example.org" || ev[0].Organizer.Name != "Ann Organizer" {
				return "organizer wrong"
			}
			var got []string
			for _, a := range ev[0].Attendees {
				got = append(got, a.Address+"="+a.Name+"="+a.Status)
			}
			want := "bob@example.org=Bob Guest=ACCEPTED cy@example.org==DECLINED dee@example.org==TENTATIVE"
			if strings.Join(got, " ") != want {
				return "attendees = " + strings.Join(got, " ")
			}
			return ""
		}},
		{"interval, month day and end date", func() string {
			ev := byTitle["Rent"]
			if len(ev) != 1 || ev[0].Start.Time.UTC().Format("01-02") != "03-15" {
				return "want one Rent on 03-15 (Jan, Mar; May is past the end date and the window)"
			}
			return ""
		}},
		{"a deleted day is gone and a moved one moved", func() string {
			var got []string
			for _, e := range append(byTitle["Run"], byTitle["Run late"]...) {
				got = append(got, e.Start.Time.UTC().Format("02T15"))
			}
			if !sameSet(got, []string{"02T07", "03T07", "05T09", "06T07"}) {
				return "runs = " + strings.Join(got, " ")
			}
			return ""
		}},
		{"the disabled store's events are not read", func() string {
			if len(byTitle["Never shown"]) != 0 {
				return "disabled store read"
			}
			return ""
		}},
	}
	for _, tc := range tests {
		if msg := tc.check(); msg != "" {
			t.Errorf("%s: %s", tc.promise, msg)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

// TestMacCalendarRecurrenceNotUnderstoodIsFlagged: a rule with an
// undocumented specifier key or frequency code is not guessed: the event
// is shown once (or not, outside the window) and a problem says so, even
// when only the unexpanded series would reach the window.
func TestMacCalendarRecurrenceNotUnderstoodIsFlagged(t *testing.T) {
	res, _ := appleEvents(t)
	for _, title := range []string{"Odd", "Strange"} {
		found := false
		for _, p := range res.Problems {
			if strings.Contains(p, `"`+title+`"`) && strings.Contains(p, "does not understand") && strings.Contains(p, "shown once") {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem names %q: %q", title, res.Problems)
		}
	}
	for _, e := range res.Events {
		if e.Title == "Odd" || (e.Title == "Strange" && e.Recurring) {
			t.Errorf("%s expanded from a guessed rule: %+v", e.Title, e.Start)
		}
	}
}

// TestMacCalendarSpecifier: the documented specifier keys become BY
// parts; anything else is an error, never dropped.
func TestMacCalendarSpecifier(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"D=0MO,0WE", "BYDAY=MO,WE", ""},
		{"D=+2MO", "BYDAY=2MO", ""},
		{"D=-1FR", "BYDAY=-1FR", ""},
		{"M=1,-1", "BYMONTHDAY=1,-1", ""},
		{"O=3;D=-1SU", "BYMONTH=3;BYDAY=-1SU", ""},
		{"D=0MO,0TU,0WE,0TH,0FR;S=-1", "BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", ""},
		{"", "", ""},
		{"Y=100", "", "unknown key"},
		{"D=0XX", "", "day"},
		{"M=32", "", "M value"},
		{"O=-1", "", "O value"},
		{"garbage", "", "not KEY=values"},
	}
	for _, tc := range tests {
		got, err := appleSpecifier(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("appleSpecifier(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("appleSpecifier(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestMacCalendarProbeNamesWhatIsMissing: a file without a table or a
// column the reader uses is refused with its name, not read half.
func TestMacCalendarProbeNamesWhatIsMissing(t *testing.T) {
	tests := []struct{ drop, want string }{
		{"ALTER TABLE Recurrence DROP COLUMN specifier", "Recurrence.specifier"},
		{"DROP TABLE ExceptionDate", "no table ExceptionDate"},
		{"ALTER TABLE CalendarItem DROP COLUMN start_tz", "CalendarItem.start_tz"},
	}
	for _, tc := range tests {
		path := newAppleDB(t, tc.drop)
		_, err := NewAppleCal("Mac", path).Collections(context.Background())
		if !errors.Is(err, ErrIncompleteCalendarDB) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("after %q: err = %v, want ErrIncompleteCalendarDB naming %s", tc.drop, err, tc.want)
		}
	}
	if _, err := NewAppleCal("Mac", filepath.Join(t.TempDir(), "none.sqlitedb")).Collections(context.Background()); err == nil {
		t.Error("a missing file was read")
	}
}

// TestMacCalendarIsReadOnly: the backend never writes the store, and the
// file is opened read-only (a write through its connection fails); off
// macOS a create is refused.
func TestMacCalendarIsReadOnly(t *testing.T) {
	path := newAppleDB(t, appleRows(t)...)
	b := NewAppleCal("Mac", path)
	b.writes = false
	if _, err := b.Put(context.Background(), Collection{}, "x.ics", nil, Cond{IfNoneMatch: true}); !errors.Is(err, errAppleCalReadOnly) {
		t.Errorf("Put off macOS = %v, want the read-only refusal", err)
	}
	db, err := b.open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("DELETE FROM CalendarItem"); err == nil {
		t.Error("the store's connection could write")
	}
}

// TestMacCalendarFromConfig: a [[calendar.files]] entry of kind
// "apple-calendar" is the Mac store's backend, not an ICS file.
func TestMacCalendarFromConfig(t *testing.T) {
	cfg := &config.Config{}
	cfg.Calendar.Files = []config.CalendarFile{{Name: "Mac", Kind: config.CalendarKindApple, Path: "/x/Calendar.sqlitedb"}, {Name: "f", Path: "/f.ics"}}
	st, err := StoreFromConfig(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Backends) != 2 || st.Backends[0].Kind() != "apple-calendar" || st.Backends[1].Kind() != "ics-file" {
		t.Fatalf("backends = %v", st.Backends)
	}
}

type fakeRunner struct {
	res  send.RunResult
	err  error
	cmds []send.Command
}

func (f *fakeRunner) Run(_ context.Context, c send.Command) (send.RunResult, error) {
	f.cmds = append(f.cmds, c)
	return f.res, f.err
}

func newEventCal(t *testing.T, extra string) *ical.Calendar {
	t.Helper()
	return parseICS(t, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\nBEGIN:VEVENT\r\nUID:u1@tidings\r\n"+
		"SUMMARY:Lunch\" & do shell script \"rm -rf ~\r\nDTSTART:20260316T110000Z\r\nDTEND:20260316T120000Z\r\n"+extra+"END:VEVENT\r\nEND:VCALENDAR\r\n")
}

// TestMacCalendarCreateCommandCarriesDataInArgv: the create script is a
// constant; the calendar, title, dates (numbers in the Mac's zone, no
// locale-parsed text), all-day flag, location and notes are arguments,
// and the run is bounded.
func TestMacCalendarCreateCommandCarriesDataInArgv(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	b := NewAppleCal("Mac", "/x/Calendar.sqlitedb")
	tests := []struct {
		promise string
		ev      string
		want    []string
	}{
		{"a timed event in the Mac's zone, its title one argument whatever it holds",
			"BEGIN:VEVENT\r\nSUMMARY:Lunch\" & do shell script \"rm -rf ~\r\nLOCATION:Cafe\r\nDESCRIPTION:bring card\r\nDTSTART:20260316T110000Z\r\nDTEND:20260316T120000Z\r\nEND:VEVENT\r\n",
			[]string{"/tmp/s", "Home", `Lunch" & do shell script "rm -rf ~`, "2026 3 16 43200", "2026 3 16 46800", "0", "Cafe", "bring card"}},
		{"an all-day event is its dates at midnight",
			"BEGIN:VEVENT\r\nSUMMARY:Off\r\nDTSTART;VALUE=DATE:20260331\r\nDTEND;VALUE=DATE:20260401\r\nEND:VEVENT\r\n",
			[]string{"/tmp/s", "Home", "Off", "2026 3 31 0", "2026 4 1 0", "1", "", ""}},
		{"a time across the DST change keeps its wall clock",
			"BEGIN:VEVENT\r\nSUMMARY:Early\r\nDTSTART;TZID=Europe/Berlin:20260329T090000\r\nDTEND;TZID=Europe/Berlin:20260329T093000\r\nEND:VEVENT\r\n",
			[]string{"/tmp/s", "Home", "Early", "2026 3 29 32400", "2026 3 29 34200", "0", "", ""}},
	}
	for _, tc := range tests {
		cal := parseICS(t, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n"+tc.ev+"END:VCALENDAR\r\n")
		cmd, err := b.createCommand("/tmp/s", "Home", cal.Children[0], berlin)
		if err != nil {
			t.Fatalf("%s: %v", tc.promise, err)
		}
		if cmd.Path != "/usr/bin/osascript" || cmd.Timeout != AppleCalRunTimeout || strings.Join(cmd.Args, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: command = %s %q (timeout %s), want %q", tc.promise, cmd.Path, cmd.Args, cmd.Timeout, tc.want)
		}
	}
	if strings.Contains(createEventScript, "%") || !strings.Contains(createEventScript, "on run argv") {
		t.Error("the create script is not a constant reading argv")
	}
}

// TestMacCalendarCreateRefusesAndReadsBack: a create through Calendar.app
// returns the event Calendar stored; invitations, recurrences, edits, an
// ambiguous calendar name, a stuck or refused osascript are one sentence
// each, and a number quoted from the event's text is not taken for
// osascript's error code.
func TestMacCalendarCreateRefusesAndReadsBack(t *testing.T) {
	ctx := context.Background()
	home := Collection{Account: "Mac", Name: "Home", Href: "calendar:1"}
	tests := []struct {
		promise string
		setup   func(*AppleCal, *fakeRunner)
		cal     *ical.Calendar
		cond    Cond
		col     Collection
		want    string
	}{
		{"attendees are refused", nil, newEventCal(t, "ATTENDEE:mailto:bob@example.org\r\n"), Cond{IfNoneMatch: true}, home, "attendees"},
		{"a recurrence is refused", nil, newEventCal(t, "RRULE:FREQ=DAILY\r\n"), Cond{IfNoneMatch: true}, home, "recurring events"},
		{"an edit is refused", nil, newEventCal(t, ""), Cond{IfMatch: "x"}, home, "only given new events"},
		{"an ambiguous calendar name is refused", nil, newEventCal(t, ""), Cond{IfNoneMatch: true}, Collection{Account: "Mac", Name: "Work", Href: "calendar:3"}, "cannot tell Calendar which one"},
		{"a stuck osascript names the consent prompt", func(_ *AppleCal, f *fakeRunner) { f.res = send.RunResult{TimedOut: true} }, newEventCal(t, ""), Cond{IfNoneMatch: true}, home, "Automation"},
		{"-1743 names the Automation grant", func(_ *AppleCal, f *fakeRunner) {
			f.res = send.RunResult{ExitCode: 1, Stderr: "execution error: Not authorized to send Apple events to Calendar. (-1743)\n"}
		}, newEventCal(t, ""), Cond{IfNoneMatch: true}, home, "has not allowed Tidings to control Calendar"},
		{"a quoted (-1743) is not the code", func(_ *AppleCal, f *fakeRunner) {
			f.res = send.RunResult{ExitCode: 1, Stderr: "execution error: Can’t make \"(-1743) x\" into type date. (-1700)\n"}
		}, newEventCal(t, ""), Cond{IfNoneMatch: true}, home, "the Calendar app refused the event: execution error"},
	}
	for _, tc := range tests {
		path := newAppleDB(t, append(appleRows(t), `INSERT INTO Calendar (ROWID, store_id, title) VALUES (3, 1, 'Work'), (4, 1, 'Work')`)...)
		b := NewAppleCal("Mac", path)
		b.writes = true
		f := &fakeRunner{res: send.RunResult{Stdout: "NEW-UID\n"}}
		b.Runner = f
		if tc.setup != nil {
			tc.setup(b, f)
		}
		_, err := b.Put(ctx, tc.col, "u1.ics", tc.cal, tc.cond)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.promise, err, tc.want)
		}
		if tc.want == "the Calendar app refused the event: execution error" && strings.Contains(err.Error(), "not allowed") {
			t.Errorf("%s: a quoted number was read as the code", tc.promise)
		}
	}

	path := newAppleDB(t, appleRows(t)...)
	b := NewAppleCal("Mac", path)
	b.writes = true
	f := &fakeRunner{res: send.RunResult{Stdout: "NEW-UID\n"}}
	b.Runner = f
	href, err := b.Put(ctx, home, "u1.ics", newEventCal(t, ""), Cond{IfNoneMatch: true})
	if err != nil || len(f.cmds) != 1 || f.cmds[0].Args[1] != "Home" {
		t.Fatalf("Put = %q, %v; commands %v", href, err, f.cmds)
	}
	if _, err := os.Stat(f.cmds[0].Args[0]); err == nil {
		t.Error("the script's private copy was left behind")
	}
	// Calendar.app stores the event; the read-back finds it by its uid.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 16, 11, 0, 0, 0, time.UTC) // literal date: the event created above
	if _, err := db.Exec(`INSERT INTO CalendarItem (summary, start_date, end_date, start_tz, all_day, calendar_id, UUID, unique_identifier) VALUES ('Lunch', ?, ?, 'UTC', 0, 1, 'NEW-UID', 'ical-uid')`,
		appleSec(start), appleSec(start.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	db.Close()
	o, err := b.Get(ctx, href)
	if err != nil || propText(o.Cal.Children[0], ical.PropSummary) != "Lunch" {
		t.Fatalf("Get = %v, %v", o.Cal, err)
	}
}
