package index

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
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
	semantic string // text for the embedder (dates removed)
}

// dateRange is a half-open interval [from, to).
type dateRange struct{ from, to time.Time }

var (
	reISODate  = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	reLastN    = regexp.MustCompile(`\b(?:in\s+the\s+|over\s+the\s+)?(?:last|past|previous)\s+(\d{1,3}|a|one|two|three|four|five|six|seven|eight|nine|ten|few|couple\s+of)\s+(day|week|month|year)s?\b`)
	reAgo      = regexp.MustCompile(`\b(\d{1,3}|a|one|two|three|four|five|six|seven|eight|nine|ten|couple\s+of|few)\s+(day|week|month|year)s?\s+ago\b`)
	reRelative = regexp.MustCompile(`\b(today|tonight|this\s+morning|this\s+afternoon|this\s+evening|yesterday|(?:this|last|past|previous)\s+(?:week|month|year|weekend))\b`)
	reWeekday  = regexp.MustCompile(`\b(on|last|this|since)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`)
	reMonth    = regexp.MustCompile(`\b(in|during|since|last|this)\s+(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)(?:\s+(\d{4}))?\b`)
	reMonthYr  = regexp.MustCompile(`\b(january|february|march|april|may|june|july|august|september|october|november|december)\s+(\d{4})\b`)
	reInYear   = regexp.MustCompile(`\b(in|during|since)\s+(\d{4})\b`)
	reQuoted   = regexp.MustCompile(`"([^"]+)"`)
)

var monthNames = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
	"june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
	"october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

var weekdays = map[string]time.Weekday{"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6}

var smallNumbers = map[string]int{"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "few": 3, "couple of": 2}

func parseCount(s string) int {
	s = strings.Join(strings.Fields(s), " ")
	if n, ok := smallNumbers[s]; ok {
		return n
	}
	n, _ := strconv.Atoi(s)
	return n
}

func dayStart(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// weekStart returns the Monday 00:00 of t's week.
func weekStart(t time.Time) time.Time {
	d := dayStart(t)
	off := (int(d.Weekday()) + 6) % 7
	return d.AddDate(0, 0, -off)
}

func addUnit(t time.Time, unit string, n int) time.Time {
	switch unit {
	case "day":
		return t.AddDate(0, 0, n)
	case "week":
		return t.AddDate(0, 0, 7*n)
	case "month":
		return t.AddDate(0, n, 0)
	default:
		return t.AddDate(n, 0, 0)
	}
}

// extractDates finds relative and absolute date expressions in s (lower
// case), returns the intersection of their ranges, the text with them
// removed, and the matched phrases.
func extractDates(s string, now time.Time) (dateRange, string, []string, bool) {
	var r dateRange
	found := false
	var phrases []string
	apply := func(dr dateRange) {
		if !found {
			r, found = dr, true
			return
		}
		if dr.from.After(r.from) {
			r.from = dr.from
		}
		if !dr.to.IsZero() && (r.to.IsZero() || dr.to.Before(r.to)) {
			r.to = dr.to
		}
	}
	cut := func(re *regexp.Regexp, fn func(m []string) (dateRange, bool)) {
		s = re.ReplaceAllStringFunc(s, func(match string) string {
			dr, ok := fn(re.FindStringSubmatch(match))
			if !ok {
				return match
			}
			apply(dr)
			phrases = append(phrases, strings.Join(strings.Fields(match), " "))
			return " "
		})
	}
	today := dayStart(now)
	cut(reISODate, func(m []string) (dateRange, bool) {
		t, err := time.ParseInLocation("2006-01-02", m[0], now.Location())
		if err != nil {
			return dateRange{}, false
		}
		return dateRange{t, t.AddDate(0, 0, 1)}, true
	})
	cut(reLastN, func(m []string) (dateRange, bool) {
		n := parseCount(m[1])
		if n <= 0 {
			return dateRange{}, false
		}
		if m[2] == "day" {
			return dateRange{today.AddDate(0, 0, -(n - 1)), time.Time{}}, true
		}
		return dateRange{addUnit(now, m[2], -n), time.Time{}}, true
	})
	cut(reAgo, func(m []string) (dateRange, bool) {
		n := parseCount(m[1])
		if n <= 0 {
			return dateRange{}, false
		}
		switch m[2] {
		case "day":
			d := today.AddDate(0, 0, -n)
			return dateRange{d, d.AddDate(0, 0, 1)}, true
		case "week":
			w := weekStart(now).AddDate(0, 0, -7*n)
			return dateRange{w, w.AddDate(0, 0, 7)}, true
		case "month":
			first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, now.Location()).AddDate(0, -n, 0)
			return dateRange{first, first.AddDate(0, 1, 0)}, true
		default:
			y := time.Date(now.Year()-n, 1, 1, 0, 0, 0, 0, now.Location())
			return dateRange{y, y.AddDate(1, 0, 0)}, true
		}
	})
	cut(reRelative, func(m []string) (dateRange, bool) {
		w := strings.Fields(m[1])
		switch w[0] {
		case "today", "tonight":
			return dateRange{today, today.AddDate(0, 0, 1)}, true
		case "yesterday":
			return dateRange{today.AddDate(0, 0, -1), today}, true
		}
		if len(w) < 2 {
			return dateRange{}, false
		}
		if w[1] == "morning" || w[1] == "afternoon" || w[1] == "evening" {
			return dateRange{today, today.AddDate(0, 0, 1)}, true
		}
		last := w[0] != "this"
		switch w[1] {
		case "week":
			ws := weekStart(now)
			if last {
				return dateRange{ws.AddDate(0, 0, -7), ws}, true
			}
			return dateRange{ws, ws.AddDate(0, 0, 7)}, true
		case "weekend":
			ws := weekStart(now)
			sat := ws.AddDate(0, 0, 5)
			if last || now.Before(sat) {
				sat = sat.AddDate(0, 0, -7)
			}
			return dateRange{sat, sat.AddDate(0, 0, 2)}, true
		case "month":
			first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, now.Location())
			if last {
				return dateRange{first.AddDate(0, -1, 0), first}, true
			}
			return dateRange{first, first.AddDate(0, 1, 0)}, true
		default: // year
			first := time.Date(now.Year(), 1, 1, 0, 0, 0, 0, now.Location())
			if last {
				return dateRange{first.AddDate(-1, 0, 0), first}, true
			}
			return dateRange{first, first.AddDate(1, 0, 0)}, true
		}
	})
	cut(reWeekday, func(m []string) (dateRange, bool) {
		wd := weekdays[m[2]]
		// The most recent such day before today (today itself for "this").
		back := (int(today.Weekday()) - int(wd) + 7) % 7
		if back == 0 && m[1] != "this" {
			back = 7
		}
		d := today.AddDate(0, 0, -back)
		if m[1] == "since" {
			return dateRange{d, time.Time{}}, true
		}
		return dateRange{d, d.AddDate(0, 0, 1)}, true
	})
	monthRange := func(mon time.Month, yearStr string, mode string) (dateRange, bool) {
		y := now.Year()
		if yearStr != "" {
			y, _ = strconv.Atoi(yearStr)
		} else if mon > now.Month() || (mode == "last" && mon == now.Month()) {
			y-- // the most recent such month that has begun
		}
		first := time.Date(y, mon, 1, 0, 0, 0, 0, now.Location())
		if mode == "since" {
			return dateRange{first, time.Time{}}, true
		}
		return dateRange{first, first.AddDate(0, 1, 0)}, true
	}
	cut(reMonth, func(m []string) (dateRange, bool) {
		if m[2] == "may" && m[1] == "this" && m[3] == "" {
			return dateRange{}, false // "this may be…"
		}
		return monthRange(monthNames[m[2]], m[3], m[1])
	})
	cut(reMonthYr, func(m []string) (dateRange, bool) {
		return monthRange(monthNames[m[1]], m[2], "in")
	})
	cut(reInYear, func(m []string) (dateRange, bool) {
		y, _ := strconv.Atoi(m[2])
		if y < 1990 || y > now.Year()+1 {
			return dateRange{}, false
		}
		first := time.Date(y, 1, 1, 0, 0, 0, 0, now.Location())
		if m[1] == "since" {
			return dateRange{first, time.Time{}}, true
		}
		return dateRange{first, first.AddDate(1, 0, 0)}, true
	})
	return r, s, phrases, found
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
func (v *vocab) expand(word string, prefix bool) []variant {
	var out []variant
	seen := map[string]bool{}
	addv := func(t string, k variantKind) {
		if seen[t] {
			return
		}
		if df, ok := v.df[t]; ok {
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
			if editDistanceWithin(word, t, k) {
				cands = append(cands, variant{t, vTypo, v.df[t]})
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
func (ix *Index) parseQueryLocked(text string, interpretDates bool) parsedQuery {
	pq := parsedQuery{raw: text}
	low := strings.ToLower(text)
	// Quoted phrases.
	for _, m := range reQuoted.FindAllStringSubmatch(low, -1) {
		if ts := terms(m[1]); len(ts) > 0 {
			pq.phrases = append(pq.phrases, ts)
		}
	}
	rest := reQuoted.ReplaceAllString(low, " ")
	if interpretDates {
		now := ix.now().In(ix.opts.Location)
		dr, r2, phrases, ok := extractDates(rest, now)
		if ok {
			rest = r2
			if !dr.from.IsZero() {
				pq.since = dr.from.UnixMilli()
			}
			if !dr.to.IsZero() {
				pq.until = dr.to.UnixMilli() - 1
			}
			pq.dateText = strings.Join(phrases, ", ")
		}
	}
	pq.semantic = strings.Join(strings.Fields(strings.ReplaceAll(reQuoted.ReplaceAllString(text, "$1"), "\"", "")), " ")
	if pq.dateText != "" {
		pq.semantic = strings.Join(strings.Fields(rest), " ")
		for _, p := range pq.phrases {
			pq.semantic += " " + strings.Join(p, " ")
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
	if len(kept) == 0 && len(pq.phrases) == 0 {
		kept = words // only stop-words: search them after all
	}
	seen := map[string]bool{}
	for _, w := range kept {
		if seen[w.w] {
			continue
		}
		seen[w.w] = true
		qt := qterm{word: w.w, variants: ix.mem.voc.expand(w.w, w.prefix)}
		for _, v := range qt.variants {
			qt.df += int64(v.df)
		}
		pq.terms = append(pq.terms, qt)
	}
	for _, p := range pq.phrases {
		for _, t := range p {
			if seen[t] {
				continue
			}
			seen[t] = true
			qt := qterm{word: t}
			if df, ok := ix.mem.voc.df[t]; ok {
				qt.variants = []variant{{t, vExact, df}}
				qt.df = int64(df)
			}
			pq.terms = append(pq.terms, qt)
		}
	}
	n := float64(max(ix.mem.docs, 1))
	for i := range pq.terms {
		df := float64(min(pq.terms[i].df, int64(n)))
		pq.terms[i].idf = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	return pq
}
