package redact

import (
	"regexp"
	"strings"
)

// US-style street addresses.
//
// An address is a house number (1–6 digits, optionally with a letter or a
// -NN suffix), one to four street-name words, and a street suffix (St, Ave,
// Rd, Blvd, Lane, Dr, Ct, Way, Pkwy, …), optionally followed by a
// directional (NW), a unit (Apt 3B, Unit 4, Suite 600, #2) and
// ", City, ST 12345". PO boxes ("PO Box 4421") count too.
//
// Everyday text is full of "number + words": "I'll be there in 5 min",
// "I ran 3 miles on the trail", "we drove 2 hours down the highway". So
// every street-name word must be a name, not a function word or a unit
// (the, on, in, down, miles, hours, blocks …), the number must not be a
// time, price or measurement, and a suffix that is also an everyday word
// ("way", "court", "drive" …) needs at least one name word before it.
// City, state and ZIP are only included when they follow a street; a ZIP
// code or "Springfield, IL" alone is not an address.

const streetSuffixes = `street|st|avenue|ave|av|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|way|place|pl|terrace|ter|terr|circle|cir|parkway|pkwy|highway|hwy|square|sq|trail|trl|loop|alley|aly|crescent|cres|plaza|plz|pike|turnpike|tpke|expressway|expy|freeway|fwy|causeway|cswy|row|close|mews`

const usStates = `AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR|GU|VI`

// addrTail matches the optional directional, unit and city/state/ZIP after
// the suffix.
const addrTail = `(?:\s+(?-i:N|S|E|W|NE|NW|SE|SW)\b)?` +
	`(?:,?\s*(?:apt|apartment|unit|suite|ste|fl|floor|rm|room|bldg)\.?\s*#?\s*[a-z0-9][a-z0-9-]{0,5}\b|\s*#\s*[a-z0-9][a-z0-9-]{0,5}\b)?` +
	`(?:,\s*(?-i:[A-Z][a-zA-Z.'-]+(?:\s+[A-Z][a-zA-Z.'-]+){0,2}),?\s+(?-i:` + usStates + `)\b(?:\s+\d{5}(?:-\d{4})?\b)?)?`

// addrRe is anchored: it runs at the start of each short digit run.
var addrRe = regexp.MustCompile(`(?i)^(\d{1,6}(?:-\d{1,4})?[a-z]?)\s+((?:[\p{L}0-9][\p{L}0-9'.-]*\s+){0,4}?)(` + streetSuffixes + `)\b\.?` + addrTail)

var poBoxRe = regexp.MustCompile(`(?i)\bp\.?\s?o\.?\s+box\s+\d{1,6}\b` + addrTail)

// addrStop are words that cannot be part of a street name.
var addrStop = map[string]bool{
	"the": true, "a": true, "an": true, "on": true, "in": true, "at": true, "to": true, "of": true, "for": true,
	"from": true, "with": true, "by": true, "and": true, "or": true, "but": true, "down": true, "up": true,
	"my": true, "your": true, "his": true, "her": true, "our": true, "their": true, "its": true, "this": true,
	"that": true, "these": true, "those": true, "is": true, "are": true, "was": true, "were": true, "be": true,
	"min": true, "mins": true, "minute": true, "minutes": true, "hr": true, "hrs": true, "hour": true, "hours": true,
	"sec": true, "secs": true, "seconds": true, "day": true, "days": true, "week": true, "weeks": true,
	"month": true, "months": true, "year": true, "years": true, "yrs": true, "mile": true, "miles": true, "mi": true,
	"km": true, "kms": true, "meters": true, "feet": true, "ft": true, "blocks": true, "block": true,
	"times": true, "time": true, "people": true, "kids": true, "more": true, "less": true, "other": true,
	"exit": true, "exits": true, "lanes": true, "stops": true, "stop": true, "steps": true, "floors": true,
	"am": true, "pm": true, "o'clock": true, "percent": true, "dollars": true, "bucks": true, "euros": true,
	"out": true, "off": true, "over": true, "into": true, "onto": true, "across": true, "along": true,
	"past": true, "near": true, "around": true, "behind": true, "via": true, "than": true, "as": true,
	"it": true, "we": true, "i": true, "you": true, "he": true, "she": true, "they": true, "me": true, "us": true,
	"them": true, "not": true, "no": true, "so": true, "if": true, "then": true, "just": true, "only": true,
	"new": false, "have": true, "has": true, "had": true, "will": true, "can": true, "get": true, "got": true,
	"go": true, "went": true, "come": true, "take": true, "took": true, "make": true, "made": true, "all": true,
	"some": true, "any": true, "each": true, "every": true, "many": true, "much": true, "few": true,
	"very": true, "too": true, "also": true, "still": true, "left": true, "right": true, "straight": true,
	"lbs": true, "kg": true, "oz": true, "cups": true, "items": true, "things": true, "games": true,
}

// weakSuffix are suffixes that are also everyday words; they need a
// capitalised street name or an ordinal before them.
var weakSuffix = map[string]bool{
	"way": true, "court": true, "drive": true, "place": true, "square": true, "loop": true, "row": true,
	"close": true, "trail": true, "circle": true, "plaza": true, "lane": true, "road": true, "street": true,
	"alley": true, "pike": true, "highway": true, "freeway": true, "terrace": true, "avenue": true,
}

var addrSuffixWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Split(streetSuffixes, "|") {
		m[w] = true
	}
	return m
}()

// hasSuffixWord is the prefilter: some word of lower is a street suffix.
func hasSuffixWord(lower string) bool {
	for i := 0; i < len(lower); {
		for i < len(lower) && !isAlpha(lower[i]) {
			i++
		}
		j := i
		for j < len(lower) && isAlpha(lower[j]) {
			j++
		}
		if j > i && j-i <= 10 && addrSuffixWords[lower[i:j]] {
			return true
		}
		i = j
	}
	return false
}

func findAddresses(d *doc, cs []cand) []cand {
	l := d.lower()
	if strings.Contains(l, "box") && d.ndigits > 0 {
		for _, m := range poBoxRe.FindAllStringIndex(d.s, -1) {
			cs = append(cs, cand{m[0], m[1], ClassAddress, prioAddress})
		}
	}
	if d.ndigits == 0 || !hasSuffixWord(l) {
		return cs
	}
	s := d.s
	next := 0
	for _, r := range d.runs {
		if r.s < next || r.e-r.s > 6 || (r.s > 0 && (isAlnum(s[r.s-1]) || s[r.s-1] == '_')) {
			continue
		}
		end := r.s + 200
		if end > len(s) {
			end = len(s)
		}
		m := addrRe.FindStringSubmatchIndex(s[r.s:end])
		if m == nil {
			continue
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += r.s
			}
		}
		numS, numE := m[2], m[3]
		if !addrNumberOK(s, numS, numE) {
			continue
		}
		words := strings.Fields(s[m[4]:m[5]])
		suffix := strings.ToLower(s[m[6]:m[7]])
		if !addrNameOK(words, suffix) {
			continue
		}
		e := m[1]
		if e == m[7]+1 && s[m[7]] == '.' {
			e = m[7] // "Main St." ending a sentence: keep the full stop
		}
		cs = append(cs, cand{numS, e, ClassAddress, prioAddress})
		next = e
	}
	return cs
}

// addrNumberOK rejects house numbers that are really times, prices,
// decimals, parts of longer numbers or measurements.
func addrNumberOK(s string, ns, ne int) bool {
	if ns > 0 {
		p := s[ns-1]
		if p == '$' || p == '#' || p == '.' || p == ',' || p == ':' || p == '/' || p == '-' || p == '+' || isDigit(p) {
			return false
		}
		if currencyBefore(s, ns) {
			return false
		}
	}
	if ne < len(s) && (s[ne] == ':' || s[ne] == '.' || s[ne] == ',' || s[ne] == '%') {
		return false
	}
	return true
}

// addrNameOK validates the street-name words between number and suffix.
func addrNameOK(words []string, suffix string) bool {
	if len(words) == 0 {
		return false
	}
	capital := false
	for _, w := range words {
		lw := strings.ToLower(strings.Trim(w, ".'"))
		if lw == "" || addrStop[lw] {
			return false
		}
		c := w[0]
		if c >= 'A' && c <= 'Z' || isDigit(c) {
			capital = true
		}
	}
	if weakSuffix[suffix] && !capital {
		return false
	}
	return true
}
