package calendar

import (
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-ical"
)

func parseICS(t *testing.T, s string) *ical.Calendar {
	t.Helper()
	cal, err := decode([]byte(s))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, s)
	}
	return cal
}

// setWindow is March and April 2026 in the user's zone.
func setWindow(t *testing.T) (time.Time, time.Time, *time.Location) {
	loc := mustZone(t, userZone)
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, loc) // literal date: the set's DST changes and weekday rules are in this window
	return from, from.AddDate(0, 2, 0), loc
}

// TestExpansionMatchesDateutil: every recurring series of the set, expanded
// in March-April 2026 (two DST changes, three zones, a moved and a
// cancelled instance, an EXDATE), gives the instants python-dateutil gives.
func TestExpansionMatchesDateutil(t *testing.T) {
	from, to, loc := setWindow(t)
	want := dateutilExpand(t, from, to)
	x := Expander{Loc: loc}
	var uids []string
	var starts []time.Time
	for _, s := range set {
		res, err := x.Expand(parseICS(t, s.ics(zonesICS(t))), from, to)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range res.Occurrences {
			uids, starts = append(uids, o.UID), append(starts, o.Start.Time)
		}
	}
	got := startsByUID(uids, starts)
	for _, s := range set {
		if len(want[s.UID]) < 2 {
			t.Errorf("%s: dateutil found %v in the window; the set should recur there", s.UID, want[s.UID])
		}
		if fmtList(got[s.UID]) != fmtList(want[s.UID]) {
			t.Errorf("%s:\n got %s\nwant %s (dateutil)", s.UID, fmtList(got[s.UID]), fmtList(want[s.UID]))
		}
	}
}

// TestExpansionPromises pins each rule of expand.go on one small object.
func TestExpansionPromises(t *testing.T) {
	from, to, loc := setWindow(t)
	ev := func(lines string) string {
		return wrapCal(zonesICS(t), "BEGIN:VEVENT\r\nUID:x\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:X\r\n"+lines+"END:VEVENT\r\n")
	}
	tests := []struct {
		name string
		ics  string
		want []string // start/end as the tools show them, in the user's zone
	}{
		{"all-day events are dates, end the last day", ev("DTSTART;VALUE=DATE:20260320\r\nDTEND;VALUE=DATE:20260323\r\n"),
			[]string{"2026-03-20/2026-03-22"}},
		{"an all-day event without DTEND lasts one day", ev("DTSTART;VALUE=DATE:20260401\r\n"), []string{"2026-04-01/2026-04-01"}},
		{"a weekly zoned time keeps its wall clock across DST", ev("DTSTART;TZID=Europe/Berlin:20260323T090000\r\nDURATION:PT1H\r\nRRULE:FREQ=WEEKLY;COUNT=2\r\n"),
			[]string{"2026-03-23T09:00:00+01:00/2026-03-23T10:00:00+01:00", "2026-03-30T09:00:00+02:00/2026-03-30T10:00:00+02:00"}},
		{"another zone is shown in the user's", ev("DTSTART;TZID=America/New_York:20260310T183000\r\nDURATION:PT1H\r\n"),
			[]string{"2026-03-10T23:30:00+01:00/2026-03-11T00:30:00+01:00"}},
		{"a TZID resolves through VTIMEZONE X-LIC-LOCATION", ev("DTSTART;TZID=Tokyo Standard Time:20260402T080000\r\nDURATION:PT1H\r\n"),
			[]string{"2026-04-02T01:00:00+02:00/2026-04-02T02:00:00+02:00"}},
		{"a floating time is read in the user's zone", ev("DTSTART:20260401T070000\r\nDTEND:20260401T080000\r\n"),
			[]string{"2026-04-01T07:00:00+02:00/2026-04-01T08:00:00+02:00"}},
		{"RDATE adds and comma-separated EXDATE removes", ev("DTSTART:20260401T070000Z\r\nRRULE:FREQ=DAILY;COUNT=3\r\nEXDATE:20260402T070000Z,20260403T070000Z\r\nRDATE:20260410T070000Z\r\n"),
			[]string{"2026-04-01T09:00:00+02:00/2026-04-01T09:00:00+02:00", "2026-04-10T09:00:00+02:00/2026-04-10T09:00:00+02:00"}},
		{"an RDATE-only series includes DTSTART", ev("DTSTART:20260401T070000Z\r\nRDATE:20260405T070000Z\r\n"),
			[]string{"2026-04-01T09:00:00+02:00/2026-04-01T09:00:00+02:00", "2026-04-05T09:00:00+02:00/2026-04-05T09:00:00+02:00"}},
		{"a cancelled series shows nothing", ev("DTSTART:20260401T070000Z\r\nSTATUS:CANCELLED\r\n"), nil},
		{"outside the window shows nothing", ev("DTSTART:20260601T070000Z\r\n"), nil},
		{"a date series' UNTIL date is included", ev("DTSTART;VALUE=DATE:20260401\r\nRRULE:FREQ=DAILY;UNTIL=20260402\r\n"),
			[]string{"2026-04-01/2026-04-01", "2026-04-02/2026-04-02"}},
		{"an override moved into the window shows, its instance does not", wrapCal("",
			"BEGIN:VEVENT\r\nUID:m\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:M\r\nDTSTART:20260225T100000Z\r\nRRULE:FREQ=DAILY;COUNT=2\r\nEND:VEVENT\r\n"+
				"BEGIN:VEVENT\r\nUID:m\r\nDTSTAMP:20260101T000000Z\r\nRECURRENCE-ID:20260226T100000Z\r\nDTSTART:20260302T100000Z\r\nEND:VEVENT\r\n"),
			[]string{"2026-03-02T11:00:00+01:00/2026-03-02T11:00:00+01:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Expander{Loc: loc}.Expand(parseICS(t, tt.ics), from, to)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range res.Occurrences {
				e := EventOut(Event{Occurrence: o}, loc)
				got = append(got, e.Start+"/"+e.End)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

// TestExpansionIsBounded: a rule that repeats every second since 1990
// stops at maxSteps and says so instead of running for minutes.
func TestExpansionIsBounded(t *testing.T) {
	from, to, loc := setWindow(t)
	cal := parseICS(t, wrapCal("", "BEGIN:VEVENT\r\nUID:s\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:19900101T000000Z\r\nRRULE:FREQ=SECONDLY\r\nEND:VEVENT\r\n"))
	res, err := Expander{Loc: loc}.Expand(cal, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cut || len(res.Occurrences) != 0 {
		t.Errorf("Cut = %v with %d occurrences, want a cut and none", res.Cut, len(res.Occurrences))
	}
}
