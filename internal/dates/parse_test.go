package dates

import (
	"strings"
	"testing"
	"time"
)

// extract reads every phrase of a query as one filter, as the index does
// when the query asks for a time window: the intersection of their
// ranges, the text without them, and the phrases.
func extract(s string, now time.Time) (r Range, rest string, phrases []string, ok bool) {
	ps := Parse(s, now, Options{Direction: Past})
	b := []byte(s)
	for i, p := range ps {
		r = Intersect(r, p.Range, i > 0)
		phrases = append(phrases, p.Text)
		for j := p.Start; j < p.End; j++ {
			b[j] = ' '
		}
	}
	return r, string(b), phrases, len(ps) > 0
}

// TestParsePast: the query reading takes each phrase as a range counted
// back from now (moved with the parser from internal/index).
func TestParsePast(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // Monday; literal date: calendar arithmetic against literal dates, clock pinned
	d := func(s string) time.Time { t, _ := time.Parse("2006-01-02", s); return t }
	for _, c := range []struct {
		in       string
		from, to time.Time
		rest     string
	}{
		{"dinner yesterday", d("2026-11-29"), d("2026-11-30"), "dinner"},
		{"last week party", d("2026-11-23"), d("2026-11-30"), "party"},
		{"this week", d("2026-11-30"), d("2026-12-07"), ""},
		{"in march", d("2026-03-01"), d("2026-04-01"), ""},
		{"in december", d("2025-12-01"), d("2026-01-01"), ""},
		{"in march 2024", d("2024-03-01"), d("2024-04-01"), ""},
		{"last month", d("2026-10-01"), d("2026-11-01"), ""},
		{"on friday", d("2026-11-27"), d("2026-11-28"), ""},
		{"3 days ago", d("2026-11-27"), d("2026-11-28"), ""},
		{"in the last 7 days", d("2026-11-24"), time.Time{}, ""},
		{"since 2025", d("2025-01-01"), time.Time{}, ""},
		{"2026-11-02 meeting", d("2026-11-02"), d("2026-11-03"), "meeting"},
		{"last year", d("2025-01-01"), d("2026-01-01"), ""},
	} {
		r, rest, _, ok := extract(c.in, now)
		if !ok || !r.From.Equal(c.from) || !r.To.Equal(c.to) || strings.TrimSpace(strings.Join(strings.Fields(rest), " ")) != c.rest {
			t.Errorf("%q: %v %v..%v rest %q; want %v..%v rest %q", c.in, ok, r.From, r.To, rest, c.from, c.to, c.rest)
		}
	}
	for _, s := range []string{"this may be fine", "tomorrow at 3", "in 2 days", "dec 15"} {
		if _, _, phrases, ok := extract(s, now); ok {
			t.Errorf("%q read as %q: not a phrase of a query about the past", s, phrases)
		}
	}
}

// TestQueryGrammarKnowsTheWholeVocabulary: the query reading knows every
// word of the shared vocabulary — weekday abbreviations, month
// abbreviations with a year, every count word — not only the ones it used
// to list.
func TestQueryGrammarKnowsTheWholeVocabulary(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // literal date: a Monday, as TestParsePast
	d := func(s string) time.Time { t, _ := time.Parse("2006-01-02", s); return t }
	for _, c := range []struct {
		in       string
		from, to time.Time
	}{
		{"since fri", d("2026-11-27"), time.Time{}},
		{"on thurs", d("2026-11-26"), d("2026-11-27")},
		{"last tues", d("2026-11-24"), d("2026-11-25")},
		{"mar 2025", d("2025-03-01"), d("2025-04-01")},
		{"sept 2024", d("2024-09-01"), d("2024-10-01")},
		{"an hour", time.Time{}, time.Time{}}, // no unit of the query grammar: not a date
		{"a couple of days ago", d("2026-11-28"), d("2026-11-29")},
		{"a few days ago", d("2026-11-27"), d("2026-11-28")},
	} {
		r, _, phrases, ok := extract(c.in, now)
		if c.from.IsZero() && c.to.IsZero() {
			if ok {
				t.Errorf("%q read as %v", c.in, phrases)
			}
			continue
		}
		if !ok || !r.From.Equal(c.from) || !r.To.Equal(c.to) || len(phrases) != 1 || phrases[0] != c.in {
			t.Errorf("%q: %v %v..%v %q; want %v..%v, the whole phrase", c.in, ok, r.From, r.To, phrases, c.from, c.to)
		}
	}
}

// due is the due-date reading (internal/dossier's).
func due(s string, now time.Time) (Phrase, bool) {
	ps := Parse(s, now, Options{Direction: Future, Pick: FirstKind})
	if len(ps) == 0 {
		return Phrase{}, false
	}
	return ps[0], true
}

// TestParseFuture: the due reading takes the first kind of phrase a
// sentence names, counted forward from the message, with a clock time
// setting its hour (moved with the parser from internal/dossier).
func TestParseFuture(t *testing.T) {
	pst := time.FixedZone("PST", -8*3600)
	// Monday 30 November 2026, 10:00 in the owner's zone.
	ref := time.Date(2026, 11, 30, 10, 0, 0, 0, pst)                                                    // literal date: calendar arithmetic against literal dates, clock pinned
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, pst) }        // literal date: calendar arithmetic
	at := func(m time.Month, d, h, mi int) time.Time { return time.Date(2026, m, d, h, mi, 0, 0, pst) } // literal date: calendar arithmetic
	for _, tc := range []struct {
		s          string
		start, end time.Time
		precision  string
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
			p, ok := due(tc.s, ref)
			if !ok {
				t.Fatalf("no date in %q", tc.s)
			}
			if !p.Range.From.Equal(tc.start) || !p.Range.To.Equal(tc.end) || p.Precision != tc.precision {
				t.Errorf("got %s – %s (%s, %q), want %s – %s (%s)", p.Range.From, p.Range.To, p.Precision, p.Text, tc.start, tc.end, tc.precision)
			}
		})
	}
	for _, s := range []string{"you owe me $40 for the tix", "4 nights, $720 total so $180 each", "call 415-555-0134", "i love you", "sun is out", "1,249.00"} {
		if p, ok := due(s, ref); ok {
			t.Errorf("due(%q) = %s (%q), want none", s, p.Range.From, p.Text)
		}
	}
}

// TestDueGrammarKnowsTheWholeVocabulary: the due reading knows every count
// word of the shared vocabulary, as the query reading does.
func TestDueGrammarKnowsTheWholeVocabulary(t *testing.T) {
	pst := time.FixedZone("PST", -8*3600)
	ref := time.Date(2026, 11, 30, 10, 0, 0, 0, pst)                                             // literal date: Monday, as TestParseFuture
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
		if p, ok := due(tc.s, ref); !ok || !p.Range.From.Equal(tc.start) {
			t.Errorf("due(%q) = %+v, want %s", tc.s, p, tc.start)
		}
	}
}

// TestSameWordsOppositeDirections: the two readings share the words and
// count from now in opposite directions — a query's "in March" is the most
// recent March, a due date's the coming one.
func TestSameWordsOppositeDirections(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // literal date: a Monday, as TestParsePast
	d := func(s string) time.Time { t, _ := time.Parse("2006-01-02", s); return t }
	for _, c := range []struct {
		in           string
		past, future time.Time
	}{
		{"in march", d("2026-03-01"), d("2027-03-01")},
		{"in dec", d("2025-12-01"), d("2026-12-01")},
		{"on friday", d("2026-11-27"), d("2026-12-04")},
		{"on mon", d("2026-11-23"), d("2026-12-07")},
		{"this weekend", d("2026-11-28"), d("2026-12-05")},
	} {
		pp := Parse(c.in, now, Options{Direction: Past})
		fp, ok := due(c.in, now)
		if len(pp) != 1 || !pp[0].Range.From.Equal(c.past) || !ok || !fp.Range.From.Equal(c.future) {
			t.Errorf("%q: past %+v, future %+v (%v); want from %s and %s", c.in, pp, fp, ok, c.past, c.future)
		}
	}
}

// TestHintsNeverHideAMatch: a rule's literal hints only skip texts its
// pattern cannot match — every example of the tests above, and each
// phrase alone, matches the same with and without them.
func TestHintsNeverHideAMatch(t *testing.T) {
	examples := []string{
		"dinner yesterday", "2026-11-02 meeting", "since fri", "a couple of days ago", "in the last 7 days",
		"i'll send it tomorrow", "thursday at 3", "dinner thursday at 8", "this weekend?", "see you next friday",
		"on mon", "in january", "jan 19–22", "pushed to dec 15", "due 12/15", "let's do the 20th", "in 2 days",
		"in an hour", "call at 7:30pm", "by noon", "at midnight", "by friday eod", "eow", "end of the month",
		"tmrw", "3rd of june", "sept 9, 2027", "by mid-march", "before wed", "7 p.m.", "@ 4", "10:45",
	}
	for i := range grammar {
		r := &grammar[i]
		for _, s := range examples {
			want := r.rx.re.FindAllStringSubmatchIndex(s, -1)
			if got := r.rx.FindAllStringSubmatchIndex(s, -1); len(got) != len(want) {
				t.Errorf("rule %s on %q: %d matches with hints, %d without", r.name, s, len(got), len(want))
			}
		}
	}
}
