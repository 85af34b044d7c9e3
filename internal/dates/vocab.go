// Package dates is the one date parser of Tidings: one vocabulary of date
// phrases — month names, weekdays, count words (vocab.go) — one grammar of
// phrase kinds built from it (grammar.go), the calendar rules, and one
// entry point, Parse. Its two readers read the same words in opposite
// directions: the search query parser (internal/index, a query's time
// window, counted back from now: Past, every phrase) and the dossier
// (internal/dossier, when a commitment is due, counted forward from the
// message: Future, the first kind of phrase that occurs). Pure: no clock
// of its own, no I/O; callers pass now, in the location to read in.
package dates

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Months maps every month name and abbreviation to its month.
var Months = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4, "may": 5,
	"june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9,
	"october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

// Weekdays maps every weekday name and abbreviation to its day. Some
// abbreviations are also words ("sun", "wed", "mon", "sat"): a grammar
// reads them only after a preposition.
var Weekdays = map[string]time.Weekday{
	"sunday": 0, "sun": 0, "monday": 1, "mon": 1, "tuesday": 2, "tue": 2, "tues": 2,
	"wednesday": 3, "wed": 3, "weds": 3, "thursday": 4, "thu": 4, "thur": 4, "thurs": 4,
	"friday": 5, "fri": 5, "saturday": 6, "sat": 6,
}

// Counts maps the count words of "in the last few days", "two weeks ago"
// and "in a couple of hours" to their number.
var Counts = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "few": 3, "a few": 3, "couple of": 2, "a couple of": 2,
}

// Count reads a count: a word of Counts (spacing ignored) or digits; 0 if
// neither.
func Count(s string) int {
	s = strings.Join(strings.Fields(s), " ")
	if n, ok := Counts[s]; ok {
		return n
	}
	n, _ := strconv.Atoi(s)
	return n
}

// alternation is a regular-expression alternation of the words, longest
// first, spaces matching any run of white space.
func alternation(words []string) string {
	slices.SortFunc(words, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	for i, w := range words {
		words[i] = strings.ReplaceAll(regexp.QuoteMeta(w), " ", `\s+`)
	}
	return strings.Join(words, "|")
}

// MonthPattern is an alternation of the month names of Months; without
// may it leaves out "may", which is mostly the verb unless a day number
// follows.
func MonthPattern(may bool) string {
	var ws []string
	for w := range Months {
		if may || w != "may" {
			ws = append(ws, w)
		}
	}
	return alternation(ws)
}

// WeekdayPattern is an alternation of the weekday names of Weekdays.
func WeekdayPattern() string {
	var ws []string
	for w := range Weekdays {
		ws = append(ws, w)
	}
	return alternation(ws)
}

// CountPattern is an alternation of the count words of Counts and 1-3
// digits.
func CountPattern() string {
	var ws []string
	for w := range Counts {
		ws = append(ws, w)
	}
	return `\d{1,3}|` + alternation(ws)
}

// DayStart is the midnight that starts t's day, in t's location.
func DayStart(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// WeekStart is the Monday 00:00 of t's week.
func WeekStart(t time.Time) time.Time {
	d := DayStart(t)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

// MonthStart is the first day of t's month, 00:00.
func MonthStart(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, t.Location())
}

// AddUnit adds n days, weeks, months or years ("day", "week", "month",
// anything else: years) to t.
func AddUnit(t time.Time, unit string, n int) time.Time {
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

// Previous is the most recent wd before today's date (today itself when
// includeToday): "last Friday", "on Friday" in a query about the past.
func Previous(today time.Time, wd time.Weekday, includeToday bool) time.Time {
	today = DayStart(today)
	back := (int(today.Weekday()) - int(wd) + 7) % 7
	if back == 0 && !includeToday {
		back = 7
	}
	return today.AddDate(0, 0, -back)
}

// Upcoming is the next wd after today's date ("on saturday" said on a
// Saturday is next week's: today would be "today").
func Upcoming(today time.Time, wd time.Weekday) time.Time {
	today = DayStart(today)
	ahead := (int(wd) - int(today.Weekday()) + 7) % 7
	if ahead == 0 {
		ahead = 7
	}
	return today.AddDate(0, 0, ahead)
}

// InNextWeek is wd in the week after today's: "next Friday".
func InNextWeek(today time.Time, wd time.Weekday) time.Time {
	return WeekStart(today).AddDate(0, 0, 7+(int(wd)+6)%7)
}

// RecentMonth is the first day of the most recent mon that has begun by
// now (this month included unless strict: "last November" said in
// November is a year ago).
func RecentMonth(now time.Time, mon time.Month, strict bool) time.Time {
	y := now.Year()
	if mon > now.Month() || strict && mon == now.Month() {
		y--
	}
	return time.Date(y, mon, 1, 0, 0, 0, 0, now.Location())
}

// ComingMonth is the first day of the next mon that has not ended by
// today (this month included).
func ComingMonth(today time.Time, mon time.Month) time.Time {
	y := today.Year()
	if mon < today.Month() {
		y++
	}
	return time.Date(y, mon, 1, 0, 0, 0, 0, today.Location())
}
