package querytext

import (
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/testclock"
)

// TestStemGroupsInflections pins that inflections of one word share a key
// and that different words keep different keys.
func TestStemGroupsInflections(t *testing.T) {
	for _, tc := range []struct {
		words []string
		same  bool
	}{
		{[]string{"owe", "owes", "owed", "owing"}, true},
		{[]string{"party", "parties"}, true},
		{[]string{"plan", "plans", "planned", "planning"}, true},
		{[]string{"dinner", "dinners"}, true},
		{[]string{"bus", "buses"}, true},
		{[]string{"dinner", "diner"}, false},
		{[]string{"café", "cafés"}, false}, // only a-z words are stemmed
	} {
		keys := map[string]bool{}
		for _, w := range tc.words {
			keys[Stem(w)] = true
		}
		if same := len(keys) == 1; same != tc.same {
			t.Errorf("%v: stems %v, want shared=%v", tc.words, keys, tc.same)
		}
	}
}

// TestEditDistanceWithinCountsTranspositionsOnce pins the optimal string
// alignment distance: one edit for a swap of neighbours, runes not bytes.
func TestEditDistanceWithinCountsTranspositionsOnce(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		k    int
		want bool
	}{
		{"dinner", "dinenr", 1, true}, // transposition
		{"dinner", "diner", 1, true},  // deletion
		{"dinner", "dinners", 1, true},
		{"dinner", "winners", 1, false},
		{"dinner", "winners", 2, true},
		{"café", "cafe", 1, true}, // one rune, two bytes
		{"abc", "abc", 0, true},
		{"abc", "abcdef", 2, false}, // length difference alone exceeds k
	} {
		if got := EditDistanceWithin(tc.a, tc.b, tc.k); got != tc.want {
			t.Errorf("EditDistanceWithin(%q, %q, %d) = %v, want %v", tc.a, tc.b, tc.k, got, tc.want)
		}
	}
}

// TestPlanDatesFiltersOnlyTimeWindows pins when a date filters: a query
// asking for a time window filters; a relative date describing the topic
// only ranks; a named date describing the topic stays a word.
func TestPlanDatesFiltersOnlyTimeWindows(t *testing.T) {
	now := testclock.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		query            string
		filter, boost    bool
		restHas, restNot string
	}{
		{query: "messages from last week", filter: true, restNot: "last week"},
		{query: "yesterday", filter: true},
		{query: "what did sam say yesterday", filter: true, restHas: "sam", restNot: "yesterday"},
		{query: "dinner last week", boost: true, restHas: "dinner", restNot: "last week"},
		{query: "conference in january", restHas: "january"},
		{query: "passport renewal", restHas: "passport renewal"},
	} {
		p := PlanDates(tc.query, now)
		if got := len(p.FilterText) > 0; got != tc.filter {
			t.Errorf("%q: filter %v (%v), want %v", tc.query, got, p.FilterText, tc.filter)
		}
		if got := len(p.BoostText) > 0; got != tc.boost {
			t.Errorf("%q: boost %v (%v), want %v", tc.query, got, p.BoostText, tc.boost)
		}
		if tc.restHas != "" && !strings.Contains(p.Rest, tc.restHas) {
			t.Errorf("%q: rest %q lacks %q", tc.query, p.Rest, tc.restHas)
		}
		if tc.restNot != "" && strings.Contains(p.Rest, tc.restNot) {
			t.Errorf("%q: rest %q still has %q", tc.query, p.Rest, tc.restNot)
		}
	}
}

// TestRemoveWordBlanksWholeTerms pins that RemoveWord takes out whole index
// terms (folded, any case) and keeps byte offsets.
func TestRemoveWordBlanksWholeTerms(t *testing.T) {
	for _, tc := range []struct{ s, w, want string }{
		{"did Sam say", "sam", "did     say"},
		{"Samantha and sam", "sam", "Samantha and    "},
		{"José's car", "jose", "     's car"}, // é is two bytes
	} {
		if got := RemoveWord(tc.s, tc.w); got != tc.want {
			t.Errorf("RemoveWord(%q, %q) = %q, want %q", tc.s, tc.w, got, tc.want)
		}
	}
}

// TestIsStopWordKeepsContentWords pins a few stop-words and content words.
func TestIsStopWordKeepsContentWords(t *testing.T) {
	for w, want := range map[string]bool{"what": true, "texted": true, "the": true, "dinner": false, "sam": false} {
		if got := IsStopWord(w); got != want {
			t.Errorf("IsStopWord(%q) = %v, want %v", w, got, want)
		}
	}
}
