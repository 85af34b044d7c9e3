// Package querytext is the pure text side of query parsing (docs/index.md,
// "Queries"): which words are stop-words, which date expressions filter and
// which only rank (PlanDates, over the internal/dates grammar), the light
// English stemmer that groups inflections, and the bounded edit distance
// behind typo tolerance. Words are folded terms (internal/index/fold); the
// vocabulary lookups that use these live in internal/index.
package querytext

import (
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/dates"
	"github.com/tidings-mcp/tidings/internal/index/fold"
)

// stopWords are dropped from natural-language queries (when something else
// remains): function words, question words, and words about messaging
// itself ("what did Sam text me about…").
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are aren arent as at be because been
before being below between both but by can cant could couldn did didn didnt do does doesn doesnt doing don dont down during
each few for from further had hadn has hasn have haven having he hed hes her here hers herself him himself his how i id ill
im ive if in into is isn isnt it its itself just let lets me more most mustn my myself no nor not now of off on once only
or other ought our ours ourselves out over own same shan she shes should shouldn so some such than that thats the their
theirs them themselves then there theres these they theyd theyll theyre theyve this those through to too under until up
very was wasn we wed well were weren weve what whats when where which while who whom whos why will with won wont would
wouldn you youd youll youre youve your yours yourself yourselves
say said says tell told ask asked mention mentioned talk talked talking message messages msg text texts texted sent send
find show search look thing things something anything stuff someone somebody ever`) {
		m[w] = true
	}
	return m
}()

// IsStopWord reports whether w (a folded term) is a stop-word.
func IsStopWord(w string) bool { return stopWords[w] }

// windowCues are words that tie a date in a query to the messages
// themselves ("what did Sam say yesterday", "who texted me today", "what
// happened this week"), so the date is a time window to filter by.
var windowCues = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`say said says tell told ask asked mention mentioned talk talked talking
message messages messaged messaging msg msgs text texts texted texting sent send sends wrote write writes written
reply replied replies chat chatted happen happened happening miss missed`) {
		m[w] = true
	}
	return m
}()

// DatePlan is what the date expressions of a query become.
type DatePlan struct {
	// Filter is the hard time window (the intersection of the phrases
	// read as one); FilterText lists those phrases.
	Filter     dates.Range
	FilterText []string
	// Boost is the window of relative phrases that describe the topic
	// ("dinner last week"): messages in it rank higher, others still
	// match.
	Boost     dates.Range
	BoostText []string
	// Rest is the query without the phrases used as filter or boost;
	// named dates that describe the topic ("in January") stay as words.
	Rest string
}

// PlanDates decides what each date expression in s (lower case) means. A
// date is a hard filter only when the query asks for messages of a time
// window: the phrase is a window by itself (window), or the query has
// nothing besides dates and stop-words ("messages from last week",
// "yesterday"), or a word ties the date to the messages ("what did Sam say
// yesterday"). Otherwise a relative date is a soft boost and a named one
// (month, weekday, year) is searched as words: "conference in San
// Francisco in January" is about a conference in January, whenever the
// message was sent.
func PlanDates(s string, now time.Time) DatePlan {
	p := DatePlan{Rest: s}
	ms := dates.Parse(s, now, dates.Options{Direction: dates.Past})
	if len(ms) == 0 {
		return p
	}
	blank := func(drop func(dates.Phrase) bool) string {
		b := []byte(s)
		for _, m := range ms {
			if drop(m) {
				for i := m.Start; i < m.End; i++ {
					b[i] = ' '
				}
			}
		}
		return string(b)
	}
	cue, content := false, false
	for _, w := range fold.Terms(blank(func(dates.Phrase) bool { return true })) {
		switch {
		case windowCues[w]:
			cue = true
		case !stopWords[w]:
			content = true
		}
	}
	asWindow := cue || !content
	filter := func(m dates.Phrase) bool { return asWindow || m.Window }
	boost := func(m dates.Phrase) bool { return !filter(m) && m.Relative }
	var hasF, hasB bool
	for _, m := range ms {
		switch {
		case filter(m):
			p.Filter, hasF = dates.Intersect(p.Filter, m.Range, hasF), true
			p.FilterText = append(p.FilterText, m.Text)
		case boost(m):
			p.Boost, hasB = dates.Intersect(p.Boost, m.Range, hasB), true
			p.BoostText = append(p.BoostText, m.Text)
		}
	}
	p.Rest = blank(func(m dates.Phrase) bool { return filter(m) || boost(m) })
	return p
}

// Stem is a light English suffix stripper. It only has to map inflections
// of one word to the same key (owe, owes, owed, owing → "ow"); the index
// keeps full words and queries expand to every vocabulary term with the
// same key.
func Stem(w string) string {
	if len(w) <= 2 || !IsASCIIWord(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
	case strings.HasSuffix(w, "s") && len(w) > 3:
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ingly", "edly", "ing", "ed", "ly"} {
		if strings.HasSuffix(w, suf) {
			base := w[:len(w)-len(suf)]
			if len(base) >= 2 && strings.ContainsAny(base, "aeiouy") {
				w = base
			}
			break
		}
	}
	if len(w) > 2 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	if len(w) > 2 && strings.HasSuffix(w, "y") {
		w = w[:len(w)-1] + "i"
	}
	if n := len(w); n > 3 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiou", rune(w[n-1])) {
		w = w[:n-1]
	}
	return w
}

// IsASCIIWord reports whether w is made of a-z only (the words Stem and
// the typo tolerance handle).
func IsASCIIWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// EditDistanceWithin reports whether the Damerau-Levenshtein (optimal
// string alignment) distance between a and b is at most k.
func EditDistanceWithin(a, b string, k int) bool {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > k || -d > k {
		return false
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > k {
			return false
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)] <= k
}

// RemoveWord blanks every occurrence of the index term w in s (a person's
// name taken out of the text the embedder sees).
func RemoveWord(s, w string) string {
	b := []byte(s)
	fold.Tokenize(s, nil, func(t []byte, a, e int) {
		if string(t) == w {
			for i := a; i < e; i++ {
				b[i] = ' '
			}
		}
	})
	return string(b)
}
