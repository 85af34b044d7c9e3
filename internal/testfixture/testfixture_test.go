package testfixture

import (
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/testclock"
)

func TestParseAgo(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: "", want: 0},
		{in: "45s", want: 45 * time.Second},
		{in: "90m", want: 90 * time.Minute},
		{in: "1h50m", want: time.Hour + 50*time.Minute},
		{in: "3d2h", want: 74 * time.Hour},
		{in: "2h3d", want: 74 * time.Hour},
		{in: "10", wantErr: true},
		{in: "h", wantErr: true},
		{in: "3w", wantErr: true},
		{in: "-3h", wantErr: true},
		{in: "1.5h", wantErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseAgo(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseAgo(%q) error %v, want error: %v", tc.in, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ParseAgo(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// TestDemoFixtureReadsBackWhatTheGeneratorWrote: Demo generates at least
// DemoMessages messages with stories and contacts, and the reader it returns
// sees every conversation the generator wrote.
func TestDemoFixtureReadsBackWhatTheGeneratorWrote(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the demo data set")
	}
	now := testclock.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	r, res := Demo(t, now)
	if res.Messages < DemoMessages() || len(res.Stories) == 0 || res.Contacts == "" {
		t.Fatalf("demo result: %d messages, %d stories, contacts %q", res.Messages, len(res.Stories), res.Contacts)
	}
	convs, err := r.Conversations(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != res.Conversations {
		t.Errorf("reader sees %d conversations, the generator wrote %d", len(convs), res.Conversations)
	}
}
