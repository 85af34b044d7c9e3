package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/testclock"
)

// FuzzParseTimestamp: before_timestamp is model input. Parsing never
// panics; an accepted value is a real time whose error-free parse is
// stable, and a refusal is one sentence that does not echo more than 40
// bytes of the input.
func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2026-11-30T09:00:00-08:00", "2026-11-30", "9999-12-31", "nan", "1e308", "-1", "2026-13-45", "2026-11-30T25:00:00Z", strings.Repeat("9", 200)} {
		f.Add(s)
	}
	now := testclock.Date(2026, 11, 30, 9, 0, 0, 0, time.FixedZone("PST", -8*3600))
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseTimestamp(s, now)
		if err != nil {
			if strings.Contains(err.Error(), "\n") || len(err.Error()) > 300 {
				t.Fatalf("error is not one short sentence: %q", err)
			}
			return
		}
		if ts.IsZero() && !strings.HasPrefix(strings.TrimSpace(s), "0001-01-01") {
			t.Fatalf("%q parsed to the zero time", s)
		}
		if again, err := ParseTimestamp(ts.Format(time.RFC3339Nano), now); err != nil || !again.Equal(ts) {
			t.Fatalf("%q → %v does not round-trip: %v %v", s, ts, again, err)
		}
	})
}
