package redact

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"regexp"
	"strings"
)

// API keys and tokens (class apikey).
//
// The rules live in gitleaks_rules.go: vendor tokens with a fixed prefix or
// marker, PEM private key blocks, JWTs and a generic "keyword = value" rule.
// They work like gitleaks: each rule has lower-case keywords, one of which
// must occur in the message before its expression runs; an optional
// submatch names the secret inside the match; a minimum Shannon entropy of
// the secret weeds out placeholders; and an allow function can drop known
// non-secrets. Only the secret is masked, never the keyword before it.

// keyRule is one detection rule.
type keyRule struct {
	id       string
	minRun   int      // prefilter: the text must hold a token run this long (see doc.maxRun)
	keywords []string // lower-case substrings; one must occur in the text
	// caseKeywords, when set, replace keywords with case-sensitive
	// substrings of the original text ("SK" rather than "sk", which is in
	// every "ask").
	caseKeywords []string
	needs        []string // further substrings of the original text, one of which must occur
	// atKeywords: re is anchored and runs at each occurrence of a keyword
	// (semi-generic rules); the allow function then sees the whole
	// identifier before the keyword.
	atKeywords bool
	wordStart  bool // with atKeywords: the keyword must start a word
	re         *regexp.Regexp
	group      int     // submatch holding the secret; 0 means the whole match
	entropy    float64 // minimum Shannon entropy (bits per byte) of the secret
	// allow, when set, reports a match that is not a secret; upto is the
	// match text up to the end of the secret (keyword, operator, secret).
	allow func(secret, upto string) bool
}

func findAPIKeys(d *doc, cs []cand) []cand {
	l := d.lower()
	for i := range keyRules {
		r := &keyRules[i]
		if d.maxRun < r.minRun {
			continue
		}
		if r.needs != nil && !containsAny(d.s, r.needs...) {
			continue
		}
		if r.caseKeywords != nil {
			if !containsAny(d.s, r.caseKeywords...) {
				continue
			}
		} else if !containsAny(l, r.keywords...) {
			continue
		}
		if r.atKeywords {
			cs = findAtKeywords(d, l, r, cs)
			continue
		}
		for _, m := range r.re.FindAllStringSubmatchIndex(d.s, -1) {
			a, b := m[0], m[1]
			if r.group > 0 {
				if m[2*r.group] < 0 {
					continue
				}
				a, b = m[2*r.group], m[2*r.group+1]
			}
			secret := d.s[a:b]
			if r.entropy > 0 && shannon(secret) < r.entropy {
				continue
			}
			if r.allow != nil && r.allow(secret, d.s[m[0]:b]) {
				continue
			}
			cs = append(cs, cand{a, b, ClassAPIKey, prioAPIKey})
		}
	}
	return cs
}

// findAtKeywords runs an anchored semi-generic rule at every keyword
// occurrence, in a window long enough for the longest match.
func findAtKeywords(d *doc, l string, r *keyRule, cs []cand) []cand {
	done := 0 // end of the last secret found: later keywords inside it add nothing
	for _, k := range r.keywords {
		for i := 0; i < len(l); {
			j := strings.Index(l[i:], k)
			if j < 0 {
				break
			}
			occ := i + j
			i = occ + 1
			if occ < done || r.wordStart && occ > 0 && wordByte(l[occ-1]) {
				continue
			}
			end := occ + 256
			if end > len(d.s) {
				end = len(d.s)
			}
			m := r.re.FindStringSubmatchIndex(d.s[occ:end])
			if m == nil || m[2*r.group] < 0 {
				continue
			}
			a, b := occ+m[2*r.group], occ+m[2*r.group+1]
			secret := d.s[a:b]
			if r.entropy > 0 && shannon(secret) < r.entropy {
				continue
			}
			// The identifier may start up to 50 bytes before the keyword.
			id := occ
			for id > 0 && occ-id < 50 && (isAlnum(d.s[id-1]) || d.s[id-1] == '_' || d.s[id-1] == '.' || d.s[id-1] == '-') {
				id--
			}
			if r.allow != nil && r.allow(secret, d.s[id:b]) {
				continue
			}
			cs = append(cs, cand{a, b, ClassAPIKey, prioAPIKey})
			done = b
		}
	}
	return cs
}

// shannon returns the Shannon entropy of s in bits per byte.
func shannon(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	n := float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c == 0 {
			continue
		}
		p := float64(c) / n
		h -= p * math.Log2(p)
	}
	return h
}

// jwtHeaderOK reports whether the first segment of a JWT decodes to a JSON
// object, the formal-validity check detect-secrets applies.
func jwtHeaderOK(token string) bool {
	seg, _, _ := strings.Cut(token, ".")
	seg = strings.TrimRight(seg, "=")
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(seg)
		if err != nil {
			return false
		}
	}
	return len(b) > 1 && b[0] == '{' && json.Valid(b)
}

// genericValueOK applies this package's message-specific checks to the
// value of a keyword = value match: at least one digit and one letter (the
// check gitleaks notes it would like but cannot express in RE2), and no
// trailing full stop (sentence punctuation, not part of the value).
func genericValueOK(v string) bool {
	digit, letter := false, false
	for i := 0; i < len(v); i++ {
		switch {
		case isDigit(v[i]):
			digit = true
		case isAlpha(v[i]):
			letter = true
		}
	}
	return digit && letter
}
