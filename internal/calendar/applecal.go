package calendar

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"
	_ "modernc.org/sqlite"

	"github.com/tidings-mcp/tidings/internal/send" // the project's SQLite driver ("sqlite")
)

// AppleCal is a [[calendar.files]] entry of kind "apple-calendar": the
// Mac's own Calendar store (Calendar.sqlitedb), read directly and never
// written; on macOS new events go through Calendar.app
// (docs/tools.md, "The Mac's own Calendar store"). Each Calendar row of
// an enabled Store is one collection; each CalendarItem with its
// Recurrence, ExceptionDate, detached occurrences, organizer and invitees
// becomes one VCALENDAR object, so the expansion and the read policy of
// every other backend apply unchanged. The file is opened on every call
// with mode=ro (not immutable: Calendar keeps recent rows in the WAL, as
// Messages does — internal/imessage/open.go).
type AppleCal struct {
	name, path string
	// writes is true on macOS, where new events are created through
	// Calendar.app with osascript (applecal_write.go).
	writes bool
	// Runner runs osascript; nil means send.ExecRunner (tests fake it).
	Runner send.Runner
	// Osascript is the osascript path; empty means /usr/bin/osascript.
	Osascript string
}

// NewAppleCal returns the backend of a Calendar.sqlitedb.
func NewAppleCal(name, path string) *AppleCal {
	return &AppleCal{name: name, path: path, writes: appleCalWrites}
}

// Account implements Backend.
func (a *AppleCal) Account() string { return a.name }

// Kind implements Backend.
func (a *AppleCal) Kind() string { return "apple-calendar" }

// Location is the file, for status.
func (a *AppleCal) Location() string { return a.path }

// ErrIncompleteCalendarDB means the file lacks a table or column the
// reader needs (named in the error): another version's layout, or a
// damaged copy. Reading it anyway could give wrong answers silently.
var ErrIncompleteCalendarDB = errors.New("incomplete Calendar database")

// appleCalSchema is what the reader queries, table by table (the layout of
// the real dump in testdata/applecal/README.md).
var appleCalSchema = map[string][]string{
	"Store":         {"ROWID", "name", "disabled"},
	"Calendar":      {"ROWID", "store_id", "title", "UUID"},
	"CalendarItem":  {"ROWID", "summary", "location_id", "description", "start_date", "start_tz", "end_date", "all_day", "calendar_id", "orig_item_id", "orig_date", "organizer_id", "status", "unique_identifier", "UUID", "has_recurrences"},
	"Recurrence":    {"frequency", "interval", "week_start", "count", "end_date", "specifier", "owner_id"},
	"ExceptionDate": {"owner_id", "date"},
	"Participant":   {"ROWID", "entity_type", "status", "identity_id", "owner_id", "email"},
	"Identity":      {"display_name"},
	"Location":      {"ROWID", "title", "address"},
}

// open opens the store read-only and probes the schema.
func (a *AppleCal) open(ctx context.Context) (*sql.DB, error) {
	abs, err := filepath.Abs(a.path)
	if err != nil {
		return nil, fmt.Errorf("calendar file %q: %w", a.name, err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	db, err := sql.Open("sqlite", u.String()+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("calendar file %q: %w", a.name, err)
	}
	db.SetMaxOpenConns(1)
	if err := probeAppleCal(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("calendar file %q (%s): %w", a.name, a.path, err)
	}
	return db, nil
}

// probeAppleCal names the first table or column appleCalSchema needs that
// the file lacks.
func probeAppleCal(ctx context.Context, db *sql.DB) error {
	for _, table := range []string{"Store", "Calendar", "CalendarItem", "Recurrence", "ExceptionDate", "Participant", "Identity", "Location"} {
		rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
		if err != nil {
			return err
		}
		have := map[string]bool{"rowid": true}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			have[strings.ToLower(n)] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(have) == 1 {
			return fmt.Errorf("%w: no table %s", ErrIncompleteCalendarDB, table)
		}
		for _, col := range appleCalSchema[table] {
			if !have[strings.ToLower(col)] {
				return fmt.Errorf("%w: no column %s.%s", ErrIncompleteCalendarDB, table, col)
			}
		}
	}
	return nil
}

// Collections implements Backend: the calendars of the enabled stores.
// Two calendars of one title (in two accounts) are told apart by their
// store's name.
func (a *AppleCal) Collections(ctx context.Context) ([]Collection, error) {
	db, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT c.ROWID, ifnull(c.title,''), ifnull(s.name,'') FROM Calendar c
		JOIN Store s ON s.ROWID = c.store_id WHERE s.disabled IS NOT 1 ORDER BY c.ROWID`)
	if err != nil {
		return nil, fmt.Errorf("calendar file %q: %w", a.name, err)
	}
	defer rows.Close()
	type cal struct {
		id           int64
		title, store string
	}
	var cals []cal
	seen := map[string]int{}
	for rows.Next() {
		var c cal
		if err := rows.Scan(&c.id, &c.title, &c.store); err != nil {
			return nil, fmt.Errorf("calendar file %q: %w", a.name, err)
		}
		cals = append(cals, c)
		seen[c.title]++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("calendar file %q: %w", a.name, err)
	}
	out := make([]Collection, 0, len(cals))
	for _, c := range cals {
		name := c.title
		if seen[c.title] > 1 && c.store != "" {
			name = c.title + " (" + c.store + ")"
		}
		out = append(out, Collection{Account: a.name, Name: name, Href: "calendar:" + strconv.FormatInt(c.id, 10),
			Components: []string{Events}, ReadOnly: !a.writes})
	}
	return out, nil
}

// appleEpoch is the Core Data reference date: every REAL date of the
// store counts seconds from it.
var appleEpoch = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

func appleTime(sec float64) time.Time {
	return appleEpoch.Add(time.Duration(sec * float64(time.Second))).Round(time.Second)
}

// appleItem is one CalendarItem row.
type appleItem struct {
	id, calID              int64
	summary, desc, loc, tz string
	uid                    string
	start, end             float64
	allDay                 bool
	status                 int64
	origItem               int64
	origDate               sql.NullFloat64
	organizer              sql.NullInt64
	hasRec                 bool
}

// Objects implements Backend: one object per series (the master, its
// detached occurrences as RECURRENCE-ID overrides) or single event.
func (a *AppleCal) Objects(ctx context.Context, c Collection, comp string) ([]Object, error) {
	if comp != Events {
		return nil, nil
	}
	calID, err := strconv.ParseInt(strings.TrimPrefix(c.Href, "calendar:"), 10, 64)
	if err != nil || !strings.HasPrefix(c.Href, "calendar:") {
		return nil, fmt.Errorf("calendar file %q: unknown calendar %q", a.name, c.Href)
	}
	db, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	items, err := a.items(ctx, db, calID)
	if err != nil {
		return nil, fmt.Errorf("calendar file %q: %w", a.name, err)
	}
	byID := map[int64]*appleItem{}
	for i := range items {
		byID[items[i].id] = &items[i]
	}
	var out []Object
	at := map[int64]int{} // master ROWID → index in out
	for i := range items {
		it := &items[i]
		if it.origItem != 0 && byID[it.origItem] != nil {
			continue // an override; added to its master below
		}
		cal := ical.NewCalendar()
		cal.Props.SetText(ical.PropVersion, "2.0")
		cal.Props.SetText(ical.PropProductID, "-//Tidings//Mac Calendar//EN")
		ev, problem, err := a.event(ctx, db, it, nil)
		if err != nil {
			return nil, fmt.Errorf("calendar file %q: %w", a.name, err)
		}
		cal.Children = append(cal.Children, ev)
		at[it.id] = len(out)
		out = append(out, Object{Href: a.path + "#" + strconv.FormatInt(it.id, 10), Cal: cal, Problem: problem})
	}
	for i := range items {
		it := &items[i]
		m := byID[it.origItem]
		if it.origItem == 0 || m == nil || !it.origDate.Valid {
			continue
		}
		ev, _, err := a.event(ctx, db, it, m)
		if err != nil {
			return nil, fmt.Errorf("calendar file %q: %w", a.name, err)
		}
		o := &out[at[m.id]]
		o.Cal.Children = append(o.Cal.Children, ev)
	}
	return out, nil
}

func (a *AppleCal) items(ctx context.Context, db *sql.DB, calID int64) ([]appleItem, error) {
	rows, err := db.QueryContext(ctx, `SELECT i.ROWID, i.calendar_id, ifnull(i.summary,''), ifnull(i.description,''),
		trim(ifnull(l.title,'') || CASE WHEN ifnull(l.address,'') != '' AND ifnull(l.address,'') != ifnull(l.title,'') THEN ', ' || l.address ELSE '' END, ', '),
		ifnull(i.start_tz,''), coalesce(nullif(i.unique_identifier,''), i.UUID, 'applecal-' || i.ROWID),
		i.start_date, ifnull(i.end_date, i.start_date), ifnull(i.all_day,0), ifnull(i.status,0),
		ifnull(i.orig_item_id,0), i.orig_date, i.organizer_id, ifnull(i.has_recurrences,0)
		FROM CalendarItem i LEFT JOIN Location l ON l.ROWID = i.location_id
		WHERE i.calendar_id = ? AND i.start_date IS NOT NULL ORDER BY i.ROWID`, calID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []appleItem
	for rows.Next() {
		var it appleItem
		var allDay, hasRec int64
		if err := rows.Scan(&it.id, &it.calID, &it.summary, &it.desc, &it.loc, &it.tz, &it.uid, &it.start, &it.end,
			&allDay, &it.status, &it.origItem, &it.origDate, &it.organizer, &hasRec); err != nil {
			return nil, err
		}
		it.allDay, it.hasRec = allDay != 0, hasRec != 0
		out = append(out, it)
	}
	return out, rows.Err()
}

// appleStatus maps CalendarItem.status (EventKit's EKEventStatus: 0 none,
// 1 confirmed, 2 tentative, 3 canceled) to STATUS.
var appleStatus = map[int64]string{1: "CONFIRMED", 2: "TENTATIVE", 3: "CANCELLED"}

// applePartstat maps Participant.status to PARTSTAT (0 and 7 no response,
// 1 accepted, 2 declined, 3 maybe: docs/tools.md cites the source).
var applePartstat = map[int64]string{0: "NEEDS-ACTION", 1: "ACCEPTED", 2: "DECLINED", 3: "TENTATIVE", 7: "NEEDS-ACTION"}

// event converts one row. master is set for a detached occurrence: it
// gets the master's UID and a RECURRENCE-ID. problem says why a
// recurrence was left out (the event is then shown once).
func (a *AppleCal) event(ctx context.Context, db *sql.DB, it *appleItem, master *appleItem) (*ical.Component, string, error) {
	ev := ical.NewComponent(ical.CompEvent)
	uid := it.uid
	if master != nil {
		uid = master.uid
	}
	ev.Props.SetText(ical.PropUID, uid)
	ev.Props.SetText(ical.PropSummary, it.summary)
	if it.loc != "" {
		ev.Props.SetText(ical.PropLocation, it.loc)
	}
	if it.desc != "" {
		ev.Props.SetText(ical.PropDescription, it.desc)
	}
	if s := appleStatus[it.status]; s != "" {
		ev.Props.SetText(ical.PropStatus, s)
	}
	start, end := appleTime(it.start), appleTime(it.end)
	setWhen(ev, ical.PropDateTimeStart, start, it.allDay, it.tz)
	if it.allDay {
		// An all-day item stores its first day's midnight and its last
		// day's 23:59:59 (an inclusive end): DTEND is the day after.
		days := int(end.Sub(start).Hours()/24 + 0.5)
		setWhen(ev, ical.PropDateTimeEnd, start.AddDate(0, 0, max(days, 1)), true, it.tz)
	} else {
		setWhen(ev, ical.PropDateTimeEnd, end, false, it.tz)
	}
	if master != nil {
		setWhen(ev, ical.PropRecurrenceID, appleTime(it.origDate.Float64), master.allDay, master.tz)
	}
	if err := a.people(ctx, db, it, ev); err != nil {
		return nil, "", err
	}
	if master != nil || !it.hasRec {
		return ev, "", nil
	}
	rule, problem, err := a.recurrence(ctx, db, it)
	if err != nil || problem != "" {
		return ev, problem, err
	}
	if rule == "" {
		return ev, "", nil
	}
	ev.Props.Set(&ical.Prop{Name: ical.PropRecurrenceRule, Value: rule, Params: ical.Params{}})
	rows, err := db.QueryContext(ctx, "SELECT date FROM ExceptionDate WHERE owner_id = ? AND date IS NOT NULL ORDER BY date", it.id)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	for rows.Next() {
		var d float64
		if err := rows.Scan(&d); err != nil {
			return nil, "", err
		}
		p := ical.NewProp(ical.PropExceptionDates)
		whenProp(p, appleTime(d), it.allDay, it.tz)
		ev.Props.Add(p)
	}
	return ev, "", rows.Err()
}

// setWhen sets a date or date-time property from a store instant: a date
// for all-day items (the UTC date), a floating wall clock for "_float"
// (stored as if that wall clock were UTC), else the zone's wall clock
// with its TZID (so a rule keeps its local time across DST), or UTC.
func setWhen(c *ical.Component, name string, t time.Time, allDay bool, tz string) {
	p := ical.NewProp(name)
	whenProp(p, t, allDay, tz)
	c.Props.Set(p)
}

func whenProp(p *ical.Prop, t time.Time, allDay bool, tz string) {
	switch {
	case allDay:
		p.Params.Set(ical.ParamValue, "DATE")
		p.Value = t.UTC().Format("20060102")
	case tz == "_float":
		p.Value = t.UTC().Format("20060102T150405")
	default:
		if tz != "" && tz != "UTC" && tz != "GMT" {
			if loc, err := time.LoadLocation(tz); err == nil {
				p.Params.Set(ical.PropTimezoneID, loc.String())
				p.Value = t.In(loc).Format("20060102T150405")
				return
			}
		}
		p.Value = t.UTC().Format("20060102T150405Z")
	}
}

// people adds ORGANIZER (CalendarItem.organizer_id → Participant) and one
// ATTENDEE per invitee (Participant.entity_type 7), names from Identity.
func (a *AppleCal) people(ctx context.Context, db *sql.DB, it *appleItem, ev *ical.Component) error {
	q := `SELECT p.ROWID, ifnull(p.entity_type,0), ifnull(p.status,-1), ifnull(p.email,''), ifnull(d.display_name,'')
		FROM Participant p LEFT JOIN Identity d ON d.rowid = p.identity_id
		WHERE p.ROWID = ? OR (p.owner_id = ? AND p.entity_type = 7) ORDER BY p.ROWID`
	org := int64(-1)
	if it.organizer.Valid {
		org = it.organizer.Int64
	}
	rows, err := db.QueryContext(ctx, q, org, it.id)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, et, st int64
		var email, name string
		if err := rows.Scan(&id, &et, &st, &email, &name); err != nil {
			return err
		}
		email = strings.TrimSpace(email)
		if email == "" {
			continue
		}
		if !strings.HasPrefix(strings.ToLower(email), "mailto:") {
			email = "mailto:" + email
		}
		prop := ical.PropAttendee
		if id == org {
			prop = ical.PropOrganizer
		}
		p := ical.NewProp(prop)
		p.Value = email
		if name != "" {
			p.Params.Set(ical.ParamCommonName, name)
		}
		if s := applePartstat[st]; s != "" && prop == ical.PropAttendee {
			p.Params.Set(ical.ParamParticipationStatus, s)
		}
		if prop == ical.PropOrganizer {
			ev.Props.Set(p)
		} else {
			ev.Props.Add(p)
		}
	}
	return rows.Err()
}

// appleFreq maps Recurrence.frequency to FREQ: 1 daily, 2 weekly,
// 3 monthly, 4 yearly (docs/tools.md cites the source).
var appleFreq = map[int64]string{1: "DAILY", 2: "WEEKLY", 3: "MONTHLY", 4: "YEARLY"}

// recurrence builds the RRULE of it's Recurrence row. A row it cannot
// read fully (an unknown frequency, specifier key or value, more than
// one rule, or a week start other than the default where it changes the
// result) gives no rule and a problem: the event is shown once and the
// problem says so, never a guessed series.
func (a *AppleCal) recurrence(ctx context.Context, db *sql.DB, it *appleItem) (string, string, error) {
	rows, err := db.QueryContext(ctx, `SELECT ifnull(frequency,0), ifnull(interval,1), ifnull(week_start,0), ifnull(count,0),
		end_date, ifnull(specifier,'') FROM Recurrence WHERE owner_id = ?`, it.id)
	if err != nil {
		return "", "", err
	}
	defer rows.Close()
	type rec struct {
		freq, interval, wkst, count int64
		end                         sql.NullFloat64
		spec                        string
	}
	var recs []rec
	for rows.Next() {
		var r rec
		if err := rows.Scan(&r.freq, &r.interval, &r.wkst, &r.count, &r.end, &r.spec); err != nil {
			return "", "", err
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return "", "", err
	}
	notUnderstood := func(why string) string {
		return fmt.Sprintf("event %q repeats by a rule Tidings does not understand (%s): shown once", it.summary, why)
	}
	switch {
	case len(recs) == 0:
		return "", "", nil
	case len(recs) > 1:
		return "", notUnderstood("more than one recurrence rule"), nil
	}
	r := recs[0]
	freq, ok := appleFreq[r.freq]
	if !ok {
		return "", notUnderstood(fmt.Sprintf("frequency %d", r.freq)), nil
	}
	parts := []string{"FREQ=" + freq}
	if r.interval > 1 {
		parts = append(parts, "INTERVAL="+strconv.FormatInt(r.interval, 10))
	}
	by, err := appleSpecifier(r.spec)
	if err != nil {
		return "", notUnderstood(fmt.Sprintf("specifier %q: %v", r.spec, err)), nil
	}
	// week_start's codes are undocumented; RFC 5545's WKST changes the
	// occurrences only of a weekly rule with an interval and several days.
	if r.wkst != 0 && freq == "WEEKLY" && r.interval > 1 && strings.Contains(by, ",") {
		return "", notUnderstood(fmt.Sprintf("week start %d", r.wkst)), nil
	}
	if by != "" {
		parts = append(parts, by)
	}
	switch {
	case r.count > 0:
		parts = append(parts, "COUNT="+strconv.FormatInt(r.count, 10))
	case r.end.Valid && r.end.Float64 > 0:
		u := appleTime(r.end.Float64)
		if it.allDay {
			parts = append(parts, "UNTIL="+u.UTC().Format("20060102"))
		} else {
			parts = append(parts, "UNTIL="+u.UTC().Format("20060102T150405Z"))
		}
	}
	return strings.Join(parts, ";"), "", nil
}

var weekdays = map[string]bool{"MO": true, "TU": true, "WE": true, "TH": true, "FR": true, "SA": true, "SU": true}

// appleSpecifier turns Recurrence.specifier — ';'-separated KEY=values,
// D= days of the week with an optional ordinal ("0MO" every Monday,
// "+2MO" the second, "-1FR" the last), M= days of the month, O= months,
// S= the position in the set — into RRULE BY parts. Any other key or a
// value out of range is an error.
func appleSpecifier(spec string) (string, error) {
	var parts []string
	for _, tok := range strings.Split(spec, ";") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		key, vals, ok := strings.Cut(tok, "=")
		if !ok || vals == "" {
			return "", fmt.Errorf("%q is not KEY=values", tok)
		}
		var out []string
		for _, v := range strings.Split(vals, ",") {
			v = strings.TrimSpace(v)
			switch key {
			case "D":
				if len(v) < 2 || !weekdays[v[len(v)-2:]] {
					return "", fmt.Errorf("day %q", v)
				}
				day, ord := v[len(v)-2:], v[:len(v)-2]
				if ord == "" || ord == "0" {
					out = append(out, day)
					continue
				}
				n, err := strconv.Atoi(ord)
				if err != nil || n == 0 || n < -53 || n > 53 {
					return "", fmt.Errorf("day %q", v)
				}
				out = append(out, strconv.Itoa(n)+day)
			case "M", "O", "S":
				n, err := strconv.Atoi(v)
				lim := map[string]int{"M": 31, "O": 12, "S": 366}[key]
				if err != nil || n == 0 || n > lim || n < -lim || (key == "O" && n < 0) {
					return "", fmt.Errorf("%s value %q", key, v)
				}
				out = append(out, strconv.Itoa(n))
			default:
				return "", fmt.Errorf("unknown key %q", key)
			}
		}
		name := map[string]string{"D": "BYDAY", "M": "BYMONTHDAY", "O": "BYMONTH", "S": "BYSETPOS"}[key]
		parts = append(parts, name+"="+strings.Join(out, ","))
	}
	return strings.Join(parts, ";"), nil
}

// errAppleCalReadOnly is returned by writes off macOS: the store is
// never written, and only Calendar.app on a Mac creates events in it.
var errAppleCalReadOnly = errors.New("the Mac's Calendar store is read-only here: Tidings creates events in it through Calendar.app on macOS only; use a [[calendar.accounts]] CalDAV calendar")
