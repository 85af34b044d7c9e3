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

	"github.com/tidings-mcp/tidings/internal/config"
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
	if len(cols) != 1 || cols[0].Name != "Home" || !cols[0].ReadOnly {
		t.Fatalf("collections = %+v, want only Home (the disabled store's calendar left out), read-only", cols)
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
// file is opened read-only (a write through its connection fails).
func TestMacCalendarIsReadOnly(t *testing.T) {
	path := newAppleDB(t, appleRows(t)...)
	b := NewAppleCal("Mac", path)
	if _, err := b.Put(context.Background(), Collection{}, "x.ics", nil, Cond{}); err == nil {
		t.Error("Put succeeded")
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
