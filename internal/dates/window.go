package dates

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Range is a half-open interval [From, To); a zero bound is open.
type Range struct{ From, To time.Time }

// Intersect narrows r (when have) to dr, or returns dr.
func Intersect(r, dr Range, have bool) Range {
	if !have {
		return dr
	}
	if dr.From.After(r.From) {
		r.From = dr.From
	}
	if !dr.To.IsZero() && (r.To.IsZero() || dr.To.Before(r.To)) {
		r.To = dr.To
	}
	return r
}

// Match is one date expression found in a query.
type Match struct {
	Text  string // its words, normalised
	Range Range
	// Relative: counted from now (today, yesterday, last week, 3 days
	// ago, in the last 5 days, last Friday). Named months, weekdays ("on
	// Friday"), years and ISO dates are not.
	Relative bool
	// Window: the phrase itself asks for messages of a time window:
	// "since …", "during …", "in the last N …", an ISO date, or "from"
	// just before it ("texts from yesterday").
	Window     bool
	Start, End int // byte span in the text
}

var (
	reISODate    = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	reLastN      = regexp.MustCompile(`\b(?:in\s+the\s+|over\s+the\s+)?(?:last|past|previous)\s+(` + CountPattern() + `)\s+(day|week|month|year)s?\b`)
	reAgo        = regexp.MustCompile(`\b(` + CountPattern() + `)\s+(day|week|month|year)s?\s+ago\b`)
	reRelative   = regexp.MustCompile(`\b(today|tonight|this\s+morning|this\s+afternoon|this\s+evening|yesterday|(?:this|last|past|previous)\s+(?:week|month|year|weekend))\b`)
	reWeekdayRel = regexp.MustCompile(`\b(last|this)\s+(` + WeekdayPattern() + `)\b`)
	reWeekdayOn  = regexp.MustCompile(`\b(on|since)\s+(` + WeekdayPattern() + `)\b`)
	reMonthRel   = regexp.MustCompile(`\b(last|this)\s+(` + MonthPattern(true) + `)()\b`)
	reMonthIn    = regexp.MustCompile(`\b(in|during|since)\s+(` + MonthPattern(true) + `)(?:\s+(\d{4}))?\b`)
	reMonthYr    = regexp.MustCompile(`\b(` + MonthPattern(true) + `)\s+(\d{4})\b`)
	reInYear     = regexp.MustCompile(`\b(in|during|since)\s+(\d{4})\b`)
)

// Find finds the date expressions of a search query s (lower case) and
// reads each as a range counted back from now: a query asks about the
// past. Each is matched once: a span taken by one pattern is blanked
// before the next pattern runs. Matches are in text order.
func Find(s string, now time.Time) []Match {
	work := []byte(s)
	var out []Match
	cut := func(re *regexp.Regexp, relative bool, fn func(m []string) (dr Range, window, ok bool)) {
		cur := string(work)
		for _, loc := range re.FindAllStringSubmatchIndex(cur, -1) {
			m := make([]string, len(loc)/2)
			for i := range m {
				if loc[2*i] >= 0 {
					m[i] = cur[loc[2*i]:loc[2*i+1]]
				}
			}
			dr, window, ok := fn(m)
			if !ok {
				continue
			}
			switch lastWord(s[:loc[0]]) {
			case "from", "since", "during":
				window = true
			}
			out = append(out, Match{Text: strings.Join(strings.Fields(m[0]), " "), Range: dr, Relative: relative, Window: window, Start: loc[0], End: loc[1]})
			for i := loc[0]; i < loc[1]; i++ {
				work[i] = ' '
			}
		}
	}
	today := DayStart(now)
	cut(reISODate, false, func(m []string) (Range, bool, bool) {
		t, err := time.ParseInLocation("2006-01-02", m[0], now.Location())
		if err != nil {
			return Range{}, false, false
		}
		return Range{t, t.AddDate(0, 0, 1)}, true, true
	})
	cut(reLastN, true, func(m []string) (Range, bool, bool) {
		n := Count(m[1])
		if n <= 0 {
			return Range{}, false, false
		}
		if m[2] == "day" {
			return Range{today.AddDate(0, 0, -(n - 1)), time.Time{}}, true, true
		}
		return Range{AddUnit(now, m[2], -n), time.Time{}}, true, true
	})
	cut(reAgo, true, func(m []string) (Range, bool, bool) {
		n := Count(m[1])
		if n <= 0 {
			return Range{}, false, false
		}
		switch m[2] {
		case "day":
			d := today.AddDate(0, 0, -n)
			return Range{d, d.AddDate(0, 0, 1)}, false, true
		case "week":
			w := WeekStart(now).AddDate(0, 0, -7*n)
			return Range{w, w.AddDate(0, 0, 7)}, false, true
		case "month":
			first := MonthStart(now).AddDate(0, -n, 0)
			return Range{first, first.AddDate(0, 1, 0)}, false, true
		default:
			y := time.Date(now.Year()-n, 1, 1, 0, 0, 0, 0, now.Location())
			return Range{y, y.AddDate(1, 0, 0)}, false, true
		}
	})
	cut(reRelative, true, func(m []string) (Range, bool, bool) {
		w := strings.Fields(m[1])
		switch w[0] {
		case "today", "tonight":
			return Range{today, today.AddDate(0, 0, 1)}, false, true
		case "yesterday":
			return Range{today.AddDate(0, 0, -1), today}, false, true
		}
		if len(w) < 2 {
			return Range{}, false, false
		}
		if w[1] == "morning" || w[1] == "afternoon" || w[1] == "evening" {
			return Range{today, today.AddDate(0, 0, 1)}, false, true
		}
		last := w[0] != "this"
		switch w[1] {
		case "week":
			ws := WeekStart(now)
			if last {
				return Range{ws.AddDate(0, 0, -7), ws}, false, true
			}
			return Range{ws, ws.AddDate(0, 0, 7)}, false, true
		case "weekend":
			sat := WeekStart(now).AddDate(0, 0, 5)
			if last || now.Before(sat) {
				sat = sat.AddDate(0, 0, -7)
			}
			return Range{sat, sat.AddDate(0, 0, 2)}, false, true
		case "month":
			first := MonthStart(now)
			if last {
				return Range{first.AddDate(0, -1, 0), first}, false, true
			}
			return Range{first, first.AddDate(0, 1, 0)}, false, true
		default: // year
			first := time.Date(now.Year(), 1, 1, 0, 0, 0, 0, now.Location())
			if last {
				return Range{first.AddDate(-1, 0, 0), first}, false, true
			}
			return Range{first, first.AddDate(1, 0, 0)}, false, true
		}
	})
	// "on Friday" names a day (often the topic's day: "dinner on Friday");
	// "last Friday" and "this Friday" count from today; "since Friday" is a
	// window. The relative flag is per match, so these run as two passes.
	weekday := func(m []string) (Range, bool, bool) {
		// The most recent such day before today (today itself for "this").
		d := Previous(today, Weekdays[m[2]], m[1] == "this")
		if m[1] == "since" {
			return Range{d, time.Time{}}, true, true
		}
		return Range{d, d.AddDate(0, 0, 1)}, false, true
	}
	cut(reWeekdayRel, true, weekday)
	cut(reWeekdayOn, false, weekday)
	monthRange := func(mon time.Month, yearStr string, mode string) (Range, bool, bool) {
		first := RecentMonth(now, mon, mode == "last")
		if yearStr != "" {
			y, _ := strconv.Atoi(yearStr)
			first = time.Date(y, mon, 1, 0, 0, 0, 0, now.Location())
		}
		if mode == "since" {
			return Range{first, time.Time{}}, true, true
		}
		return Range{first, first.AddDate(0, 1, 0)}, mode == "during", true
	}
	month := func(m []string) (Range, bool, bool) {
		if m[2] == "may" && m[1] == "this" && m[3] == "" {
			return Range{}, false, false // "this may be…"
		}
		return monthRange(Months[m[2]], m[3], m[1])
	}
	cut(reMonthRel, true, month)
	cut(reMonthIn, false, month)
	cut(reMonthYr, false, func(m []string) (Range, bool, bool) {
		return monthRange(Months[m[1]], m[2], "in")
	})
	cut(reInYear, false, func(m []string) (Range, bool, bool) {
		y, _ := strconv.Atoi(m[2])
		if y < 1990 || y > now.Year()+1 {
			return Range{}, false, false
		}
		first := time.Date(y, 1, 1, 0, 0, 0, 0, now.Location())
		if m[1] == "since" {
			return Range{first, time.Time{}}, true, true
		}
		return Range{first, first.AddDate(1, 0, 0)}, m[1] == "during", true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// Extract reads every date expression of s (lower case) as one filter:
// the intersection of their ranges, s with them blanked out, and the
// matched phrases; ok is false when s has none. It is the grammar alone:
// which expressions filter a search is the index's decision.
func Extract(s string, now time.Time) (r Range, rest string, phrases []string, ok bool) {
	ms := Find(s, now)
	b := []byte(s)
	for i, m := range ms {
		r = Intersect(r, m.Range, i > 0)
		phrases = append(phrases, m.Text)
		for j := m.Start; j < m.End; j++ {
			b[j] = ' '
		}
	}
	return r, string(b), phrases, len(ms) > 0
}

// lastWord returns the last word of s (letters only), "" if none.
func lastWord(s string) string {
	f := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}
