package testclock

import (
	"testing"
	"time"
)

// TestDateMovesByTheShift: Date and Shifted move fixed dates by exactly the
// configured number of days, keeping the wall-clock time.
func TestDateMovesByTheShift(t *testing.T) {
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	n := ShiftDays()
	want := base.AddDate(0, 0, n)
	if got := Date(2026, 11, 30, 12, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Date = %v, want %v (shift %d days)", got, want, n)
	}
	if got := Shifted(base); !got.Equal(want) {
		t.Errorf("Shifted = %v, want %v", got, want)
	}
	if got := Anchor(); !got.Equal(want) {
		t.Errorf("Anchor = %v, want %v", got, want)
	}
	if d := Anchor().Sub(base); d != time.Duration(n)*24*time.Hour {
		t.Errorf("anchor moved by %v, want %d days", d, n)
	}
}
