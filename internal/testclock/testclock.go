// Package testclock is where tests get their fixed dates. Every fixed date a
// test builds (a fixture's "now", a message's time, a pinned clock) comes
// from Date or Anchor, which move it by TIDINGS_TEST_DATE_SHIFT_DAYS whole
// days (default 0). ./scripts/test runs the packages that import this one a
// second and third time shifted a year ahead and a year back: a test whose
// fixed dates meet the real clock somewhere (a source stamped with a fixed
// date, an index watermark taken from time.Now) then fails on the day it is
// written instead of on the day the calendar passes its date.
//
// Go's time.Now cannot be faked from outside the process (it does not go
// through libc), so the shift moves the fixed dates instead of the clock.
// Only tests import this package (and test-data builders such as
// internal/service/servicetest that only tests use).
package testclock

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// ShiftEnv names the environment variable holding the shift in whole days
// (may be negative).
const ShiftEnv = "TIDINGS_TEST_DATE_SHIFT_DAYS"

var shift = sync.OnceValue(func() int {
	v := os.Getenv(ShiftEnv)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		panic(fmt.Sprintf("testclock: %s=%q is not a whole number of days", ShiftEnv, v))
	}
	return n
})

// ShiftDays is the shift in days applied to every fixed test date.
func ShiftDays() int { return shift() }

// Date is time.Date moved by the shift: the fixed dates of tests.
func Date(year int, month time.Month, day, hour, min, sec, nsec int, loc *time.Location) time.Time {
	return time.Date(year, month, day, hour, min, sec, nsec, loc).AddDate(0, 0, shift())
}

// Shifted moves a fixed time by the shift (for times built otherwise, e.g.
// parsed from a fixture file).
func Shifted(t time.Time) time.Time { return t.AddDate(0, 0, shift()) }

// Anchor is the project's usual fixed "now" for tests, 2026-11-30 12:00 UTC,
// moved by the shift. Tests pin the clock of the code under test to it (or to
// another Date) and build their data relative to it.
func Anchor() time.Time { return Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

// Text moves a fixed date written as text (an expected output, a fixture's
// field) by the shift: value is parsed with layout, shifted, and formatted
// with the same layout. It panics on a value that does not parse, which is a
// mistake in the test.
func Text(layout, value string) string {
	t, err := time.Parse(layout, value)
	if err != nil {
		panic(fmt.Sprintf("testclock: %q does not parse as %q: %v", value, layout, err))
	}
	return Shifted(t).Format(layout)
}
