package index

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/tidings-mcp/tidings/internal/index/fold"
	"github.com/tidings-mcp/tidings/internal/index/querytext"
)

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
	} else if s := querytext.Stem(word); querytext.IsASCIIWord(word) && len(word) > 2 {
		p := s
		if len(p) > 3 {
			p = p[:len(p)-1]
		}
		v.withPrefix(p, func(t string) bool {
			if querytext.Stem(t) == s {
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
			if df, ok := hid.dfOf(v, t); ok && querytext.EditDistanceWithin(word, t, k) {
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
		if ts := fold.Terms(m[1]); len(ts) > 0 {
			pq.phrases = append(pq.phrases, ts)
		}
	}
	rest := reQuoted.ReplaceAllString(low, " ")
	cut := false // whether words were taken out for the embedder
	if interpretDates {
		plan := querytext.PlanDates(rest, ix.now().In(ix.opts.Location))
		cut = plan.Rest != rest
		rest = plan.Rest
		if len(plan.FilterText) > 0 {
			if !plan.Filter.From.IsZero() {
				pq.since = plan.Filter.From.UnixMilli()
			}
			if !plan.Filter.To.IsZero() {
				pq.until = plan.Filter.To.UnixMilli() - 1
			}
			pq.dateText = strings.Join(plan.FilterText, ", ")
		}
		if len(plan.BoostText) > 0 {
			if !plan.Boost.From.IsZero() {
				pq.boostFrom = plan.Boost.From.UnixMilli()
			}
			if !plan.Boost.To.IsZero() {
				pq.boostUntil = plan.Boost.To.UnixMilli() - 1
			}
			pq.boostText = strings.Join(plan.BoostText, ", ")
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
		ts := fold.Terms(f)
		for i, t := range ts {
			words = append(words, word{t, prefix && i == len(ts)-1})
		}
		_ = buf
	}
	var kept []word
	for _, w := range words {
		if !querytext.IsStopWord(w.w) {
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
				rest = querytext.RemoveWord(rest, w.w)
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
			for _, w := range fold.Terms(n) {
				if out[w] == nil {
					out[w] = map[uint32]bool{}
				}
				out[w][h] = true
			}
		}
	}
	return out
}
