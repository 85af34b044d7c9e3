package service

import (
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/output"
)

// dateLayouts are the ISO-8601 forms date_from and date_to accept; the
// ones without an offset are read in the user's zone (Options.Location,
// the config's timezone).
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

// dateRange reads explicit date bounds (docs/tools.md): from is the first
// instant included; to is inclusive — a date-only to includes that whole
// day (its end is the next midnight in the user's zone), a time includes
// messages at that instant. It returns [since, until) with zero for an
// absent bound, or a one-sentence error naming the parameter.
func (s *Service) dateRange(from, to string) (since, until time.Time, err error) {
	if since, _, err = s.parseDate("date_from", from); err != nil {
		return
	}
	var dateOnly bool
	if until, dateOnly, err = s.parseDate("date_to", to); err != nil {
		return
	}
	switch {
	case until.IsZero():
	case dateOnly:
		until = time.Date(until.Year(), until.Month(), until.Day()+1, 0, 0, 0, 0, s.loc)
	default:
		until = until.Add(time.Millisecond) // the index keeps milliseconds
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return time.Time{}, time.Time{}, userErr("date_from must not be after date_to")
	}
	return since, until, nil
}

func (s *Service) parseDate(name, v string) (time.Time, bool, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return time.Time{}, false, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", v, s.loc); err == nil && t.Year() >= 1 {
		return t, true, nil
	}
	for _, layout := range dateLayouts {
		var t time.Time
		var err error
		if strings.Contains(layout, "Z07") {
			t, err = time.Parse(layout, v)
		} else {
			t, err = time.ParseInLocation(layout, v, s.loc)
		}
		if err == nil {
			return t, false, nil
		}
	}
	return time.Time{}, false, userErr("%s must be an ISO-8601 date such as 2026-11-30 or a time such as 2026-11-30T09:00:00-08:00 (got %q)", name, output.Name(clipRunes(v, 40)))
}

func clipRunes(s string, n int) string {
	out, _ := capRunes(s, n)
	return out
}
