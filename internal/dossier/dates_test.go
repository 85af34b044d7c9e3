package dossier

import (
	"testing"
	"time"
)

func TestParseDue(t *testing.T) {
	pst := time.FixedZone("PST", -8*3600)
	// Monday 30 November 2026, 10:00 in the owner's zone.
	ref := time.Date(2026, 11, 30, 10, 0, 0, 0, pst)                                                    // literal date: calendar arithmetic against literal dates, clock pinned
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, pst) }        // literal date: calendar arithmetic
	at := func(m time.Month, d, h, mi int) time.Time { return time.Date(2026, m, d, h, mi, 0, 0, pst) } // literal date: calendar arithmetic
	for _, tc := range []struct {
		s         string
		start     time.Time
		end       time.Time
		precision string
	}{
		{"i'll send it tomorrow", day(12, 1), day(12, 2), "day"},
		{"will send tonight", day(11, 30), day(12, 1), "day"},
		{"can you pick up the kids thursday at 3", at(12, 3, 15, 0), at(12, 3, 16, 0), "time"},
		{"you'll have them thursday by 11", at(12, 3, 11, 0), at(12, 3, 12, 0), "time"},
		{"dinner thursday at 8", at(12, 3, 20, 0), at(12, 3, 21, 0), "time"},
		{"let's get dinner next week", day(12, 7), day(12, 14), "week"},
		{"this weekend?", day(12, 5), day(12, 7), "weekend"},
		{"see you next friday", day(12, 11), day(12, 12), "day"},
		{"see you monday? no, on mon", day(12, 7), day(12, 8), "day"},                                           // said on a Monday
		{"in january", time.Date(2027, 1, 1, 0, 0, 0, 0, pst), time.Date(2027, 2, 1, 0, 0, 0, 0, pst), "month"}, // literal date: calendar arithmetic
		{"today at 5", at(11, 30, 17, 0), at(11, 30, 18, 0), "time"},
		{"jan 19–22, staying near union square", time.Date(2027, 1, 19, 0, 0, 0, 0, pst), time.Date(2027, 1, 23, 0, 0, 0, 0, pst), "days"}, // literal date: calendar arithmetic
		{"pushed to dec 15", day(12, 15), day(12, 16), "day"},
		{"due 12/15", day(12, 15), day(12, 16), "day"},
		{"let's do the 20th", day(12, 20), day(12, 21), "day"},
		{"on the 2nd", day(12, 2), day(12, 3), "day"},
		{"in 2 days", day(12, 2), day(12, 3), "day"},
		{"in an hour", ref.Add(time.Hour), ref.Add(2 * time.Hour), "time"},
		{"call at 7:30pm", at(11, 30, 19, 30), at(11, 30, 20, 30), "time"},
		{"by noon", at(11, 30, 12, 0), at(11, 30, 13, 0), "time"},
		{"at 9", at(12, 1, 9, 0), at(12, 1, 10, 0), "time"},                                                       // 9:00 has passed today
		{"march 14–19", time.Date(2027, 3, 14, 0, 0, 0, 0, pst), time.Date(2027, 3, 20, 0, 0, 0, 0, pst), "days"}, // literal date: calendar arithmetic
		{"by friday eod", day(12, 4), day(12, 5), "day"},
	} {
		t.Run(tc.s, func(t *testing.T) {
			d := parseDue(tc.s, ref, pst)
			if d == nil {
				t.Fatalf("no date in %q", tc.s)
			}
			if !d.Start.Equal(tc.start) || !d.End.Equal(tc.end) || d.Precision != tc.precision {
				t.Errorf("got %s – %s (%s, %q), want %s – %s (%s)", d.Start, d.End, d.Precision, d.Phrase, tc.start, tc.end, tc.precision)
			}
		})
	}
	for _, s := range []string{"you owe me $40 for the tix", "4 nights, $720 total so $180 each", "call 415-555-0134", "i love you", "sun is out", "1,249.00"} {
		if d := parseDue(s, ref, pst); d != nil {
			t.Errorf("parseDue(%q) = %s (%q), want none", s, d.Start, d.Phrase)
		}
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

// TestDueGrammarKnowsTheWholeVocabulary: the due grammar reads every count
// word of the shared vocabulary (internal/dates), as the search query
// grammar does: it knew up to "six" and "a few", not "ten" or "few".
func TestDueGrammarKnowsTheWholeVocabulary(t *testing.T) {
	pst := time.FixedZone("PST", -8*3600)
	ref := time.Date(2026, 11, 30, 10, 0, 0, 0, pst)                                             // literal date: Monday, as TestParseDue
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, pst) } // literal date: calendar arithmetic
	for _, tc := range []struct {
		s     string
		start time.Time
	}{
		{"i'll send it in ten days", day(12, 10)},
		{"back in seven days", day(12, 7)},
		{"in few days", day(12, 3)},
		{"in couple of days", day(12, 2)},
		{"see you next thurs", day(12, 10)},
	} {
		d := parseDue(tc.s, ref, pst)
		if d == nil || !d.Start.Equal(tc.start) {
			t.Errorf("parseDue(%q) = %+v, want %s", tc.s, d, tc.start)
		}
	}
}
