package dossier

import (
	"regexp"
	"strings"
)

// rx is a regular expression with literal hints: a string that contains
// none of the hints cannot match, so most messages skip the (much slower)
// regular expression. Every match must contain at least one hint; the
// tests check that the patterns' examples keep matching.
type rx struct {
	re    *regexp.Regexp
	hints []string
}

func mustRx(pattern string, hints ...string) *rx {
	return &rx{re: regexp.MustCompile(pattern), hints: hints}
}

func (r *rx) maybe(s string) bool {
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

func (r *rx) MatchString(s string) bool { return r.maybe(s) && r.re.MatchString(s) }

func (r *rx) FindString(s string) string {
	if !r.maybe(s) {
		return ""
	}
	return r.re.FindString(s)
}

func (r *rx) FindStringSubmatch(s string) []string {
	if !r.maybe(s) {
		return nil
	}
	return r.re.FindStringSubmatch(s)
}

func (r *rx) FindAllStringSubmatchIndex(s string, n int) [][]int {
	if !r.maybe(s) {
		return nil
	}
	return r.re.FindAllStringSubmatchIndex(s, n)
}

var (
	digitHints = strings.Split("0 1 2 3 4 5 6 7 8 9", " ")
	monthHints = strings.Split("jan feb mar apr may jun jul aug sep oct nov dec", " ")
)
