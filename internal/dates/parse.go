package dates

import (
	"cmp"
	"slices"
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

// Direction is which way a reader counts from now. The two readers of
// dates read the same words in opposite directions: a search query asks
// about what was, a due date about what will be.
type Direction int

const (
	// Past is a search query's reading (docs/index.md): "in March" is the
	// most recent March, "on Friday" the last Friday, "3 days ago" and
	// "in the last 7 days" count back.
	Past Direction = iota + 1
	// Future is a due date's reading (docs/dossier.md): "in March" is the
	// coming March, "on Friday" the next Friday, "in 2 days" and
	// "tomorrow" count forward, and a clock time ("at 3") is a phrase.
	Future
)

// Pick is which of the phrases of a text a reader takes.
type Pick int

const (
	// Every phrase, in text order; each span is read once: a span one
	// kind of phrase took is blanked before the next kind is looked for.
	// The search query's pick: the index decides which phrases filter.
	Every Pick = iota
	// FirstKind is one phrase: the first occurrence of the first kind of
	// phrase, in grammar order, that occurs in the text at all. When that
	// occurrence names no date ("sun is out", "Feb 30") the text names no
	// day. A clock time sets the hour of a day phrase, and alone is the
	// next such time. The due date's pick (docs/dossier.md).
	FirstKind
)

// Options says how Parse reads a text.
type Options struct {
	Direction Direction
	Pick      Pick
}

// Phrase is one date phrase of a text, resolved.
type Phrase struct {
	// Text is the phrase's words: normalised white space in the past
	// reading, as written in the future one (a due date shows it).
	Text  string
	Range Range
	// Precision is what Range spans: "time" (an hour from a clock time),
	// "day", "days" (a range of days), "weekend", "week", "month" or
	// "year"; "" for an open window ("since March", "in the last 5
	// days").
	Precision string
	// Relative: counted from now (today, yesterday, last week, 3 days
	// ago, in the last 5 days, last Friday, tomorrow, in 2 days). Named
	// months, weekdays ("on Friday"), years and dates are not.
	Relative bool
	// Window: the phrase itself asks for the messages of a time window:
	// "since …", "during …", "in the last N …", an ISO date, or "from"
	// just before it ("texts from yesterday").
	Window     bool
	Start, End int // byte span in the text
}

// Parse finds the date phrases of text (lower case) and resolves them
// against now, in now's location: the one date grammar of Tidings
// (grammar.go), read as opt says. Every phrase kind says which directions
// read it; the vocabulary and calendar rules are shared (vocab.go).
func Parse(text string, now time.Time, opt Options) []Phrase {
	c := &reading{text: text, now: now, today: DayStart(now)}
	if opt.Pick == FirstKind {
		if p, ok := c.first(opt.Direction); ok {
			return []Phrase{p}
		}
		return nil
	}
	return c.every(opt.Direction)
}

// reading is one Parse: the text and the clock it is read against.
type reading struct {
	text       string
	now, today time.Time
}

// match is one occurrence of a rule's pattern in s (the text, or the text
// with the spans of earlier phrases blanked: same byte offsets).
type match struct {
	s   string
	idx []int
}

// g is group i of the match, "" when it did not take part.
func (m match) g(i int) string {
	if m.idx[2*i] < 0 {
		return ""
	}
	return m.s[m.idx[2*i]:m.idx[2*i+1]]
}

// phrase reads one match of r into a phrase with its span and flags.
func (c *reading) phrase(r *rule, m match) (Phrase, bool) {
	var p Phrase
	var ok bool
	if r.clock != nil {
		var h, mi int
		if h, mi, p.Text, ok = r.clock(c, m); ok {
			p = c.nextClock(h, mi, p.Text)
		}
	} else {
		p, ok = r.read(c, m)
	}
	if !ok {
		return Phrase{}, false
	}
	if p.Text == "" {
		p.Text = strings.Join(strings.Fields(m.g(0)), " ")
	}
	p.Relative = r.relative
	switch lastWord(c.text[:m.idx[0]]) {
	case "from", "since", "during":
		p.Window = true
	}
	p.Start, p.End = m.idx[0], m.idx[1]
	return p, true
}

// every is Pick Every.
func (c *reading) every(dir Direction) []Phrase {
	work := []byte(c.text)
	var out []Phrase
	for i := range grammar {
		r := &grammar[i]
		if !r.reads(dir, c.text) {
			continue
		}
		cur := string(work)
		for _, idx := range r.rx.FindAllStringSubmatchIndex(cur, -1) {
			p, ok := c.phrase(r, match{cur, idx})
			if !ok {
				continue
			}
			out = append(out, p)
			for j := idx[0]; j < idx[1]; j++ {
				work[j] = ' '
			}
		}
	}
	slices.SortFunc(out, func(a, b Phrase) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// first is Pick FirstKind.
func (c *reading) first(dir Direction) (Phrase, bool) {
	var day Phrase
	found := false
	for i := range grammar {
		r := &grammar[i]
		if r.clock != nil || !r.reads(dir, c.text) {
			continue
		}
		idx := r.rx.FindAllStringSubmatchIndex(c.text, 1)
		if idx == nil {
			continue
		}
		day, found = c.phrase(r, match{c.text, idx[0]})
		break
	}
	h, mi, text, ok := c.firstClock(dir)
	switch {
	case !ok:
		return day, found
	case !found:
		return c.nextClock(h, mi, text), true
	case day.Precision == "day":
		t := time.Date(day.Range.From.Year(), day.Range.From.Month(), day.Range.From.Day(), h, mi, 0, 0, c.now.Location())
		day.Text += " " + text
		day.Range, day.Precision = Range{t, t.Add(time.Hour)}, "time"
	}
	return day, true
}

// firstClock is the first clock time of the text: the clock kinds in
// grammar order, each its first occurrence that reads as a time.
func (c *reading) firstClock(dir Direction) (h, mi int, text string, ok bool) {
	for i := range grammar {
		r := &grammar[i]
		if r.clock == nil || !r.reads(dir, c.text) {
			continue
		}
		for _, idx := range r.rx.FindAllStringSubmatchIndex(c.text, -1) {
			if h, mi, text, ok = r.clock(c, match{c.text, idx}); ok {
				return h, mi, text, true
			}
		}
	}
	return 0, 0, "", false
}

// nextClock is a clock time alone: today's, or tomorrow's if it has
// passed.
func (c *reading) nextClock(h, mi int, text string) Phrase {
	t := time.Date(c.today.Year(), c.today.Month(), c.today.Day(), h, mi, 0, 0, c.now.Location())
	if !t.After(c.now) {
		t = t.AddDate(0, 0, 1)
	}
	return Phrase{Text: text, Range: Range{t, t.Add(time.Hour)}, Precision: "time"}
}

// lastWord returns the last word of s (letters only), "" if none.
func lastWord(s string) string {
	f := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}
