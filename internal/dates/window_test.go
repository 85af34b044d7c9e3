package dates

import (
	"strings"
	"testing"
	"time"
)

// TestExtractDates: the query grammar reads each phrase as a range counted
// back from now (moved with the parser from internal/index).
func TestExtractDates(t *testing.T) {
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
		r, rest, _, ok := Extract(c.in, now)
		if !ok || !r.From.Equal(c.from) || !r.To.Equal(c.to) || strings.TrimSpace(strings.Join(strings.Fields(rest), " ")) != c.rest {
			t.Errorf("%q: %v %v..%v rest %q; want %v..%v rest %q", c.in, ok, r.From, r.To, rest, c.from, c.to, c.rest)
		}
	}
	if _, _, _, ok := Extract("this may be fine", now); ok {
		t.Error(`"this may be" read as a date`)
	}
}

// TestQueryGrammarKnowsTheWholeVocabulary: the query grammar reads every
// word of the shared vocabulary — weekday abbreviations, month
// abbreviations with a year, every count word — not only the ones it used
// to list (it knew "friday" but not "fri", "couple of" but not "ten days"
// in the dossier's sense, "march 2025" but not "mar 2025").
func TestQueryGrammarKnowsTheWholeVocabulary(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // literal date: a Monday, as TestExtractDates
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
		r, _, phrases, ok := Extract(c.in, now)
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
