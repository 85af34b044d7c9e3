package calendar

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"
)

// This file turns iCalendar components into the occurrences inside a
// window (docs/tools.md, "Calendar"): RRULE, RDATE and EXDATE expansion,
// RECURRENCE-ID overrides, cancelled occurrences, all-day events as dates,
// TZID and VTIMEZONE, floating times. It imports no MCP code and no
// network: Expand is pure, so its tables test it without a server.

// maxSteps bounds the recurrence steps one series may take to reach the
// end of a window, so a FREQ=SECONDLY rule from 1970 costs a bounded
// amount of work instead of hanging a call. A series cut by the bound
// reports it (Occurrence.Cut is never silent: ExpandResult.Cut).
const maxSteps = 200_000

// When is one start or end: an instant, or a date for all-day events.
type When struct {
	// Time is the instant (for a date: midnight of that date in the
	// user's zone, used only for ordering and window tests).
	Time time.Time
	// Date is set for all-day values ("2026-03-02"); an all-day event is a
	// span of dates, never of midnights.
	Date string
	// Floating is true for a date-time without a zone, read in the user's
	// zone (RFC 5545 §3.3.5 form #1).
	Floating bool
	// TZID is the zone the value was written in ("" for UTC, floating
	// and dates).
	TZID string
}

// AllDay reports whether the value is a date.
func (w When) AllDay() bool { return w.Date != "" }

// Person is an organizer or attendee: an address and a display name.
type Person struct {
	Address string
	Name    string
	Status  string // PARTSTAT
}

// Occurrence is one instance of an event inside a window.
type Occurrence struct {
	UID         string
	Title       string
	Location    string
	Description string
	Status      string
	Start, End  When
	// Recurring is true for an instance of a series (RRULE or RDATE);
	// RecurrenceID names the instance then.
	Recurring    bool
	RecurrenceID string
	// Override is true when a RECURRENCE-ID component replaced the
	// instance the rule would have generated.
	Override  bool
	Organizer *Person
	Attendees []Person
}

// Todo is one VTODO.
type Todo struct {
	UID         string
	Title       string
	Description string
	Status      string
	Priority    int
	Due         *When
	Completed   string // the COMPLETED instant, RFC 3339, when done
}

// Done reports whether the to-do is completed.
func (t Todo) Done() bool {
	return strings.EqualFold(t.Status, "COMPLETED") || t.Completed != ""
}

// Expander expands components in one user zone.
type Expander struct {
	// Loc is the user's zone (the shared timezone setting): floating
	// times and dates are read in it, and windows are in it.
	Loc *time.Location
}

// ExpandResult is what Expand found in one calendar object.
type ExpandResult struct {
	Occurrences []Occurrence
	// Cut is true when a series hit maxSteps before the window's end.
	Cut bool
}

// Expand returns the occurrences of the VEVENTs of cal that overlap the
// window [from, to). All VEVENTs of one object share a UID (RFC 4791
// §4.1): the one without RECURRENCE-ID is the series, the others override
// single instances. A cancelled series or instance (STATUS:CANCELLED)
// yields nothing.
func (x Expander) Expand(cal *ical.Calendar, from, to time.Time) (ExpandResult, error) {
	var res ExpandResult
	zones := vtimezones(cal)
	byUID := map[string][]*ical.Component{}
	var order []string
	for _, c := range cal.Children {
		if c.Name != ical.CompEvent {
			continue
		}
		uid := propText(c, ical.PropUID)
		if _, ok := byUID[uid]; !ok {
			order = append(order, uid)
		}
		byUID[uid] = append(byUID[uid], c)
	}
	for _, uid := range order {
		occ, cut, err := x.expandUID(byUID[uid], zones, from, to)
		if err != nil {
			return res, fmt.Errorf("event %q: %w", uid, err)
		}
		res.Occurrences = append(res.Occurrences, occ...)
		res.Cut = res.Cut || cut
	}
	return res, nil
}

func (x Expander) expandUID(comps []*ical.Component, zones zoneSet, from, to time.Time) ([]Occurrence, bool, error) {
	var master *ical.Component
	overrides := map[string]*ical.Component{}
	for _, c := range comps {
		if rid := c.Props.Get(ical.PropRecurrenceID); rid != nil {
			w, err := x.when(rid, zones)
			if err != nil {
				return nil, false, fmt.Errorf("RECURRENCE-ID: %w", err)
			}
			overrides[w.key()] = c
			continue
		}
		master = c
	}
	var out []Occurrence
	cut := false
	if master != nil {
		start, err := x.prop(master, ical.PropDateTimeStart, zones)
		if err != nil {
			return nil, false, err
		}
		dur, err := x.duration(master, start, zones)
		if err != nil {
			return nil, false, err
		}
		recurring := master.Props.Get(ical.PropRecurrenceRule) != nil || master.Props.Get(ical.PropRecurrenceDates) != nil
		if !recurring {
			if !cancelled(master) && overlaps(start, dur, from, to, x.Loc) {
				out = append(out, x.occurrence(master, start, x.shift(start, dur), false))
			}
		} else {
			starts, c, err := x.series(master, start, dur, zones, from, to)
			if err != nil {
				return nil, false, err
			}
			cut = c
			if !cancelled(master) {
				for _, s := range starts {
					if _, ok := overrides[s.key()]; ok {
						continue
					}
					o := x.occurrence(master, s, x.shift(s, dur), true)
					o.RecurrenceID = s.key()
					out = append(out, o)
				}
			}
		}
	}
	// Overrides stand on their own times: one moved into the window shows,
	// one moved out of it does not, and a cancelled one never does.
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := overrides[k]
		if cancelled(c) || (master != nil && cancelled(master)) {
			continue
		}
		start, err := x.prop(c, ical.PropDateTimeStart, zones)
		if err != nil {
			return nil, false, err
		}
		dur, err := x.duration(c, start, zones)
		if err != nil {
			return nil, false, err
		}
		if !overlaps(start, dur, from, to, x.Loc) {
			continue
		}
		o := x.occurrence(c, start, x.shift(start, dur), true)
		o.RecurrenceID, o.Override = k, true
		if master != nil {
			fillFrom(&o, x.occurrence(master, start, start, true))
		}
		out = append(out, o)
	}
	return out, cut, nil
}

// fillFrom completes an override with the series' text it does not
// restate (RFC 5545 lets an override carry only what changed).
func fillFrom(o *Occurrence, m Occurrence) {
	if o.Title == "" {
		o.Title = m.Title
	}
	if o.Location == "" {
		o.Location = m.Location
	}
	if o.Description == "" {
		o.Description = m.Description
	}
	if o.Organizer == nil {
		o.Organizer = m.Organizer
	}
	if o.Attendees == nil {
		o.Attendees = m.Attendees
	}
}

// series returns the series' starts whose span overlaps the window.
func (x Expander) series(c *ical.Component, start When, dur span, zones zoneSet, from, to time.Time) ([]When, bool, error) {
	set := &rrule.Set{}
	base := x.ruleTime(start)
	for _, p := range c.Props.Values(ical.PropRecurrenceRule) {
		opt, err := rrule.StrToROption(p.Value)
		if err != nil {
			return nil, false, fmt.Errorf("RRULE %q: %w", p.Value, err)
		}
		opt.Dtstart = base
		if !opt.Until.IsZero() && start.AllDay() {
			// UNTIL of a date series is a date; compare in the rule's frame.
			u := opt.Until
			opt.Until = time.Date(u.Year(), u.Month(), u.Day(), 23, 59, 59, 0, time.UTC)
		} else if !opt.Until.IsZero() && start.Floating {
			u := opt.Until
			opt.Until = time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), 0, base.Location())
		}
		r, err := rrule.NewRRule(*opt)
		if err != nil {
			return nil, false, fmt.Errorf("RRULE %q: %w", p.Value, err)
		}
		if set.GetRRule() != nil {
			// RFC 5545 deprecates more than one RRULE; the first one counts.
			continue
		}
		set.RRule(r)
	}
	set.DTStart(base)
	if set.GetRRule() == nil {
		set.RDate(base) // an RDATE-only series includes DTSTART
	}
	for _, name := range []string{ical.PropRecurrenceDates, ical.PropExceptionDates} {
		for _, p := range c.Props.Values(name) {
			for _, v := range strings.Split(p.Value, ",") {
				if name == ical.PropRecurrenceDates && p.Params.Get(ical.ParamValue) == "PERIOD" {
					v, _, _ = strings.Cut(v, "/")
				}
				q := p
				q.Value = strings.TrimSpace(v)
				if q.Params.Get(ical.ParamValue) == "PERIOD" {
					q.Params = ical.Params{}
					for k, vs := range p.Params {
						if k != ical.ParamValue {
							q.Params[k] = vs
						}
					}
				}
				w, err := x.when(&q, zones)
				if err != nil {
					return nil, false, fmt.Errorf("%s: %w", name, err)
				}
				if start.AllDay() && !w.AllDay() {
					w = dateOf(w.Time.In(x.Loc), x.Loc)
				}
				if name == ical.PropRecurrenceDates {
					set.RDate(x.ruleTime(w))
				} else {
					set.ExDate(x.ruleTime(w))
				}
			}
		}
	}
	next := set.Iterator()
	var out []When
	for i := 0; ; i++ {
		if i == maxSteps {
			return out, true, nil
		}
		t, ok := next()
		if !ok {
			return out, false, nil
		}
		w := x.fromRule(t, start)
		if !w.Time.Before(to) {
			return out, false, nil
		}
		if overlaps(w, dur, from, to, x.Loc) {
			out = append(out, w)
		}
	}
}

// ruleTime is the time rrule-go computes in: dates as UTC midnights (pure
// calendar arithmetic, no zone can shift a day), floating times in the
// user's zone, zoned times in their own zone (so a weekly 09:00 stays
// 09:00 across a DST change, RFC 5545 §3.3.10).
func (x Expander) ruleTime(w When) time.Time {
	if w.AllDay() {
		d, _ := time.Parse("2006-01-02", w.Date)
		return d
	}
	return w.Time
}

func (x Expander) fromRule(t time.Time, like When) When {
	if like.AllDay() {
		return dateOf(t, x.Loc)
	}
	return When{Time: t, Floating: like.Floating, TZID: like.TZID}
}

// dateOf is the date of t's own calendar day, placed in loc.
func dateOf(t time.Time, loc *time.Location) When {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	return When{Time: d, Date: d.Format("2006-01-02")}
}

// span is an event's length: days for a date event, a duration
// otherwise. Days are calendar days, so a 3-day event across a DST change
// still ends on a date.
type span struct {
	days int
	d    time.Duration
}

func (x Expander) shift(w When, s span) When {
	if w.AllDay() {
		t, _ := time.Parse("2006-01-02", w.Date)
		return dateOf(t.AddDate(0, 0, s.days), x.Loc)
	}
	return When{Time: w.Time.Add(s.d), Floating: w.Floating, TZID: w.TZID}
}

func (x Expander) duration(c *ical.Component, start When, zones zoneSet) (span, error) {
	if p := c.Props.Get(ical.PropDateTimeEnd); p != nil {
		end, err := x.when(p, zones)
		if err != nil {
			return span{}, fmt.Errorf("DTEND: %w", err)
		}
		if start.AllDay() {
			a, _ := time.Parse("2006-01-02", start.Date)
			b, _ := time.Parse("2006-01-02", dateKey(end, x.Loc))
			return span{days: max(1, int(b.Sub(a).Hours()/24))}, nil
		}
		return span{d: max(0, end.Time.Sub(start.Time))}, nil
	}
	if p := c.Props.Get(ical.PropDuration); p != nil {
		d, err := p.Duration()
		if err != nil {
			return span{}, fmt.Errorf("DURATION: %w", err)
		}
		if start.AllDay() {
			return span{days: max(1, int(d.Hours()/24))}, nil
		}
		return span{d: max(0, d)}, nil
	}
	if start.AllDay() {
		return span{days: 1}, nil // RFC 5545 §3.6.1: a date event lasts one day
	}
	return span{}, nil
}

func dateKey(w When, loc *time.Location) string {
	if w.AllDay() {
		return w.Date
	}
	return w.Time.In(loc).Format("2006-01-02")
}

// overlaps reports whether [start, start+dur) meets [from, to); an event
// of no length counts when it starts inside the window.
func overlaps(start When, dur span, from, to time.Time, loc *time.Location) bool {
	s := start.Time
	var e time.Time
	if start.AllDay() {
		t, _ := time.Parse("2006-01-02", start.Date)
		s = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
		t = t.AddDate(0, 0, dur.days)
		e = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	} else {
		e = s.Add(dur.d)
	}
	if !e.After(s) {
		return !s.Before(from) && s.Before(to)
	}
	return s.Before(to) && e.After(from)
}

// key identifies an instance for RECURRENCE-ID matching: the date of a
// date value, the UTC instant of a date-time (so an override written in
// another zone still finds its instance).
func (w When) key() string {
	if w.AllDay() {
		return w.Date
	}
	return w.Time.UTC().Format("20060102T150405Z")
}

func (x Expander) prop(c *ical.Component, name string, zones zoneSet) (When, error) {
	p := c.Props.Get(name)
	if p == nil {
		return When{}, fmt.Errorf("no %s", name)
	}
	w, err := x.when(p, zones)
	if err != nil {
		return When{}, fmt.Errorf("%s: %w", name, err)
	}
	return w, nil
}

var errNoValue = errors.New("empty date value")

// when reads a DATE or DATE-TIME property: a date stays a date; a UTC time
// is an instant; a TZID is resolved by zoneOf; a TZID no rule resolves
// (no VTIMEZONE, or one without usable observances), and a floating time,
// are read in the user's zone (an unknown zone must not drop the event).
func (x Expander) when(p *ical.Prop, zones zoneSet) (When, error) {
	v := strings.TrimSpace(p.Value)
	if v == "" {
		return When{}, errNoValue
	}
	if p.Params.Get(ical.ParamValue) == "DATE" || len(v) == 8 {
		d, err := time.ParseInLocation("20060102", v, x.Loc)
		if err != nil {
			return When{}, fmt.Errorf("date %q is not YYYYMMDD", v)
		}
		return When{Time: d, Date: d.Format("2006-01-02")}, nil
	}
	if strings.HasSuffix(v, "Z") {
		t, err := time.ParseInLocation("20060102T150405Z", v, time.UTC)
		if err != nil {
			return When{}, fmt.Errorf("time %q is not YYYYMMDDTHHMMSSZ", v)
		}
		return When{Time: t}, nil
	}
	tzid := p.Params.Get(ical.PropTimezoneID)
	loc, floating := x.Loc, true
	if tzid != "" {
		if l := zoneOf(tzid, zones); l != nil {
			loc, floating = l, false
		}
	}
	t, err := time.ParseInLocation("20060102T150405", v, loc)
	if err != nil {
		return When{}, fmt.Errorf("time %q is not YYYYMMDDTHHMMSS", v)
	}
	w := When{Time: t, Floating: floating}
	if !floating {
		w.TZID = loc.String()
	}
	return w, nil
}

// zoneOf resolves a TZID to a location, or nil: an IANA name, the
// VTIMEZONE's X-LIC-LOCATION, a known prefix, a Windows zone name (CLDR,
// windowszones.go), then the zone built from the VTIMEZONE's observances
// (vtimezone.go).
func zoneOf(tzid string, zones zoneSet) *time.Location {
	cands := []string{tzid}
	z := zones[tzid]
	if z != nil && z.alias != "" {
		cands = append(cands, z.alias)
	}
	for _, prefix := range []string{"/mozilla.org/20050126_1/", "/mozilla.org/20070129_1/", "/freeassociation.sourceforge.net/Tzfile/", "/freeassociation.sourceforge.net/"} {
		if rest, ok := strings.CutPrefix(tzid, prefix); ok {
			cands = append(cands, rest)
		}
	}
	if iana, ok := windowsZones[strings.TrimSpace(tzid)]; ok {
		cands = append(cands, iana)
	}
	for _, c := range cands {
		if c == "" || c == "Local" {
			continue
		}
		if l, err := time.LoadLocation(c); err == nil {
			return l
		}
	}
	if z != nil {
		return z.built(tzid)
	}
	return nil
}

// vtimezones maps each VTIMEZONE's TZID to the component and its
// X-LIC-LOCATION (the IANA name Lightning, Evolution and others record).
func vtimezones(cal *ical.Calendar) zoneSet {
	m := zoneSet{}
	for _, c := range cal.Children {
		if c.Name != ical.CompTimezone {
			continue
		}
		if id := propText(c, ical.PropTimezoneID); id != "" {
			m[id] = &vzone{alias: propText(c, "X-LIC-LOCATION"), comp: c}
		}
	}
	return m
}

func cancelled(c *ical.Component) bool {
	return strings.EqualFold(propText(c, ical.PropStatus), "CANCELLED")
}

func propText(c *ical.Component, name string) string {
	p := c.Props.Get(name)
	if p == nil {
		return ""
	}
	if s, err := p.Text(); err == nil {
		return s
	}
	return p.Value
}

func (x Expander) occurrence(c *ical.Component, start, end When, recurring bool) Occurrence {
	o := Occurrence{
		UID:         propText(c, ical.PropUID),
		Title:       propText(c, ical.PropSummary),
		Location:    propText(c, ical.PropLocation),
		Description: propText(c, ical.PropDescription),
		Status:      propText(c, ical.PropStatus),
		Start:       start,
		End:         end,
		Recurring:   recurring,
	}
	if p := c.Props.Get(ical.PropOrganizer); p != nil {
		o.Organizer = person(p)
	}
	for _, p := range c.Props.Values(ical.PropAttendee) {
		o.Attendees = append(o.Attendees, *person(&p))
	}
	return o
}

func person(p *ical.Prop) *Person {
	addr := strings.TrimSpace(p.Value)
	if len(addr) > 7 && strings.EqualFold(addr[:7], "mailto:") {
		addr = addr[7:]
	}
	return &Person{Address: addr, Name: p.Params.Get(ical.ParamCommonName), Status: p.Params.Get(ical.ParamParticipationStatus)}
}

// Todos returns the VTODOs of cal.
func (x Expander) Todos(cal *ical.Calendar) []Todo {
	zones := vtimezones(cal)
	var out []Todo
	for _, c := range cal.Children {
		if c.Name != ical.CompToDo || c.Props.Get(ical.PropRecurrenceID) != nil {
			continue
		}
		t := Todo{
			UID:         propText(c, ical.PropUID),
			Title:       propText(c, ical.PropSummary),
			Description: propText(c, ical.PropDescription),
			Status:      propText(c, ical.PropStatus),
		}
		if p := c.Props.Get(ical.PropPriority); p != nil {
			t.Priority, _ = p.Int()
		}
		if p := c.Props.Get(ical.PropDue); p != nil {
			if w, err := x.when(p, zones); err == nil {
				t.Due = &w
			}
		}
		if p := c.Props.Get(ical.PropCompleted); p != nil {
			if w, err := x.when(p, zones); err == nil {
				t.Completed = w.Time.In(x.Loc).Format(time.RFC3339)
			}
		}
		out = append(out, t)
	}
	return out
}

// startsBefore reports whether the first VEVENT of cal starts before t:
// a series whose rule was not understood may have instances from then on.
func (x Expander) startsBefore(cal *ical.Calendar, t time.Time) bool {
	zones := vtimezones(cal)
	for _, c := range cal.Children {
		if c.Name == ical.CompEvent {
			w, err := x.prop(c, ical.PropDateTimeStart, zones)
			return err == nil && w.Time.Before(t)
		}
	}
	return false
}
