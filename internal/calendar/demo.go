package calendar

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DemoFile is the demo data set's ICS file (events and to-dos), written
// next to the demo chat.db by `serve --demo` (docs/tools.md, "Calendar").
const DemoFile = "calendar.ics"

// WriteDemo writes the demo calendar into dir: made-up events around now
// in loc (a weekly series with an exception, an all-day trip, a dinner with
// a description) and three to-dos, so the calendar and reminder tools show
// something with no account. It is deterministic for a given now and
// replaced atomically.
func WriteDemo(dir string, now time.Time, loc *time.Location) (string, error) {
	n := now.In(loc)
	day := func(d int) time.Time { return time.Date(n.Year(), n.Month(), n.Day()+d, 0, 0, 0, 0, loc) }
	at := func(d, h, m int) string {
		return day(d).Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute).UTC().Format("20060102T150405Z")
	}
	date := func(d int) string { return day(d).Format("20060102") }
	stamp := now.UTC().Format("20060102T150405Z")
	// The standup is on Mondays at 09:30 UTC from four weeks back, one
	// week skipped (EXDATE, last week).
	monday := -((int(n.Weekday()) + 6) % 7)
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Tidings//Demo//EN\r\nX-WR-CALNAME:Demo\r\n")
	ev := func(uid, lines string) {
		b.WriteString("BEGIN:VEVENT\r\nUID:" + uid + "@demo.tidings\r\nDTSTAMP:" + stamp + "\r\n" + lines + "END:VEVENT\r\n")
	}
	ev("standup", "SUMMARY:Team standup\r\nDTSTART:"+at(monday-28, 9, 30)+"\r\nDURATION:PT15M\r\nRRULE:FREQ=WEEKLY;COUNT=12\r\nEXDATE:"+at(monday-7, 9, 30)+"\r\n")
	ev("coffee", "SUMMARY:Coffee with Maya\r\nDTSTART:"+at(0, 15, 0)+"\r\nDTEND:"+at(0, 16, 0)+"\r\nLOCATION:Blue Door Café\r\n")
	ev("dinner", "SUMMARY:Dinner at Mom's\r\nDTSTART:"+at(2, 18, 30)+"\r\nDTEND:"+at(2, 21, 0)+"\r\nDESCRIPTION:Bring the photo album. Gate code 2468.\r\n")
	ev("lisbon", "SUMMARY:Lisbon trip\r\nDTSTART;VALUE=DATE:"+date(4)+"\r\nDTEND;VALUE=DATE:"+date(7)+"\r\n")
	ev("climbing", "SUMMARY:Climbing with the crew\r\nDTSTART:"+at(1, 18, 0)+"\r\nDURATION:PT2H\r\nRRULE:FREQ=WEEKLY;COUNT=6\r\n")
	todo := func(uid, lines string) {
		b.WriteString("BEGIN:VTODO\r\nUID:" + uid + "@demo.tidings\r\nDTSTAMP:" + stamp + "\r\n" + lines + "END:VTODO\r\n")
	}
	todo("restaurant", "SUMMARY:Book the restaurant for Emma's birthday\r\nDUE;VALUE=DATE:"+date(1)+"\r\nPRIORITY:1\r\nSTATUS:NEEDS-ACTION\r\n")
	todo("passport", "SUMMARY:Renew passport\r\nDUE;VALUE=DATE:"+date(6)+"\r\nSTATUS:NEEDS-ACTION\r\n")
	todo("rent", "SUMMARY:Pay rent\r\nSTATUS:COMPLETED\r\nCOMPLETED:"+at(-1, 9, 0)+"\r\n")
	b.WriteString("END:VCALENDAR\r\n")
	path := filepath.Join(dir, DemoFile)
	tmp, err := os.CreateTemp(dir, ".calendar-*.ics")
	if err != nil {
		return "", fmt.Errorf("demo calendar: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return "", fmt.Errorf("demo calendar: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("demo calendar: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("demo calendar: %w", err)
	}
	return path, nil
}
