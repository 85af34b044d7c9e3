package dates

import (
	"strconv"
	"strings"
	"time"
)

// rule is one kind of date phrase: its pattern, which direction reads it,
// and how a match resolves. A kind only one reader knows says so: a query
// has no use for "tomorrow" or a clock time, a due date none for "3 days
// ago"; where both read the same words ("in March", "on Friday", "this
// weekend") the calendar rule they count with is shared (vocab.go).
type rule struct {
	name string
	dir  Direction
	rx   *Rx
	// relative: the phrases count from now (Phrase.Relative).
	relative bool
	// skip: the kind gives way in this text.
	skip func(text string) bool
	// read resolves a match; ok false: the words name no date.
	read func(c *reading, m match) (Phrase, bool)
	// clock, instead of read: a clock time, which a FirstKind pick sets
	// on the day phrase.
	clock func(c *reading, m match) (h, mi int, text string, ok bool)
}

// reads reports whether r is read in direction dir in this text.
func (r *rule) reads(dir Direction, text string) bool {
	return r.dir == dir && (r.skip == nil || !r.skip(text))
}

// The grammar, in the order its kinds are tried: a Pick Every reading
// blanks each kind's spans before the next kind looks; a Pick FirstKind
// reading takes the first kind that occurs. The order within each
// direction is what the readers were tuned on (TestParsePast,
// TestParseFuture, the dossier evaluation, the index's TestRetrievalQuality).
var grammar []rule

func init() {
	grammar = []rule{
		// Dates.
		{name: "iso date", dir: Past, rx: MustRx(`\b(\d{4})-(\d{2})-(\d{2})\b`), read: readISODate},
		{name: "month day", dir: Future, rx: MustRx(`\b(`+MonthPattern(true)+`)\.? (\d{1,2})(?:st|nd|rd|th)?(?:\s*(?:-|–|—|to)\s*(\d{1,2})(?:st|nd|rd|th)?)?(?:,? (\d{4}))?\b`, monthHints...), read: readMonthDay},
		{name: "day month", dir: Future, rx: MustRx(`\b(\d{1,2})(?:st|nd|rd|th)? (?:of )?(`+MonthPattern(true)+`)\b`, monthHints...), read: readDayMonth},
		{name: "numeric date", dir: Future, rx: MustRx(`\b(\d{1,2})/(\d{1,2})(?:/(\d{2}|\d{4}))?\b`, "/"), read: readNumericDate},
		// Counted from now.
		{name: "last n", dir: Past, relative: true, rx: MustRx(`\b(?:in\s+the\s+|over\s+the\s+)?(?:last|past|previous)\s+(` + CountPattern() + `)\s+(day|week|month|year)s?\b`), read: readLastN},
		{name: "ago", dir: Past, relative: true, rx: MustRx(`\b(` + CountPattern() + `)\s+(day|week|month|year)s?\s+ago\b`), read: readAgo},
		// Named days and periods around today.
		{name: "relative past", dir: Past, relative: true, rx: MustRx(`\b(today|tonight|this\s+morning|this\s+afternoon|this\s+evening|yesterday|(?:this|last|past|previous)\s+(?:week|month|year|weekend))\b`), read: readRelativePast},
		{name: "relative future", dir: Future, relative: true, rx: reRelativeFuture, skip: eodRefinesWeekday, read: readRelativeFuture},
		// Weekdays: "on Friday" names a day (often the topic's day: "dinner
		// on Friday"); "last Friday" and "this Friday" count from today;
		// "since Friday" is a window.
		{name: "weekday relative", dir: Past, relative: true, rx: MustRx(`\b(last|this)\s+(` + WeekdayPattern() + `)\b`), read: readWeekdayPast},
		{name: "weekday on", dir: Past, rx: MustRx(`\b(on|since)\s+(` + WeekdayPattern() + `)\b`), read: readWeekdayPast},
		{name: "weekday", dir: Future, rx: reWeekdayFuture, read: readWeekdayFuture},
		{name: "ordinal", dir: Future, rx: reOrdinal, read: readOrdinal},
		{name: "in n", dir: Future, relative: true, rx: MustRx(`\bin (`+CountPattern()+`) (minutes?|mins?|hours?|hrs?|days?|weeks?|months?)\b`, "in "), read: readInN},
		// Months and years.
		{name: "month relative", dir: Past, relative: true, rx: MustRx(`\b(last|this)\s+(` + MonthPattern(true) + `)()\b`), read: readMonthPast},
		{name: "month in", dir: Past, rx: MustRx(`\b(in|during|since)\s+(` + MonthPattern(true) + `)(?:\s+(\d{4}))?\b`), read: readMonthPast},
		{name: "month year", dir: Past, rx: MustRx(`\b(` + MonthPattern(true) + `)\s+(\d{4})\b`), read: readMonthYear},
		{name: "month", dir: Future, rx: MustRx(`\b(?:in|by|this|next|early|late|mid|until|before)[ -](`+MonthPattern(false)+`)\b`, monthHints...), read: readMonthFuture},
		{name: "in year", dir: Past, rx: MustRx(`\b(in|during|since)\s+(\d{4})\b`), read: readInYear},
		// Clock times.
		{name: "noon", dir: Future, rx: MustRx(`\b(noon|midday|midnight)\b`, "noon", "midday", "midnight"), clock: readNoon},
		{name: "clock", dir: Future, rx: MustRx(`(?:\b(at|by|around|before|after|@|from)\s*)?\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?(?:\b|$)`, digitHints...), clock: readClock},
	}
}

var (
	reRelativeFuture = MustRx(`\b(today|tonight|this evening|this afternoon|this morning|tomorrow|tmrw|tmr|tomorow|tomorrow night|this weekend|next weekend|this week|next week|end of (?:the )?week|eow|next month|this month|end of (?:the )?month|eod|end of (?:the )?day)\b`, "today", "tonight", "this ", "tom", "tmr", "weekend", "week", "eow", "month", "eod", "end of")
	reOrdinal        = MustRx(`\b(?:the|on the|by the) (\d{1,2})(st|nd|rd|th)\b`, "the ")
	reWeekdayFuture  = MustRx(`\b(next |this |on |by |until |before )?(`+WeekdayPattern()+`)\b`, "mon", "tue", "wed", "thu", "fri", "sat", "sun")
)

// window is a phrase of the past reading.
func window(r Range, isWindow bool, precision string) (Phrase, bool) {
	return Phrase{Range: r, Window: isWindow, Precision: precision}, true
}

// day is one whole day.
func day(t time.Time, text string) Phrase {
	return Phrase{Text: text, Range: Range{t, t.AddDate(0, 0, 1)}, Precision: "day"}
}

func readISODate(c *reading, m match) (Phrase, bool) {
	t, err := time.ParseInLocation("2006-01-02", m.g(0), c.now.Location())
	if err != nil {
		return Phrase{}, false
	}
	return window(Range{t, t.AddDate(0, 0, 1)}, true, "day")
}

// readLastN: "in the last 5 days" starts at the midnight of the fifth day
// back, counting today; longer units count back from now.
func readLastN(c *reading, m match) (Phrase, bool) {
	n := Count(m.g(1))
	if n <= 0 {
		return Phrase{}, false
	}
	if m.g(2) == "day" {
		return window(Range{c.today.AddDate(0, 0, -(n - 1)), time.Time{}}, true, "")
	}
	return window(Range{AddUnit(c.now, m.g(2), -n), time.Time{}}, true, "")
}

func readAgo(c *reading, m match) (Phrase, bool) {
	n := Count(m.g(1))
	if n <= 0 {
		return Phrase{}, false
	}
	now := c.now
	switch m.g(2) {
	case "day":
		d := c.today.AddDate(0, 0, -n)
		return window(Range{d, d.AddDate(0, 0, 1)}, false, "day")
	case "week":
		w := WeekStart(now).AddDate(0, 0, -7*n)
		return window(Range{w, w.AddDate(0, 0, 7)}, false, "week")
	case "month":
		first := MonthStart(now).AddDate(0, -n, 0)
		return window(Range{first, first.AddDate(0, 1, 0)}, false, "month")
	default:
		y := time.Date(now.Year()-n, 1, 1, 0, 0, 0, 0, now.Location())
		return window(Range{y, y.AddDate(1, 0, 0)}, false, "year")
	}
}

func readRelativePast(c *reading, m match) (Phrase, bool) {
	now, today := c.now, c.today
	w := strings.Fields(m.g(1))
	switch w[0] {
	case "today", "tonight":
		return window(Range{today, today.AddDate(0, 0, 1)}, false, "day")
	case "yesterday":
		return window(Range{today.AddDate(0, 0, -1), today}, false, "day")
	}
	if len(w) < 2 {
		return Phrase{}, false
	}
	if w[1] == "morning" || w[1] == "afternoon" || w[1] == "evening" {
		return window(Range{today, today.AddDate(0, 0, 1)}, false, "day")
	}
	last := w[0] != "this"
	switch w[1] {
	case "week":
		ws := WeekStart(now)
		if last {
			return window(Range{ws.AddDate(0, 0, -7), ws}, false, "week")
		}
		return window(Range{ws, ws.AddDate(0, 0, 7)}, false, "week")
	case "weekend":
		sat := WeekStart(now).AddDate(0, 0, 5)
		if last || now.Before(sat) {
			sat = sat.AddDate(0, 0, -7)
		}
		return window(Range{sat, sat.AddDate(0, 0, 2)}, false, "weekend")
	case "month":
		first := MonthStart(now)
		if last {
			return window(Range{first.AddDate(0, -1, 0), first}, false, "month")
		}
		return window(Range{first, first.AddDate(0, 1, 0)}, false, "month")
	default: // year
		first := time.Date(now.Year(), 1, 1, 0, 0, 0, 0, now.Location())
		if last {
			return window(Range{first.AddDate(-1, 0, 0), first}, false, "year")
		}
		return window(Range{first, first.AddDate(1, 0, 0)}, false, "year")
	}
}

// readWeekdayPast: the most recent such day before today (today itself
// for "this").
func readWeekdayPast(c *reading, m match) (Phrase, bool) {
	d := Previous(c.today, Weekdays[m.g(2)], m.g(1) == "this")
	if m.g(1) == "since" {
		return window(Range{d, time.Time{}}, true, "")
	}
	return window(Range{d, d.AddDate(0, 0, 1)}, false, "day")
}

// monthPast is a named month counted back: the most recent one (a year
// ago for "last" in that month), or of the year given.
func monthPast(c *reading, mon time.Month, year string, mode string) (Phrase, bool) {
	first := RecentMonth(c.now, mon, mode == "last")
	if year != "" {
		y, _ := strconv.Atoi(year)
		first = time.Date(y, mon, 1, 0, 0, 0, 0, c.now.Location())
	}
	if mode == "since" {
		return window(Range{first, time.Time{}}, true, "")
	}
	return window(Range{first, first.AddDate(0, 1, 0)}, mode == "during", "month")
}

func readMonthPast(c *reading, m match) (Phrase, bool) {
	if m.g(2) == "may" && m.g(1) == "this" && m.g(3) == "" {
		return Phrase{}, false // "this may be…"
	}
	return monthPast(c, Months[m.g(2)], m.g(3), m.g(1))
}

func readMonthYear(c *reading, m match) (Phrase, bool) {
	return monthPast(c, Months[m.g(1)], m.g(2), "in")
}

func readInYear(c *reading, m match) (Phrase, bool) {
	y, _ := strconv.Atoi(m.g(2))
	if y < 1990 || y > c.now.Year()+1 {
		return Phrase{}, false
	}
	first := time.Date(y, 1, 1, 0, 0, 0, 0, c.now.Location())
	if m.g(1) == "since" {
		return window(Range{first, time.Time{}}, true, "")
	}
	return window(Range{first, first.AddDate(1, 0, 0)}, m.g(1) == "during", "year")
}

// dateOf is a day of the future reading; without a year a date more than
// two months past is next year's ("Jan 19" said in December).
func dateOf(c *reading, y int, mo time.Month, n int, guessYear bool, text string) (Phrase, bool) {
	if n < 1 || n > 31 {
		return Phrase{}, false
	}
	t := time.Date(y, mo, n, 0, 0, 0, 0, c.now.Location())
	if t.Month() != mo {
		return Phrase{}, false // Feb 30
	}
	if guessYear && t.Before(c.today.AddDate(0, -2, 0)) {
		t = t.AddDate(1, 0, 0)
	}
	return day(t, text), true
}

// readMonthDay: "Dec 15", "jan 19–22" (a range of days), "march 3, 2027".
func readMonthDay(c *reading, m match) (Phrase, bool) {
	n, _ := strconv.Atoi(m.g(2))
	y := c.now.Year()
	if m.g(4) != "" {
		y, _ = strconv.Atoi(m.g(4))
	}
	p, ok := dateOf(c, y, Months[m.g(1)], n, m.g(4) == "", m.g(0))
	if ok && m.g(3) != "" {
		if e, _ := strconv.Atoi(m.g(3)); e > n && e <= 31 {
			p.Range.To = time.Date(p.Range.From.Year(), p.Range.From.Month(), e+1, 0, 0, 0, 0, c.now.Location())
			p.Precision = "days"
		}
	}
	return p, ok
}

func readDayMonth(c *reading, m match) (Phrase, bool) {
	n, _ := strconv.Atoi(m.g(1))
	return dateOf(c, c.now.Year(), Months[m.g(2)], n, true, m.g(0))
}

// readNumericDate: month/day[/year], "12/15".
func readNumericDate(c *reading, m match) (Phrase, bool) {
	mo, _ := strconv.Atoi(m.g(1))
	n, _ := strconv.Atoi(m.g(2))
	y := c.now.Year()
	if m.g(3) != "" {
		y, _ = strconv.Atoi(m.g(3))
		if y < 100 {
			y += 2000
		}
	}
	if mo < 1 || mo > 12 {
		return Phrase{}, false
	}
	return dateOf(c, y, time.Month(mo), n, m.g(3) == "", m.g(0))
}

// eodRefinesWeekday: "Friday EOD" is Friday; only "EOD" without a
// weekday is today.
func eodRefinesWeekday(text string) bool {
	switch reRelativeFuture.FindString(text) {
	case "eod", "end of day", "end of the day":
		return reWeekdayFuture.MatchString(text)
	}
	return false
}

func readRelativeFuture(c *reading, m match) (Phrase, bool) {
	today, w := c.today, m.g(0)
	switch w {
	case "today", "tonight", "this evening", "this afternoon", "this morning", "eod", "end of day", "end of the day":
		return day(today, w), true
	case "tomorrow", "tmrw", "tmr", "tomorow", "tomorrow night":
		return day(today.AddDate(0, 0, 1), w), true
	case "this weekend", "next weekend":
		sat := today.AddDate(0, 0, (int(time.Saturday)-int(today.Weekday())+7)%7)
		if w == "next weekend" && today.Weekday() != time.Saturday && today.Weekday() != time.Sunday {
			sat = sat.AddDate(0, 0, 7)
		}
		if today.Weekday() == time.Sunday && w == "this weekend" {
			sat = today.AddDate(0, 0, -1)
		}
		return Phrase{Text: w, Range: Range{sat, sat.AddDate(0, 0, 2)}, Precision: "weekend"}, true
	case "this week":
		return Phrase{Text: w, Range: Range{today, WeekStart(today).AddDate(0, 0, 7)}, Precision: "week"}, true
	case "end of week", "end of the week", "eow":
		fri := WeekStart(today).AddDate(0, 0, 4)
		if fri.Before(today) {
			fri = today
		}
		return day(fri, w), true
	case "next week":
		mon := WeekStart(today).AddDate(0, 0, 7)
		return Phrase{Text: w, Range: Range{mon, mon.AddDate(0, 0, 7)}, Precision: "week"}, true
	case "this month", "end of month", "end of the month":
		return Phrase{Text: w, Range: Range{today, MonthStart(today).AddDate(0, 1, 0)}, Precision: "month"}, true
	case "next month":
		first := MonthStart(today).AddDate(0, 1, 0)
		return Phrase{Text: w, Range: Range{first, first.AddDate(0, 1, 0)}, Precision: "month"}, true
	}
	return Phrase{}, false
}

// readWeekdayFuture: the next such day ("on saturday" said on a Saturday
// is next week's: today would be "today" or "tonight"); "next friday" is
// the one in next week.
func readWeekdayFuture(c *reading, m match) (Phrase, bool) {
	prep, name := m.g(1), m.g(2)
	switch name {
	case "sat", "sun", "wed", "mon":
		// Short forms that are also words ("sun", "wed" …) count only
		// with a preposition.
		if prep == "" {
			return Phrase{}, false
		}
	}
	wd := Weekdays[name]
	t := Upcoming(c.today, wd)
	if strings.TrimSpace(prep) == "next" {
		t = InNextWeek(c.today, wd)
	}
	return day(t, strings.TrimSpace(m.g(0))), true
}

// readOrdinal: "the 20th" is this month's, or next month's once past.
func readOrdinal(c *reading, m match) (Phrase, bool) {
	today, loc := c.today, c.now.Location()
	n, _ := strconv.Atoi(m.g(1))
	t := time.Date(today.Year(), today.Month(), n, 0, 0, 0, 0, loc)
	if n < 1 || n > 31 || t.Month() != today.Month() {
		return Phrase{}, false
	}
	if t.Before(today) {
		t = time.Date(today.Year(), today.Month()+1, n, 0, 0, 0, 0, loc)
	}
	return day(t, m.g(0)), true
}

// OrdinalDay is the day number of the first "the 20th" in text: a reader
// that knows the month meant places it there (the dossier reads it inside
// a plan's "Jan 19–22"; alone it is this month's or next, readOrdinal).
func OrdinalDay(text string) (int, bool) {
	m := reOrdinal.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	return n, true
}

// readInN: "in an hour" is a time; "in 2 days", "in a few weeks" a day.
func readInN(c *reading, m match) (Phrase, bool) {
	n, unit, now := Count(m.g(1)), m.g(2), c.now
	var t time.Time
	switch unit[0] {
	case 'm':
		if strings.HasPrefix(unit, "mo") {
			t = now.AddDate(0, n, 0)
			break
		}
		t = now.Add(time.Duration(n) * time.Minute)
		return Phrase{Text: m.g(0), Range: Range{t, t.Add(time.Hour)}, Precision: "time"}, true
	case 'h':
		t = now.Add(time.Duration(n) * time.Hour)
		return Phrase{Text: m.g(0), Range: Range{t, t.Add(time.Hour)}, Precision: "time"}, true
	case 'd':
		t = now.AddDate(0, 0, n)
	case 'w':
		t = now.AddDate(0, 0, 7*n)
	}
	return day(DayStart(t), m.g(0)), true
}

func readMonthFuture(c *reading, m match) (Phrase, bool) {
	first := ComingMonth(c.today, Months[m.g(1)])
	return Phrase{Text: m.g(0), Range: Range{first, first.AddDate(0, 1, 0)}, Precision: "month"}, true
}

func readNoon(c *reading, m match) (h, mi int, text string, ok bool) {
	if m.g(1) == "midnight" {
		return 23, 59, m.g(1), true
	}
	return 12, 0, m.g(1), true
}

// eveningWords make a bare small hour mean p.m.
var eveningWords = []string{"dinner", "drinks", "tonight", "evening", "party", "movie", "show", "concert", "bar", "night"}

// Evening reports whether text (lower case) mentions an evening activity
// (dinner, drinks, tonight …), which makes a bare "at 8" 20:00.
func Evening(text string) bool {
	for _, w := range eveningWords {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// readClock reads "3pm", "7:30", "at 8". A bare number counts only after
// at/by/around/before/@ ("at 3"), so "4 nights" and "$40" are not times;
// "at 3" is the afternoon, and "at 8" the evening when the text mentions
// dinner, drinks, tonight ….
func readClock(c *reading, m match) (h, mi int, text string, ok bool) {
	prep, hs, ms, ap := m.g(1), m.g(2), m.g(3), m.g(4)
	if prep == "" && ms == "" && ap == "" {
		return 0, 0, "", false
	}
	// Not part of a money amount, a date or a bigger number.
	s := c.text
	if st := m.idx[4]; st > 0 && (s[st-1] == '$' || s[st-1] == '/' || s[st-1] == '.' || s[st-1] == ',') {
		return 0, 0, "", false
	}
	if e := m.idx[5]; e < len(s) && (s[e] == '/' || s[e] == '%') {
		return 0, 0, "", false
	}
	h, _ = strconv.Atoi(hs)
	mi, _ = strconv.Atoi(ms)
	if h > 23 || mi > 59 {
		return 0, 0, "", false
	}
	switch {
	case strings.HasPrefix(ap, "p") && h < 12:
		h += 12
	case strings.HasPrefix(ap, "a") && h == 12:
		h = 0
	case ap == "" && h >= 1 && h <= 6:
		h += 12
	case ap == "" && h >= 7 && h <= 11 && Evening(s):
		h += 12
	}
	return h, mi, strings.TrimSpace(m.g(0)), true
}
