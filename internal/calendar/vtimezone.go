package calendar

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"
)

// A TZID that is no IANA name (Outlook's "W. Europe Standard Time", a
// made-up "Custom/Zone") is resolved, in order (docs/tools.md, "Time
// zones"): through the VTIMEZONE's X-LIC-LOCATION, a known prefix, the
// CLDR Windows-zone table (windowszones.go), and finally a zone built from
// the VTIMEZONE's own STANDARD and DAYLIGHT observances (RFC 5545
// §3.6.5): each observance's onsets (DTSTART, RRULE, RDATE, in the local
// time before the change) become the transitions of a zone Go's time
// package loads from TZif data (RFC 8536), so ParseInLocation, rrule-go and
// wall-clock recurrence across its DST changes work as for an IANA zone.

// zoneHorizon bounds the built zone's transitions: onsets before the
// first year are dropped (the zone's first offset holds before), none
// are generated from the last year on (the last offset holds after).
const (
	zoneFirstYear = 1900
	zoneLastYear  = 2200
	// maxOnsets bounds one observance's recurrence (a rule of FREQ=DAILY
	// would otherwise make 110,000 transitions).
	maxOnsets = 1200
)

// vzone is one VTIMEZONE of a calendar object.
type vzone struct {
	alias string // X-LIC-LOCATION
	comp  *ical.Component

	once sync.Once
	loc  *time.Location
}

// zoneSet maps a calendar's TZIDs to their VTIMEZONEs.
type zoneSet map[string]*vzone

// built is the zone of the VTIMEZONE's observances, or nil when it has
// none usable.
func (z *vzone) built(tzid string) *time.Location {
	z.once.Do(func() {
		if z.comp != nil {
			z.loc, _ = zoneFromVTimezone(tzid, z.comp)
		}
	})
	return z.loc
}

type onset struct {
	at     int64 // Unix seconds
	offset int   // seconds east of UTC from then on
	dst    bool
	name   string
}

// zoneFromVTimezone builds a location named tzid from c's observances.
func zoneFromVTimezone(tzid string, c *ical.Component) (*time.Location, error) {
	var onsets []onset
	var first *onset   // the earliest onset's TZOFFSETFROM: the zone before any onset
	var dropped *onset // the latest onset before zoneFirstYear, in force from then
	for _, obs := range c.Children {
		dst := obs.Name == "DAYLIGHT"
		if !dst && obs.Name != "STANDARD" {
			continue
		}
		from, err := utcOffset(propText(obs, "TZOFFSETFROM"))
		if err != nil {
			return nil, fmt.Errorf("TZOFFSETFROM: %w", err)
		}
		to, err := utcOffset(propText(obs, "TZOFFSETTO"))
		if err != nil {
			return nil, fmt.Errorf("TZOFFSETTO: %w", err)
		}
		name := propText(obs, "TZNAME")
		if name == "" {
			name = offsetName(to)
		}
		walls, err := observanceWalls(obs, from)
		if err != nil {
			return nil, err
		}
		for _, w := range walls {
			o := onset{at: w.Unix() - int64(from), offset: to, dst: dst, name: name}
			if first == nil || o.at < first.at {
				f := onset{at: o.at, offset: from, dst: false, name: offsetName(from)}
				first = &f
			}
			if w.Year() >= zoneFirstYear {
				onsets = append(onsets, o)
			} else if dropped == nil || o.at > dropped.at {
				d := o
				dropped = &d
			}
		}
	}
	if first == nil {
		return nil, errors.New("the VTIMEZONE has no STANDARD or DAYLIGHT observance")
	}
	sort.Slice(onsets, func(i, j int) bool { return onsets[i].at < onsets[j].at })
	before := *first
	if dropped != nil {
		before = *dropped
	}
	return time.LoadLocationFromTZData(tzid, tzif(before, onsets))
}

// observanceWalls returns an observance's onsets as wall-clock times in
// the UTC frame (the local time before the change, RFC 5545 §3.6.5).
func observanceWalls(obs *ical.Component, from int) ([]time.Time, error) {
	start, err := time.ParseInLocation("20060102T150405", strings.TrimSpace(propText(obs, ical.PropDateTimeStart)), time.UTC)
	if err != nil {
		return nil, fmt.Errorf("observance DTSTART: %w", err)
	}
	end := time.Date(zoneLastYear, 1, 1, 0, 0, 0, 0, time.UTC)
	walls := []time.Time{start}
	if p := obs.Props.Get(ical.PropRecurrenceRule); p != nil {
		opt, err := rrule.StrToROption(p.Value)
		if err != nil {
			return nil, fmt.Errorf("observance RRULE %q: %w", p.Value, err)
		}
		opt.Dtstart = start
		if !opt.Until.IsZero() {
			// UNTIL is UTC; the rule runs in local wall time.
			opt.Until = opt.Until.Add(time.Duration(from) * time.Second)
		}
		r, err := rrule.NewRRule(*opt)
		if err != nil {
			return nil, fmt.Errorf("observance RRULE %q: %w", p.Value, err)
		}
		next := r.Iterator()
		walls = walls[:0]
		for len(walls) < maxOnsets {
			t, ok := next()
			if !ok || !t.Before(end) {
				break
			}
			walls = append(walls, t)
		}
	}
	for _, p := range obs.Props.Values(ical.PropRecurrenceDates) {
		for _, v := range strings.Split(p.Value, ",") {
			t, err := time.ParseInLocation("20060102T150405", strings.TrimSuffix(strings.TrimSpace(v), "Z"), time.UTC)
			if err != nil {
				return nil, fmt.Errorf("observance RDATE %q: %w", v, err)
			}
			walls = append(walls, t)
		}
	}
	return walls, nil
}

// utcOffset reads an RFC 5545 UTC offset: +HHMM or +HHMMSS.
func utcOffset(s string) (int, error) {
	s = strings.TrimSpace(s)
	if len(s) != 5 && len(s) != 7 || (s[0] != '+' && s[0] != '-') {
		return 0, fmt.Errorf("%q is not ±HHMM", s)
	}
	n := 0
	for i, mul := range []int{3600, 60, 1} {
		if 1+2*i+2 > len(s) {
			break
		}
		v, err := strconv.Atoi(s[1+2*i : 3+2*i])
		if err != nil {
			return 0, fmt.Errorf("%q is not ±HHMM", s)
		}
		n += v * mul
	}
	if n >= 24*3600 {
		return 0, fmt.Errorf("%q is not a UTC offset", s)
	}
	if s[0] == '-' {
		n = -n
	}
	return n, nil
}

func offsetName(off int) string {
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	return fmt.Sprintf("%s%02d%02d", sign, off/3600, off%3600/60)
}

// tzif encodes a zone as TZif version 2 data (RFC 8536): an empty
// version-1 block, then the 64-bit transitions and their types. Type 0
// is the zone before the first transition.
func tzif(before onset, onsets []onset) []byte {
	type ttype struct {
		off  int
		dst  bool
		name string
	}
	types := []ttype{{before.offset, before.dst, before.name}}
	index := map[ttype]int{types[0]: 0}
	var times []int64
	var idx []byte
	for _, o := range onsets {
		t := ttype{o.offset, o.dst, o.name}
		i, ok := index[t]
		if !ok {
			if len(types) == 255 {
				continue
			}
			i = len(types)
			index[t] = i
			types = append(types, t)
		}
		if n := len(times); n > 0 && times[n-1] == o.at {
			idx[n-1] = byte(i)
			continue
		}
		times = append(times, o.at)
		idx = append(idx, byte(i))
	}
	var chars []byte
	abbr := map[string]int{}
	for _, t := range types {
		if _, ok := abbr[t.name]; !ok {
			abbr[t.name] = len(chars)
			chars = append(append(chars, t.name...), 0)
		}
	}
	var b bytes.Buffer
	header := func(timecnt, typecnt, charcnt int) {
		b.WriteString("TZif2")
		b.Write(make([]byte, 15))
		for _, n := range []int{0, 0, 0, timecnt, typecnt, charcnt} { // isut, isstd, leap, time, type, char
			_ = binary.Write(&b, binary.BigEndian, uint32(n))
		}
	}
	header(0, 1, 1)
	b.Write([]byte{0, 0, 0, 0, 0, 0, 0})
	header(len(times), len(types), len(chars))
	for _, t := range times {
		_ = binary.Write(&b, binary.BigEndian, t)
	}
	b.Write(idx)
	for _, t := range types {
		_ = binary.Write(&b, binary.BigEndian, int32(t.off))
		dst := byte(0)
		if t.dst {
			dst = 1
		}
		b.Write([]byte{dst, byte(abbr[t.name])})
	}
	b.Write(chars)
	b.WriteString("\n\n")
	return b.Bytes()
}
