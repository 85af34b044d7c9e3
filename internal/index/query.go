package index

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/dates"
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

// variantKind says how a vocabulary term relates to a query word.
type variantKind uint8

const (
	vExact variantKind = iota
	vStem
	vPrefix
	vTypo
)

var variantWeight = [...]float64{vExact: 1, vStem: 0.9, vPrefix: 0.8, vTypo: 0.7}

func (k variantKind) String() string {
	return [...]string{"exact", "stem", "prefix", "typo"}[k]
}

// variant is a vocabulary term a query word matches.
type variant struct {
	term string
	kind variantKind
	df   int32
}

// qterm is one query word with the index terms it matches.
type qterm struct {
	word     string
	variants []variant
	df       int64 // documents containing any variant (upper bound: sum)
	idf      float64
}

// parsedQuery is a natural-language query reduced to what search uses.
type parsedQuery struct {
	raw      string
	terms    []qterm
	phrases  [][]string // quoted phrases as term sequences (must appear)
	since    int64      // unix ms; 0 = unbounded
	until    int64
	dateText string // the words read as a date range
	// boostFrom/boostUntil (unix ms, inclusive; 0 = unbounded) is the
	// window of relative dates that describe the topic: messages in it
	// rank higher (softDateBoost). boostText is their words.
	boostFrom, boostUntil int64
	boostText             string
	// people are contact names that query words named (words no message
	// contains); peopleHandles their handles: results are limited to
	// conversations with them.
	people        []string
	peopleHandles map[uint32]bool
	semantic      string // text for the embedder (dates and people removed)
	// listOnly: the query names only a time window and/or people; Search
	// lists their messages newest first.
	listOnly bool
	// hid is what messages no search may show add to the statistics
	// (hidden.go): the words, variants and IDFs are those of the rest.
	hid *hiddenTerms
}

var reQuoted = regexp.MustCompile(`"([^"]+)"`)

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

// datePlan is what the date expressions of a query become.
type datePlan struct {
	// filter is the hard time window (the intersection of the phrases
	// read as one); filterText lists those phrases.
	filter     dates.Range
	filterText []string
	// boost is the window of relative phrases that describe the topic
	// ("dinner last week"): messages in it rank higher, others still
	// match.
	boost     dates.Range
	boostText []string
	// rest is the query without the phrases used as filter or boost;
	// named dates that describe the topic ("in January") stay as words.
	rest string
}

// planDates decides what each date expression in s (lower case) means. A
// date is a hard filter only when the query asks for messages of a time
// window: the phrase is a window by itself (window), or the query has
// nothing besides dates and stop-words ("messages from last week",
// "yesterday"), or a word ties the date to the messages ("what did Sam say
// yesterday"). Otherwise a relative date is a soft boost and a named one
// (month, weekday, year) is searched as words: "conference in San
// Francisco in January" is about a conference in January, whenever the
// message was sent.
func planDates(s string, now time.Time) datePlan {
	p := datePlan{rest: s}
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
	for _, w := range terms(blank(func(dates.Phrase) bool { return true })) {
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
			p.filter, hasF = dates.Intersect(p.filter, m.Range, hasF), true
			p.filterText = append(p.filterText, m.Text)
		case boost(m):
			p.boost, hasB = dates.Intersect(p.boost, m.Range, hasB), true
			p.boostText = append(p.boostText, m.Text)
		}
	}
	p.rest = blank(func(m dates.Phrase) bool { return filter(m) || boost(m) })
	return p
}

// stem is a light English suffix stripper. It only has to map inflections
// of one word to the same key (owe, owes, owed, owing → "ow"); the index
// keeps full words and queries expand to every vocabulary term with the
// same key.
func stem(w string) string {
	if len(w) <= 2 || !isASCIIWord(w) {
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

func isASCIIWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// editDistanceWithin reports whether the Damerau-Levenshtein (optimal
// string alignment) distance between a and b is at most k.
func editDistanceWithin(a, b string, k int) bool {
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

// maxVariants bounds how many vocabulary terms one query word expands to.
const maxVariants = 64

// expand finds the vocabulary terms a query word matches. Callers hold
// mem.mu (write: the vocabulary may build its sorted views).
func (v *vocab) expand(word string, prefix bool, hid *hiddenTerms) []variant {
	var out []variant
	seen := map[string]bool{}
	addv := func(t string, k variantKind) {
		if seen[t] {
			return
		}
		if df, ok := hid.dfOf(v, t); ok {
			seen[t] = true
			out = append(out, variant{t, k, df})
		}
	}
	addv(word, vExact)
	if prefix {
		v.withPrefix(word, func(t string) bool { addv(t, vPrefix); return true })
	} else if s := stem(word); isASCIIWord(word) && len(word) > 2 {
		p := s
		if len(p) > 3 {
			p = p[:len(p)-1]
		}
		v.withPrefix(p, func(t string) bool {
			if stem(t) == s {
				addv(t, vStem)
			}
			return true
		})
	}
	if len(out) == 0 && len([]rune(word)) >= 4 && !prefix {
		k := 1
		if len([]rune(word)) >= 8 {
			k = 2
		}
		var cands []variant
		check := func(t string) bool {
			if df, ok := hid.dfOf(v, t); ok && editDistanceWithin(word, t, k) {
				cands = append(cands, variant{t, vTypo, df})
			}
			return true
		}
		r := []rune(word)
		v.withPrefix(string(r[0]), check)
		if r[1] != r[0] {
			v.withPrefix(string(r[1]), check)
		}
		sort.Slice(cands, func(i, j int) bool { return cands[i].df > cands[j].df })
		for _, c := range cands[:min(len(cands), 3)] {
			addv(c.term, vTypo)
		}
	}
	// Keep the exact term and the most frequent others.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].kind == vExact || out[j].kind == vExact {
			return out[i].kind == vExact && out[j].kind != vExact
		}
		return out[i].df > out[j].df
	})
	if len(out) > maxVariants {
		out = out[:maxVariants]
	}
	return out
}

// parseQuery reduces a natural-language query: quoted phrases, date
// expressions, stop-words, then each remaining word expanded against the
// vocabulary. interpretDates false keeps date words as ordinary words.
// Callers hold mem.mu (write).
func (ix *Index) parseQueryLocked(text string, interpretDates bool, hid *hiddenTerms) parsedQuery {
	pq := parsedQuery{raw: text, hid: hid}
	low := strings.ToLower(text)
	// Quoted phrases.
	for _, m := range reQuoted.FindAllStringSubmatch(low, -1) {
		if ts := terms(m[1]); len(ts) > 0 {
			pq.phrases = append(pq.phrases, ts)
		}
	}
	rest := reQuoted.ReplaceAllString(low, " ")
	cut := false // whether words were taken out for the embedder
	if interpretDates {
		plan := planDates(rest, ix.now().In(ix.opts.Location))
		cut = plan.rest != rest
		rest = plan.rest
		if len(plan.filterText) > 0 {
			if !plan.filter.From.IsZero() {
				pq.since = plan.filter.From.UnixMilli()
			}
			if !plan.filter.To.IsZero() {
				pq.until = plan.filter.To.UnixMilli() - 1
			}
			pq.dateText = strings.Join(plan.filterText, ", ")
		}
		if len(plan.boostText) > 0 {
			if !plan.boost.From.IsZero() {
				pq.boostFrom = plan.boost.From.UnixMilli()
			}
			if !plan.boost.To.IsZero() {
				pq.boostUntil = plan.boost.To.UnixMilli() - 1
			}
			pq.boostText = strings.Join(plan.boostText, ", ")
		}
	}
	// Words; a trailing * asks for a prefix.
	type word struct {
		w      string
		prefix bool
	}
	var words []word
	var buf []byte
	for _, f := range strings.Fields(rest) {
		prefix := strings.HasSuffix(f, "*")
		ts := terms(f)
		for i, t := range ts {
			words = append(words, word{t, prefix && i == len(ts)-1})
		}
		_ = buf
	}
	var kept []word
	for _, w := range words {
		if !stopWords[w.w] {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 && len(pq.phrases) == 0 && pq.dateText == "" {
		kept = words // only stop-words: search them after all
	}
	seen := map[string]bool{}
	var names map[string]map[uint32]bool
	for _, w := range kept {
		if seen[w.w] {
			continue
		}
		seen[w.w] = true
		qt := qterm{word: w.w, variants: ix.mem.voc.expand(w.w, w.prefix, hid)}
		if len(qt.variants) == 0 && !w.prefix {
			// A word no message contains may name a person ("when is
			// Lukas in town"): it then means their conversations.
			if names == nil {
				names = ix.nameWordsLocked()
			}
			if hs := names[w.w]; len(hs) > 0 {
				if pq.peopleHandles == nil {
					pq.peopleHandles = map[uint32]bool{}
				}
				for h := range hs {
					pq.peopleHandles[h] = true
					if n := ix.nameOfLocked(h); !slices.Contains(pq.people, n) {
						pq.people = append(pq.people, n)
					}
				}
				rest = removeWord(rest, w.w)
				cut = true
				continue
			}
		}
		for _, v := range qt.variants {
			qt.df += int64(v.df)
		}
		pq.terms = append(pq.terms, qt)
	}
	slices.Sort(pq.people)
	// Nothing to search for but a time window or a person ("messages from
	// last week", "Lukas", or "when is Lukas in town" where no message has
	// the other words): the answer is their messages, newest first.
	known := false
	for _, t := range pq.terms {
		known = known || len(t.variants) > 0
	}
	pq.listOnly = len(pq.phrases) == 0 && (len(pq.terms) == 0 && pq.dateText != "" || len(pq.people) > 0 && !known)
	pq.semantic = strings.Join(strings.Fields(strings.ReplaceAll(reQuoted.ReplaceAllString(text, "$1"), "\"", "")), " ")
	if cut {
		pq.semantic = strings.Join(strings.Fields(rest), " ")
		for _, p := range pq.phrases {
			pq.semantic += " " + strings.Join(p, " ")
		}
	}
	for _, p := range pq.phrases {
		for _, t := range p {
			if seen[t] {
				continue
			}
			seen[t] = true
			qt := qterm{word: t}
			if df, ok := hid.dfOf(ix.mem.voc, t); ok {
				qt.variants = []variant{{t, vExact, df}}
				qt.df = int64(df)
			}
			pq.terms = append(pq.terms, qt)
		}
	}
	docs, _ := hid.docsOf(ix.mem)
	n := float64(max(docs, 1))
	for i := range pq.terms {
		df := float64(min(pq.terms[i].df, int64(n)))
		pq.terms[i].idf = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	return pq
}

// nameWordsLocked maps each word of a contact name (folded like index
// terms) to the handles of the people whose name has it, among the
// participants of conversations the policy shows (a blocked person is
// never named). Callers hold mem.mu.
func (ix *Index) nameWordsLocked() map[string]map[uint32]bool {
	out := map[string]map[uint32]bool{}
	done := map[uint32]bool{}
	for _, ci := range ix.mem.convByID {
		if !ix.visible(ci) {
			continue
		}
		for _, h := range ci.handles {
			if done[h] {
				continue
			}
			done[h] = true
			n := ix.nameOfLocked(h)
			if n == "" {
				continue
			}
			for _, w := range terms(n) {
				if out[w] == nil {
					out[w] = map[uint32]bool{}
				}
				out[w][h] = true
			}
		}
	}
	return out
}

// removeWord blanks every occurrence of the index term w in s (a person's
// name taken out of the text the embedder sees).
func removeWord(s, w string) string {
	b := []byte(s)
	tokenize(s, nil, func(t []byte, a, e int) {
		if string(t) == w {
			for i := a; i < e; i++ {
				b[i] = ' '
			}
		}
	})
	return string(b)
}
