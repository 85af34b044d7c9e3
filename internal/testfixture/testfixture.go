// Package testfixture holds helpers shared by the tests of the packages
// that analyse messages (internal/triage, internal/dossier): the "ago"
// durations of their hand-written fixture files, and the demo data set
// read back through the iMessage reader. Only tests import it.
package testfixture

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
)

// ParseAgo reads a fixture's "ago" duration: whole numbers each followed
// by a unit, d (24 h), h, m or s, as in "3d2h", "90m", "1h50m", "45s".
// The empty string is 0.
func ParseAgo(s string) (time.Duration, error) {
	var d time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		n, _ := strconv.Atoi(rest[:i])
		unit := map[byte]time.Duration{'d': 24 * time.Hour, 'h': time.Hour, 'm': time.Minute, 's': time.Second}[rest[i]]
		if unit == 0 {
			return 0, fmt.Errorf("bad unit in %q", s)
		}
		d += time.Duration(n) * unit
		rest = rest[i+1:]
	}
	return d, nil
}

// DemoMessages is the size of the demo data set Demo generates: the
// scripted storylines and 3000 messages of filler.
func DemoMessages() int { return demo.MinMessages() + 3000 }

// Demo generates the demo data set (DemoMessages messages, seed 7, "now"
// at now) in a temporary folder and opens its chat.db through the iMessage
// reader, which is closed when the test ends.
func Demo(t testing.TB, now time.Time) (*imessage.Reader, *demo.Result) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	res, err := demo.Generate(ctx, demo.Options{Dir: dir, Messages: DemoMessages(), Seed: 7, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	r, err := imessage.Open(ctx, res.ChatDB, imessage.Options{Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, res
}
