package calendar

import (
	"strings"
	"testing"
	"time"
)

// vtz renders a VTIMEZONE with a STANDARD and a DAYLIGHT observance.
func vtz(tzid, std, dst, stdStart, stdRule, dstStart, dstRule string) string {
	return "BEGIN:VTIMEZONE\r\nTZID:" + tzid + "\r\n" +
		"BEGIN:STANDARD\r\nDTSTART:" + stdStart + "\r\nTZOFFSETFROM:" + dst + "\r\nTZOFFSETTO:" + std + "\r\nRRULE:" + stdRule + "\r\nEND:STANDARD\r\n" +
		"BEGIN:DAYLIGHT\r\nDTSTART:" + dstStart + "\r\nTZOFFSETFROM:" + std + "\r\nTZOFFSETTO:" + dst + "\r\nRRULE:" + dstRule + "\r\nEND:DAYLIGHT\r\n" +
		"END:VTIMEZONE\r\n"
}

// weekly is a weekly 09:00 series in tzid, 4 weeks from 2026-03-16
// (across the EU change on 2026-03-29 and the US one on 2026-03-08 is
// before it).
func weekly(tzid string) string {
	return "BEGIN:VEVENT\r\nUID:w@tz\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:Weekly\r\n" +
		"DTSTART;TZID=" + tzid + ":20260316T090000\r\nDURATION:PT1H\r\nRRULE:FREQ=WEEKLY;COUNT=4\r\nEND:VEVENT\r\n"
}

// TestCustomVTimezonesAreHonoured: a TZID that is no IANA name is read in
// the zone its VTIMEZONE defines (or, for a Windows name, the CLDR zone),
// so a weekly 09:00 across that zone's DST change stays 09:00 local and
// moves by the zone's offsets in UTC — not read in the user's zone.
func TestCustomVTimezonesAreHonoured(t *testing.T) {
	outlook := vtz("W. Europe Standard Time", "+0100", "+0200",
		"16010101T030000", "FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10", "16010101T020000", "FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3")
	// A made-up zone: +05:30 standard, +06:30 from the fourth Sunday of
	// March (2026-03-22), a week before the EU change.
	custom := vtz("Custom/Zone", "+0530", "+0630",
		"19701025T030000", "FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10", "19700322T020000", "FREQ=YEARLY;BYDAY=4SU;BYMONTH=3")
	// The same rules as Europe/Berlin under a name nothing maps.
	berlinLike := vtz("Office Time", "+0100", "+0200",
		"19701025T030000", "FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10", "19700329T020000", "FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3")
	// Observances given by RDATE alone.
	rdates := "BEGIN:VTIMEZONE\r\nTZID:Rdate Zone\r\n" +
		"BEGIN:STANDARD\r\nDTSTART:20251026T030000\r\nTZOFFSETFROM:-0300\r\nTZOFFSETTO:-0400\r\nRDATE:20251026T030000\r\nEND:STANDARD\r\n" +
		"BEGIN:DAYLIGHT\r\nDTSTART:20260322T020000\r\nTZOFFSETFROM:-0400\r\nTZOFFSETTO:-0300\r\nRDATE:20260322T020000\r\nEND:DAYLIGHT\r\n" +
		"END:VTIMEZONE\r\n"
	for _, c := range []struct {
		name, zones, tzid string
		want              []string // starts in UTC
		wantZone          string
	}{
		{"Outlook's Windows name with its VTIMEZONE maps to the CLDR zone", outlook, "W. Europe Standard Time",
			[]string{"2026-03-16T08:00:00Z", "2026-03-23T08:00:00Z", "2026-03-30T07:00:00Z", "2026-04-06T07:00:00Z"}, "Europe/Berlin"},
		{"a Windows name without any VTIMEZONE maps to the CLDR zone", "", "Eastern Standard Time",
			[]string{"2026-03-16T13:00:00Z", "2026-03-23T13:00:00Z", "2026-03-30T13:00:00Z", "2026-04-06T13:00:00Z"}, "America/New_York"},
		{"a made-up zone is built from its observances", custom, "Custom/Zone",
			[]string{"2026-03-16T03:30:00Z", "2026-03-23T02:30:00Z", "2026-03-30T02:30:00Z", "2026-04-06T02:30:00Z"}, "Custom/Zone"},
		{"an unmapped name with Berlin's rules behaves as Berlin", berlinLike, "Office Time",
			[]string{"2026-03-16T08:00:00Z", "2026-03-23T08:00:00Z", "2026-03-30T07:00:00Z", "2026-04-06T07:00:00Z"}, "Office Time"},
		{"observances given by RDATE", rdates, "Rdate Zone",
			[]string{"2026-03-16T13:00:00Z", "2026-03-23T12:00:00Z", "2026-03-30T12:00:00Z", "2026-04-06T12:00:00Z"}, "Rdate Zone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cal, err := decode([]byte(wrapCal(c.zones, weekly(c.tzid))))
			if err != nil {
				t.Fatal(err)
			}
			x := Expander{Loc: time.UTC}                        // the user's zone differs from every event's
			from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) // literal date: the zones' DST changes are in March 2026
			res, err := x.Expand(cal, from, from.AddDate(0, 2, 0))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range res.Occurrences {
				got = append(got, o.Start.Time.UTC().Format(time.RFC3339))
				if o.Start.Floating || o.Start.TZID != c.wantZone {
					t.Errorf("start %v: floating=%v zone %q, want zone %q", o.Start.Time, o.Start.Floating, o.Start.TZID, c.wantZone)
				}
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("starts\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

// TestBrokenVTimezoneFallsBackToTheUserZone: a VTIMEZONE without usable
// observances (a bad offset) never drops the event: it is read in the
// user's zone, as an unknown TZID always was.
func TestBrokenVTimezoneFallsBackToTheUserZone(t *testing.T) {
	bad := "BEGIN:VTIMEZONE\r\nTZID:Broken\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nTZOFFSETFROM:+99\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
	cal, err := decode([]byte(wrapCal(bad, weekly("Broken"))))
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) // literal date: the series' window
	res, err := Expander{Loc: time.UTC}.Expand(cal, from, from.AddDate(0, 2, 0))
	if err != nil || len(res.Occurrences) != 4 || !res.Occurrences[0].Start.Floating {
		t.Fatalf("= %+v %v, want 4 floating occurrences", res.Occurrences, err)
	}
}

// TestWindowsZonesLoad: every IANA name of the CLDR table loads in Go's
// zone database.
func TestWindowsZonesLoad(t *testing.T) {
	for win, iana := range windowsZones {
		if _, err := time.LoadLocation(iana); err != nil {
			t.Errorf("%s → %s: %v", win, iana, err)
		}
	}
}
