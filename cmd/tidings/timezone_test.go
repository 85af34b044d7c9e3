package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/testclock"
)

// TestSearchUsesTheConfiguredTimezone: TIDINGS_TIMEZONE decides the zone
// of what `tidings search` reads and shows (docs/configuration.md "Time
// zone"): a hit's time is printed in it, and "yesterday" is the day before
// today there — with the clock at 12:00 UTC, Pacific/Kiritimati (UTC+14)
// is already on the next day.
func TestSearchUsesTheConfiguredTimezone(t *testing.T) {
	chat := writeChatDB(t)
	ctx := context.Background()
	m, _, errb := testMain(t, map[string]string{"TIDINGS_NOW": anchorRFC3339})
	if err := m.Run(ctx, []string{"index", "--imessage", chat}); err != nil {
		t.Fatalf("index: %v\n%s", err, errb)
	}
	home := m.Getenv("TIDINGS_HOME")
	for _, zone := range []string{"Pacific/Kiritimati", "America/Los_Angeles", "UTC"} {
		t.Run(zone, func(t *testing.T) {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			m, out, errb := testMain(t, map[string]string{"TIDINGS_NOW": anchorRFC3339, "TIDINGS_HOME": home, "TIDINGS_TIMEZONE": zone})
			if err := m.Run(ctx, []string{"search", "dinner", "--mode", "fulltext"}); err != nil {
				t.Fatalf("search: %v\n%s", err, errb)
			}
			sent := testclock.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC).In(loc).Format("2006-01-02 15:04")
			if !strings.HasPrefix(out.String(), sent+"  ") {
				t.Errorf("hit time not shown as %s in %s:\n%s", sent, zone, out)
			}
			out.Reset()
			if err := m.Run(ctx, []string{"search", "messages", "from", "yesterday", "--mode", "fulltext"}); err != nil {
				t.Fatalf("search: %v\n%s", err, errb)
			}
			yesterday := testclock.Anchor().In(loc).AddDate(0, 0, -1).Format("2006-01-02")
			if want := `dates: "yesterday" → ` + yesterday + " to " + yesterday; !strings.Contains(out.String(), want) {
				t.Errorf("want %q in %s:\n%s", want, zone, out)
			}
		})
	}
}

// TestSearchFromToAreDaysInTheConfiguredTimezone: `tidings search --from
// --to` take ISO-8601 dates, read as whole days in TIDINGS_TIMEZONE: the
// dinner message (2026-11-20 09:00 UTC) is on the 19th in Pago Pago.
func TestSearchFromToAreDaysInTheConfiguredTimezone(t *testing.T) {
	chat := writeChatDB(t)
	ctx := context.Background()
	m, _, errb := testMain(t, map[string]string{"TIDINGS_NOW": anchorRFC3339})
	if err := m.Run(ctx, []string{"index", "--imessage", chat}); err != nil {
		t.Fatalf("index: %v\n%s", err, errb)
	}
	home := m.Getenv("TIDINGS_HOME")
	sent := testclock.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for _, zone := range []string{"Pacific/Kiritimati", "Pacific/Pago_Pago", "UTC"} {
		t.Run(zone, func(t *testing.T) {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			day := sent.In(loc)
			for _, tc := range []struct {
				from, to time.Time
				found    bool
			}{{day, day, true}, {day.AddDate(0, 0, -1), day.AddDate(0, 0, -1), false}, {day.AddDate(0, 0, 1), day.AddDate(0, 0, 1), false}} {
				m, out, errb := testMain(t, map[string]string{"TIDINGS_NOW": anchorRFC3339, "TIDINGS_HOME": home, "TIDINGS_TIMEZONE": zone})
				args := []string{"search", "dinner", "--mode", "fulltext", "--from", tc.from.Format("2006-01-02"), "--to", tc.to.Format("2006-01-02")}
				if err := m.Run(ctx, args); err != nil {
					t.Fatalf("%v: %v\n%s", args, err, errb)
				}
				if got := strings.HasPrefix(out.String(), day.Format("2006-01-02 15:04")+"  "); got != tc.found {
					t.Errorf("%v in %s: found %v, want %v:\n%s", args, zone, got, tc.found, out)
				}
			}
		})
	}
	m, _, _ = testMain(t, map[string]string{"TIDINGS_NOW": anchorRFC3339, "TIDINGS_HOME": home})
	if err := m.Run(ctx, []string{"search", "dinner", "--from", "last tuesday"}); err == nil || !strings.Contains(err.Error(), "--from must be an ISO-8601 date") {
		t.Errorf("bad --from: %v", err)
	}
}
