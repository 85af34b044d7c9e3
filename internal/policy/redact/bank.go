package redact

import (
	"regexp"
	"strings"
)

// Bank account and ABA routing numbers.
//
// Account numbers have no checksum and look like any other number, so they
// are masked only next to a label: "account", "acct", "a/c", "checking",
// "savings" and their forms in a few languages ("cuenta", "Konto", "compte",
// "conto", "conta"), optionally followed by "number", "no.", "#", "is" and
// the like. The number is 6–17 digits, contiguous or in groups joined by
// single spaces or dashes, and not shaped like a phone number or an amount.
// "ending in 1234" and other partial numbers (fewer than 6 digits) stay.
//
// Routing numbers are nine digits after "routing", "ABA", "RTN" or
// "transit" labels. A tightly labelled nine-digit number is masked even if
// its checksum fails (the label says what it is); a number found only near
// such a label ("routing and account numbers are X and Y") must pass the ABA
// checksum: 3·d1 + 7·d2 + d3 + 3·d4 + 7·d5 + d6 + 3·d7 + 7·d8 + d9 ≡ 0 mod 10.

var bankLabelRe = regexp.MustCompile(`(?i)\b(?:(?:checking|savings|bank|chequing)\s+)?(?:account|acct|acc|a/c)\b|\bchecking\b|\bsavings\b|\b(?:routing|aba|rtn|transit)\b|\b(?:cuenta|kontonummer|konto|compte|conto|conta|rekeningnummer|rekening)\b`)

var bankFillers = []string{
	"number", "numbers", "no", "num", "nr", "is", "are", "es", "ist", "est", "é", "è", "de", "du", "do",
	"la", "el", "my", "our", "the", "new", "#", "id", "and", "was", "numero", "número", "numéro", "nummer",
}

func bankPrefilter(l string) bool {
	return containsAny(l, "acc", "a/c", "routing", "aba", "rtn", "transit", "checking", "savings",
		"cuenta", "konto", "compte", "conto", "conta", "rekening")
}

func findBank(d *doc, cs []cand) []cand {
	l := d.lower()
	if !bankPrefilter(l) {
		return cs
	}
	s := d.s
	for _, m := range bankLabelRe.FindAllStringIndex(l, -1) {
		label := l[m[0]:m[1]]
		routing := strings.HasPrefix(label, "routing") || label == "aba" || label == "rtn" || label == "transit"
		// Tight binding: only filler words and punctuation between label and number.
		pos := m[1]
		tight := true
		for k := 0; k < 4; k++ {
			j := pos
			for j < len(l) && (l[j] == ' ' || l[j] == ':' || l[j] == '#' || l[j] == '.' || l[j] == '=' || l[j] == '-' || l[j] == '\t') {
				j++
			}
			w, we := nextWord(l, j, 16)
			if w == "" {
				pos = j
				break
			}
			if w == "ending" || w == "ends" || w == "last" {
				tight = false
				break
			}
			if !oneOf(w, bankFillers...) {
				tight = false
				break
			}
			pos = we
		}
		found, taken := 0, -1
		if tight {
			if c, ok := bankNumberAt(s, pos, routing, false); ok {
				c.prio = prioBank
				cs = append(cs, c)
				found, taken = 1, c.end
			}
		}
		// Loose binding: the next two numbers in the same sentence, within 60 bytes.
		end := m[1] + 60
		if end > len(s) {
			end = len(s)
		}
		for _, r := range d.runs {
			if found == 2 {
				break
			}
			if r.s < m[1] || r.s < taken {
				continue
			}
			if r.s >= end || sentenceBreak(s[m[1]:r.s]) || strings.Contains(s[m[1]:r.s], "\n") {
				break
			}
			if joinedBefore(s, r.s) {
				continue
			}
			if c, ok := bankNumberAt(s, r.s, routing, true); ok {
				c.prio = prioBankLoose
				cs = append(cs, c)
				found++
			}
		}
	}
	return cs
}

// bankNumberAt parses an account or routing number starting at pos (after
// optional spaces). Loose numbers must stand alone as a whole token, and
// loose routing numbers must pass the ABA checksum.
func bankNumberAt(s string, pos int, routing, loose bool) (cand, bool) {
	for pos < len(s) && s[pos] == ' ' {
		pos++
	}
	if pos >= len(s) || !isDigit(s[pos]) {
		return cand{}, false
	}
	if pos > 0 && (isAlpha(s[pos-1]) || s[pos-1] == '$' || s[pos-1] == '+' || s[pos-1] == '(') {
		return cand{}, false
	}
	if currencyBefore(s, pos) {
		return cand{}, false
	}
	// Groups of digits joined by single spaces or dashes.
	var groups []int
	j := pos
	var sep byte
	for {
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		groups = append(groups, k-j)
		j = k
		if j+1 < len(s) && (s[j] == ' ' || s[j] == '-') && isDigit(s[j+1]) && (sep == 0 || s[j] == sep) {
			sep = s[j]
			j++
			continue
		}
		break
	}
	end := j
	if end < len(s) && (isAlpha(s[end]) || s[end] == '_' || s[end] == '%') {
		return cand{}, false
	}
	// Amounts and decimals: 1,234 or 12.50.
	if end+1 < len(s) && (s[end] == ',' || s[end] == '.' || s[end] == '/' || s[end] == ':') && isDigit(s[end+1]) {
		return cand{}, false
	}
	digits := digitsOf(s[pos:end])
	if phoneShaped(groups) {
		return cand{}, false
	}
	if routing {
		if len(digits) != 9 {
			return cand{}, false
		}
		if loose && !abaValid(digits) {
			return cand{}, false
		}
		return cand{pos, end, ClassBank, prioBank}, true
	}
	if len(digits) < 6 || len(digits) > 17 {
		return cand{}, false
	}
	if loose && len(groups) > 1 {
		for _, g := range groups {
			if g < 3 {
				return cand{}, false
			}
		}
	}
	return cand{pos, end, ClassBank, prioBank}, true
}

// phoneShaped reports the digit groupings of North American phone numbers
// (3-3-4, 1-3-3-4, 3-4) and of most international ones written with spaces.
func phoneShaped(g []int) bool {
	switch len(g) {
	case 2:
		return g[0] == 3 && g[1] == 4
	case 3:
		return g[0] == 3 && g[1] == 3 && g[2] == 4
	case 4:
		return g[0] == 1 && g[1] == 3 && g[2] == 3 && g[3] == 4
	}
	return false
}

// abaValid checks the ABA routing number checksum (weights 3, 7, 1).
func abaValid(d string) bool {
	if len(d) != 9 {
		return false
	}
	w := [9]int{3, 7, 1, 3, 7, 1, 3, 7, 1}
	sum := 0
	for i := 0; i < 9; i++ {
		sum += w[i] * int(d[i]-'0')
	}
	return sum%10 == 0 && d != "000000000"
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
