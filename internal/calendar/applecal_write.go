package calendar

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/emersion/go-ical"

	"github.com/tidings-mcp/tidings/internal/send"
)

// AppleCalRunTimeout bounds one osascript run of a create: a stuck
// osascript (most often an unanswered Automation consent prompt) is
// stopped, not waited on (the pattern of internal/send).
const AppleCalRunTimeout = 30 * time.Second

// appleCalReadBack bounds how long Get waits for Calendar.app to store the
// event it just created: readBackTries reads, readBackPause apart.
const (
	readBackTries = 10
	readBackPause = 300 * time.Millisecond
)

//go:embed scripts/create_event.applescript
var createEventScript string

// errAppleCalAttendees refuses invitations through Calendar.app: it would
// send them from the Mac's account, outside the CalDAV path whose
// organizer and allow_external rules docs/security.md describes.
var errAppleCalAttendees = errors.New("events with attendees are created on a [[calendar.accounts]] CalDAV calendar, not through the Mac's Calendar app")

func (a *AppleCal) osascript() string {
	if a.Osascript != "" {
		return a.Osascript
	}
	return "/usr/bin/osascript"
}

// createCommand builds the osascript run that creates ev in the calendar
// titled calTitle. Everything variable is an argument (`on run argv`),
// never script source; dates are numbers in the Mac's zone (loc).
func (a *AppleCal) createCommand(scriptPath, calTitle string, ev *ical.Component, loc *time.Location) (send.Command, error) {
	x := Expander{Loc: loc}
	start, err := x.prop(ev, ical.PropDateTimeStart, nil)
	if err != nil {
		return send.Command{}, err
	}
	end, err := x.prop(ev, ical.PropDateTimeEnd, nil)
	if err != nil {
		return send.Command{}, err
	}
	if start.AllDay() != end.AllDay() {
		return send.Command{}, errors.New("start and end must both be dates or both be times")
	}
	allDay := "0"
	if start.AllDay() {
		allDay = "1"
	}
	return send.Command{
		Path: a.osascript(),
		Args: []string{scriptPath, calTitle, propText(ev, ical.PropSummary), macDate(start.Time.In(loc)), macDate(end.Time.In(loc)),
			allDay, propText(ev, ical.PropLocation), propText(ev, ical.PropDescription)},
		Timeout: AppleCalRunTimeout,
	}, nil
}

// macDate is "YEAR MONTH DAY SECONDS-OF-DAY", what the script's mkdate reads.
func macDate(t time.Time) string {
	return fmt.Sprintf("%d %d %d %d", t.Year(), int(t.Month()), t.Day(), t.Hour()*3600+t.Minute()*60+t.Second())
}

// Put implements Backend: on macOS it creates the event through
// Calendar.app (the store itself is never written); elsewhere the store
// is read-only. Only new, single, invitation-free events are written.
func (a *AppleCal) Put(ctx context.Context, c Collection, _ string, cal *ical.Calendar, cond Cond) (string, error) {
	if !a.writes {
		return "", errAppleCalReadOnly
	}
	if !cond.IfNoneMatch || cal == nil {
		return "", errors.New("the Mac's Calendar app is only given new events; edit existing ones in Calendar")
	}
	var ev *ical.Component
	for _, ch := range cal.Children {
		if ch.Name == Events {
			ev = ch
		}
	}
	switch {
	case ev == nil:
		return "", errors.New("the Mac's Calendar app is only given events")
	case len(ev.Props.Values(ical.PropAttendee)) > 0:
		return "", errAppleCalAttendees
	case ev.Props.Get(ical.PropRecurrenceRule) != nil || ev.Props.Get(ical.PropRecurrenceDates) != nil:
		return "", errors.New("recurring events are created on a CalDAV calendar, not through the Mac's Calendar app")
	}
	title, err := a.uniqueTitle(ctx, c)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "tidings-cal-")
	if err != nil {
		return "", fmt.Errorf("create event: %w", err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "create_event.applescript")
	if err := os.WriteFile(script, []byte(createEventScript), 0o600); err != nil {
		return "", fmt.Errorf("create event: write script: %w", err)
	}
	cmd, err := a.createCommand(script, title, ev, time.Local)
	if err != nil {
		return "", err
	}
	runner := a.Runner
	if runner == nil {
		runner = send.ExecRunner{}
	}
	res, err := runner.Run(ctx, cmd)
	switch {
	case err != nil:
		return "", fmt.Errorf("create event: osascript could not run: %w", err)
	case res.TimedOut:
		return "", fmt.Errorf("the Calendar app did not answer within %s; if macOS is asking whether Tidings may control Calendar, allow it (System Settings → Privacy & Security → Automation) and try again", cmd.Timeout)
	case res.ExitCode != 0:
		return "", fmt.Errorf("the Calendar app refused the event: %s", calendarScriptError(res.Stderr))
	}
	uid := strings.TrimSpace(res.Stdout)
	if uid == "" || strings.ContainsAny(uid, "\r\n#") {
		return "", errors.New("the Calendar app created the event but did not say which one; check the calendar")
	}
	return a.path + "#uid:" + uid, nil
}

// calendarScriptError is one clipped line of osascript's stderr; -1743
// (Automation not allowed) gets its fix. Only the number osascript writes
// at the very end is read, never one quoted from the event's text.
func calendarScriptError(stderr string) string {
	s := strings.TrimSpace(stderr)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if strings.HasSuffix(strings.TrimSpace(stderr), "(-1743)") {
		return "macOS has not allowed Tidings to control Calendar (error -1743); allow it in System Settings → Privacy & Security → Automation"
	}
	if s == "" {
		return "osascript failed without a message"
	}
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}

// uniqueTitle is the title of c's Calendar row, refused when another
// calendar has it too: the script finds its calendar by name.
func (a *AppleCal) uniqueTitle(ctx context.Context, c Collection) (string, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(c.Href, "calendar:"), 10, 64)
	if err != nil {
		return "", fmt.Errorf("calendar file %q: unknown calendar %q", a.name, c.Href)
	}
	db, err := a.open(ctx)
	if err != nil {
		return "", err
	}
	defer db.Close()
	var title string
	var n int
	err = db.QueryRowContext(ctx, `SELECT ifnull(c.title,''), (SELECT count(*) FROM Calendar d WHERE d.title = c.title)
		FROM Calendar c WHERE c.ROWID = ?`, id).Scan(&title, &n)
	if err != nil {
		return "", fmt.Errorf("calendar file %q: calendar %q: %w", a.name, c.Name, err)
	}
	if n != 1 || title == "" {
		return "", fmt.Errorf("two calendars in the Mac's Calendar app are named %q, so Tidings cannot tell Calendar which one; rename one in Calendar", title)
	}
	return title, nil
}

// Get implements Backend for the href Put returned: the event Calendar.app
// stored, read from the store (waiting a bounded time for it to appear).
func (a *AppleCal) Get(ctx context.Context, href string) (Object, error) {
	uid, ok := strings.CutPrefix(href, a.path+"#uid:")
	if !ok || uid == "" {
		return Object{}, errAppleCalReadOnly
	}
	for try := 0; ; try++ {
		o, found, err := a.byUID(ctx, uid)
		if err != nil || found {
			return o, err
		}
		if try+1 >= readBackTries {
			return Object{}, fmt.Errorf("the Calendar app has not stored event %s yet", uid)
		}
		select {
		case <-ctx.Done():
			return Object{}, ctx.Err()
		case <-time.After(readBackPause):
		}
	}
}

func (a *AppleCal) byUID(ctx context.Context, uid string) (Object, bool, error) {
	db, err := a.open(ctx)
	if err != nil {
		return Object{}, false, err
	}
	defer db.Close()
	var rowID, calID int64
	err = db.QueryRowContext(ctx, `SELECT ROWID, calendar_id FROM CalendarItem WHERE (unique_identifier = ?1 OR UUID = ?1) AND ifnull(orig_item_id,0) = 0 LIMIT 1`, uid).Scan(&rowID, &calID)
	if errors.Is(err, sql.ErrNoRows) {
		return Object{}, false, nil // not stored yet
	}
	if err != nil {
		return Object{}, false, fmt.Errorf("calendar file %q: %w", a.name, err)
	}
	items, err := a.items(ctx, db, calID)
	if err != nil {
		return Object{}, false, err
	}
	for i := range items {
		it := &items[i]
		if it.id == rowID {
			ev, problem, err := a.event(ctx, db, it, nil)
			if err != nil {
				return Object{}, false, err
			}
			cal := ical.NewCalendar()
			cal.Props.SetText(ical.PropVersion, "2.0")
			cal.Props.SetText(ical.PropProductID, "-//Tidings//Mac Calendar//EN")
			cal.Children = append(cal.Children, ev)
			return Object{Href: a.path + "#uid:" + uid, Cal: cal, Problem: problem}, true, nil
		}
	}
	return Object{}, false, nil
}
