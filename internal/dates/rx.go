package dates

import (
	"regexp"
	"strings"
)

// Rx is a regular expression with literal hints: a string that contains
// none of the hints cannot match, so most texts skip the (much slower)
// regular expression. Every match must contain at least one hint;
// TestHintsNeverHideAMatch checks the grammar's examples with and without
// them. The date grammar is written in it, and so is the dossier's
// commitment grammar (docs/dossier.md), which reads the same sentences.
type Rx struct {
	re    *regexp.Regexp
	hints []string
}

// MustRx compiles pattern (panicking on a bad one, as regexp.MustCompile);
// without hints every text is tried.
func MustRx(pattern string, hints ...string) *Rx {
	return &Rx{re: regexp.MustCompile(pattern), hints: hints}
}

func (r *Rx) maybe(s string) bool {
	if len(r.hints) == 0 {
		return true
	}
	for _, h := range r.hints {
		if strings.Contains(s, h) {
			return true
		}
	}
	return false
}

// MatchString reports whether s contains a match.
func (r *Rx) MatchString(s string) bool { return r.maybe(s) && r.re.MatchString(s) }

// FindString is the leftmost match, "" if none.
func (r *Rx) FindString(s string) string {
	if !r.maybe(s) {
		return ""
	}
	return r.re.FindString(s)
}

// FindStringSubmatch is the leftmost match and its groups, nil if none.
func (r *Rx) FindStringSubmatch(s string) []string {
	if !r.maybe(s) {
		return nil
	}
	return r.re.FindStringSubmatch(s)
}

// FindAllStringSubmatchIndex is regexp's, after the hint check.
func (r *Rx) FindAllStringSubmatchIndex(s string, n int) [][]int {
	if !r.maybe(s) {
		return nil
	}
	return r.re.FindAllStringSubmatchIndex(s, n)
}

// Hints of the patterns that must contain a digit or a month name (every
// name of Months starts with one of these).
var (
	digitHints = strings.Split("0 1 2 3 4 5 6 7 8 9", " ")
	monthHints = strings.Split("jan feb mar apr may jun jul aug sep oct nov dec", " ")
)
