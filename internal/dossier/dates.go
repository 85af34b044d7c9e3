package dossier

import (
	"strconv"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/dates"
)

// Due is when a commitment is due, read from the words of the message and
// resolved against the message's time in the owner's time zone.
type Due struct {
	// Phrase is the text it was read from ("Thursday at 3", "next week").
	Phrase string `json:"phrase"`
	// Start and End bound the moment or period; after End the commitment
	// is past.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Precision is "time", "day", "days" (a range), "weekend", "week" or
	// "month".
	Precision string `json:"precision"`
}

var (
	reWeekday  = mustRx(`\b(next |this |on |by |until |before )?(`+dates.WeekdayPattern()+`)\b`, "mon", "tue", "wed", "thu", "fri", "sat", "sun")
	reRelDay   = mustRx(`\b(today|tonight|this evening|this afternoon|this morning|tomorrow|tmrw|tmr|tomorow|tomorrow night|this weekend|next weekend|this week|next week|end of (?:the )?week|eow|next month|this month|end of (?:the )?month|eod|end of (?:the )?day)\b`, "today", "tonight", "this ", "tom", "tmr", "weekend", "week", "eow", "month", "eod", "end of")
	reIn       = mustRx(`\bin (`+dates.CountPattern()+`) (minutes?|mins?|hours?|hrs?|days?|weeks?|months?)\b`, "in ")
	reMonthDay = mustRx(`\b(`+dates.MonthPattern(true)+`)\.? (\d{1,2})(?:st|nd|rd|th)?(?:\s*(?:-|–|—|to)\s*(\d{1,2})(?:st|nd|rd|th)?)?(?:,? (\d{4}))?\b`, monthHints...)
	reDayMonth = mustRx(`\b(\d{1,2})(?:st|nd|rd|th)? (?:of )?(`+dates.MonthPattern(true)+`)\b`, monthHints...)
	reNumeric  = mustRx(`\b(\d{1,2})/(\d{1,2})(?:/(\d{2}|\d{4}))?\b`, "/")
	reOrdinal  = mustRx(`\b(?:the|on the|by the) (\d{1,2})(st|nd|rd|th)\b`, "the ")
	reTime     = mustRx(`(?:\b(at|by|around|before|after|@|from)\s*)?\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?(?:\b|$)`, digitHints...)
	reNoon     = mustRx(`\b(noon|midday|midnight)\b`, "noon", "midday", "midnight")
	reMonth    = mustRx(`\b(?:in|by|this|next|early|late|mid|until|before)[ -](`+dates.MonthPattern(false)+`)\b`, monthHints...)
)

// parseDue reads a due date or time from a lower-cased sentence written at
// ref (in loc). It returns nil when the sentence names no date or time.
// Evening activities ("dinner at 8") read small hours as p.m.
func parseDue(s string, ref time.Time, loc *time.Location) *Due {
	ref = ref.In(loc)
	today := dates.DayStart(ref)
	var d *Due
	day := func(t time.Time, phrase string) *Due {
		return &Due{Phrase: phrase, Start: t, End: t.AddDate(0, 0, 1), Precision: "day"}
	}
	switch {
	case reMonthDay.MatchString(s):
		m := reMonthDay.FindStringSubmatch(s)
		n, _ := strconv.Atoi(m[2])
		y := ref.Year()
		if m[4] != "" {
			y, _ = strconv.Atoi(m[4])
		}
		d = dateOf(y, dates.Months[m[1]], n, today, m[4] == "", m[0], loc)
		if d != nil && m[3] != "" {
			if e, _ := strconv.Atoi(m[3]); e > n && e <= 31 {
				d.End = time.Date(d.Start.Year(), d.Start.Month(), e+1, 0, 0, 0, 0, loc)
				d.Precision = "days"
			}
		}
	case reDayMonth.MatchString(s):
		m := reDayMonth.FindStringSubmatch(s)
		n, _ := strconv.Atoi(m[1])
		d = dateOf(ref.Year(), dates.Months[m[2]], n, today, true, m[0], loc)
	case reNumeric.MatchString(s):
		m := reNumeric.FindStringSubmatch(s)
		mo, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		y := ref.Year()
		if m[3] != "" {
			y, _ = strconv.Atoi(m[3])
			if y < 100 {
				y += 2000
			}
		}
		if mo >= 1 && mo <= 12 {
			d = dateOf(y, time.Month(mo), n, today, m[3] == "", m[0], loc)
		}
	case reRelDay.MatchString(s) && !(eodOnly(s) && reWeekday.MatchString(s)):
		m := reRelDay.FindString(s)
		switch m {
		case "today", "tonight", "this evening", "this afternoon", "this morning", "eod", "end of day", "end of the day":
			d = day(today, m)
		case "tomorrow", "tmrw", "tmr", "tomorow", "tomorrow night":
			d = day(today.AddDate(0, 0, 1), m)
		case "this weekend", "next weekend":
			sat := today.AddDate(0, 0, (int(time.Saturday)-int(today.Weekday())+7)%7)
			if m == "next weekend" && today.Weekday() != time.Saturday && today.Weekday() != time.Sunday {
				sat = sat.AddDate(0, 0, 7)
			}
			if today.Weekday() == time.Sunday && m == "this weekend" {
				sat = today.AddDate(0, 0, -1)
			}
			d = &Due{Phrase: m, Start: sat, End: sat.AddDate(0, 0, 2), Precision: "weekend"}
		case "this week", "end of week", "end of the week", "eow":
			mon := dates.WeekStart(today)
			d = &Due{Phrase: m, Start: today, End: mon.AddDate(0, 0, 7), Precision: "week"}
			if m != "this week" {
				fri := mon.AddDate(0, 0, 4)
				if fri.Before(today) {
					fri = today
				}
				d = day(fri, m)
			}
		case "next week":
			mon := dates.WeekStart(today).AddDate(0, 0, 7)
			d = &Due{Phrase: m, Start: mon, End: mon.AddDate(0, 0, 7), Precision: "week"}
		case "this month", "end of month", "end of the month":
			d = &Due{Phrase: m, Start: today, End: dates.MonthStart(today).AddDate(0, 1, 0), Precision: "month"}
		case "next month":
			first := dates.MonthStart(today).AddDate(0, 1, 0)
			d = &Due{Phrase: m, Start: first, End: first.AddDate(0, 1, 0), Precision: "month"}
		}
	case reWeekday.MatchString(s):
		m := reWeekday.FindStringSubmatch(s)
		wd := dates.Weekdays[m[2]]
		if m[2] == "sat" || m[2] == "sun" || m[2] == "wed" || m[2] == "mon" {
			// Short forms that are also words ("sun", "wed" …) count only
			// with a preposition.
			if m[1] == "" {
				break
			}
		}
		// "on saturday" said on a Saturday means next week's: today would
		// be "today" or "tonight".
		t := dates.Upcoming(today, wd)
		if strings.TrimSpace(m[1]) == "next" {
			t = dates.InNextWeek(today, wd) // "next friday": the one in next week
		}
		d = day(t, strings.TrimSpace(m[0]))
	case reOrdinal.MatchString(s):
		m := reOrdinal.FindStringSubmatch(s)
		n, _ := strconv.Atoi(m[1])
		t := time.Date(today.Year(), today.Month(), n, 0, 0, 0, 0, loc)
		if n < 1 || n > 31 || t.Month() != today.Month() {
			break
		}
		if t.Before(today) {
			t = time.Date(today.Year(), today.Month()+1, n, 0, 0, 0, 0, loc)
		}
		d = day(t, m[0])
	case reIn.MatchString(s):
		m := reIn.FindStringSubmatch(s)
		n := dates.Count(m[1])
		var t time.Time
		prec := "day"
		switch m[2][0] {
		case 'm':
			if strings.HasPrefix(m[2], "mo") {
				t = ref.AddDate(0, n, 0)
			} else {
				t, prec = ref.Add(time.Duration(n)*time.Minute), "time"
			}
		case 'h':
			t, prec = ref.Add(time.Duration(n)*time.Hour), "time"
		case 'd':
			t = ref.AddDate(0, 0, n)
		case 'w':
			t = ref.AddDate(0, 0, 7*n)
		}
		if prec == "time" {
			d = &Due{Phrase: m[0], Start: t, End: t.Add(time.Hour), Precision: "time"}
		} else {
			t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
			d = day(t, m[0])
		}
	case reMonth.MatchString(s):
		m := reMonth.FindStringSubmatch(s)
		first := dates.ComingMonth(today, dates.Months[m[1]])
		d = &Due{Phrase: m[0], Start: first, End: first.AddDate(0, 1, 0), Precision: "month"}
	}
	if h, mi, phrase, ok := parseClock(s); ok {
		if d == nil {
			// A time alone: today, or tomorrow if it has passed.
			t := time.Date(today.Year(), today.Month(), today.Day(), h, mi, 0, 0, loc)
			if !t.After(ref) {
				t = t.AddDate(0, 0, 1)
			}
			return &Due{Phrase: phrase, Start: t, End: t.Add(time.Hour), Precision: "time"}
		}
		if d.Precision == "day" {
			t := time.Date(d.Start.Year(), d.Start.Month(), d.Start.Day(), h, mi, 0, 0, loc)
			d.Phrase += " " + phrase
			d.Start, d.End, d.Precision = t, t.Add(time.Hour), "time"
		}
	}
	return d
}

// eodOnly reports whether the relative-day phrase is just "EOD", which a
// weekday refines ("Friday EOD").
func eodOnly(s string) bool {
	switch reRelDay.FindString(s) {
	case "eod", "end of day", "end of the day":
		return true
	}
	return false
}

// dateOf builds a day; without a year a date more than two months past is
// next year's ("Jan 19" said in December).
func dateOf(y int, mo time.Month, n int, today time.Time, guessYear bool, phrase string, loc *time.Location) *Due {
	if n < 1 || n > 31 {
		return nil
	}
	t := time.Date(y, mo, n, 0, 0, 0, 0, loc)
	if t.Month() != mo {
		return nil // Feb 30
	}
	if guessYear && t.Before(today.AddDate(0, -2, 0)) {
		t = t.AddDate(1, 0, 0)
	}
	return &Due{Phrase: phrase, Start: t, End: t.AddDate(0, 0, 1), Precision: "day"}
}

// eveningWords make a bare small hour mean p.m.
var eveningWords = []string{"dinner", "drinks", "tonight", "evening", "party", "movie", "show", "concert", "bar", "night"}

// parseClock finds a clock time: "3pm", "7:30", "at 8", "noon". A bare
// number counts only after at/by/around/before/@ ("at 3"), so "4 nights"
// and "$40" are not times.
func parseClock(s string) (h, m int, phrase string, ok bool) {
	if mm := reNoon.FindString(s); mm != "" {
		if mm == "midnight" {
			return 23, 59, mm, true
		}
		return 12, 0, mm, true
	}
	for _, sm := range reTime.FindAllStringSubmatchIndex(s, -1) {
		prep := sub(s, sm, 1)
		hs, ms, ap := sub(s, sm, 2), sub(s, sm, 3), sub(s, sm, 4)
		if prep == "" && ms == "" && ap == "" {
			continue
		}
		// Not part of a money amount, a date or a bigger number.
		if st := sm[4]; st > 0 && (s[st-1] == '$' || s[st-1] == '/' || s[st-1] == '.' || s[st-1] == ',') {
			continue
		}
		if e := sm[5]; e < len(s) && (s[e] == '/' || s[e] == '%') {
			continue
		}
		h, _ = strconv.Atoi(hs)
		m, _ = strconv.Atoi(ms)
		if h > 23 || m > 59 {
			continue
		}
		switch {
		case strings.HasPrefix(ap, "p") && h < 12:
			h += 12
		case strings.HasPrefix(ap, "a") && h == 12:
			h = 0
		case ap == "" && h >= 1 && h <= 6:
			h += 12 // "at 3" is the afternoon
		case ap == "" && h >= 7 && h <= 11:
			for _, w := range eveningWords {
				if strings.Contains(s, w) {
					h += 12
					break
				}
			}
		}
		return h, m, strings.TrimSpace(s[sm[0]:sm[1]]), true
	}
	return 0, 0, "", false
}

func sub(s string, idx []int, g int) string {
	if idx[2*g] < 0 {
		return ""
	}
	return s[idx[2*g]:idx[2*g+1]]
}
