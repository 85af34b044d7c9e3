package dossier

import (
	"testing"
	"time"
)

// TestParseDueReadsForwardInTheOwnersZone: a due date is read with
// internal/dates' future reading (its grammar tests are there) against
// the message's time in the owner's zone: "tomorrow" said at 20:00 PST is
// the PST tomorrow, though it is already that day in UTC.
func TestParseDueReadsForwardInTheOwnersZone(t *testing.T) {
	pst := time.FixedZone("PST", -8*3600)
	ref := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)                                          // literal date: Monday 30 November 20:00 PST, calendar arithmetic
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, pst) } // literal date: calendar arithmetic
	for _, tc := range []struct {
		s, phrase, precision string
		start, end           time.Time
	}{
		{"i'll send it tomorrow", "tomorrow", "day", day(12, 1), day(12, 2)},
		{"in march", "in march", "month", day(3, 1).AddDate(1, 0, 0), day(4, 1).AddDate(1, 0, 0)},
		{"thursday at 3", "thursday at 3", "time", day(12, 3).Add(15 * time.Hour), day(12, 3).Add(16 * time.Hour)},
	} {
		d := parseDue(tc.s, ref, pst)
		if d == nil || d.Phrase != tc.phrase || d.Precision != tc.precision || !d.Start.Equal(tc.start) || !d.End.Equal(tc.end) {
			t.Errorf("parseDue(%q) = %+v, want %q %s %s–%s", tc.s, d, tc.phrase, tc.precision, tc.start, tc.end)
		}
	}
	if d := parseDue("i love you", ref, pst); d != nil {
		t.Errorf("parseDue(%q) = %+v, want none", "i love you", d)
	}
}

func TestParseAmount(t *testing.T) {
	for s, want := range map[string]int64{
		"you owe me $40": 4000, "$1,249.00 purchase": 124900, "venmo me $18.5": 1850, "20 bucks": 2000, "€12": 1200,
		"£5.99": 599, "40 dollars": 4000,
	} {
		a := parseAmount(s)
		if a == nil || a.Cents != want {
			t.Errorf("parseAmount(%q) = %+v, want %d cents", s, a, want)
		}
	}
	if a := parseAmount("see you at 7"); a != nil {
		t.Errorf("amount in a time: %+v", a)
	}
}
