//go:build unix

package bridge

import (
	"fmt"
	"strings"
	"testing"
)

// padded returns a status request of exactly size bytes with id.
func padded(t *testing.T, id string, size int) []byte {
	t.Helper()
	body := fmt.Sprintf(`{"id":%q,"action":"status","params":{"pad":""}}`, id)
	if size < len(body) {
		t.Fatalf("size %d below the minimum %d", size, len(body))
	}
	return []byte(strings.Replace(body, `"pad":""`, `"pad":"`+strings.Repeat("x", size-len(body))+`"`, 1))
}

// TestLimitsAtTheBoundary: protocol 1.2's request limit (64 KiB) and the id
// length bound, at the limit and one past it, through the worker (file
// rules and parser) and the client's encoder.
func TestLimitsAtTheBoundary(t *testing.T) {
	h := newHarness(t, "")
	id128 := strings.Repeat("a", MaxIDLength)
	for _, tc := range []struct {
		name string
		id   string
		body []byte
		size int    // the body's length, when it matters
		want string // "" = answered ok
	}{
		{"64 KiB exactly", "k1", padded(t, "k1", MaxRequestSize), MaxRequestSize, ""},
		{"64 KiB + 1", "k2", padded(t, "k2", MaxRequestSize+1), MaxRequestSize + 1, "64 KiB"},
		{"id of 128 characters", id128, request(id128, "status", nil, ""), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.size != 0 && len(tc.body) != tc.size {
				t.Fatalf("fixture: body is %d bytes, want %d", len(tc.body), tc.size)
			}
			got := h.roundTrip(tc.id, tc.body)
			if tc.want == "" {
				if got["ok"] != true {
					t.Errorf("got %v", got)
				}
				return
			}
			if msg, _ := got["error"].(string); got["ok"] != false || !strings.Contains(msg, tc.want) {
				t.Errorf("got %v, want an error containing %q", got, tc.want)
			}
		})
	}
	// An id of 129 characters cannot name a file the client waits on: the
	// parser refuses it, and a file carrying it is removed unanswered.
	if _, err := ParseRequest(request(id128+"a", "status", nil, ""), ""); err == nil || !strings.Contains(err.Error(), `"id" must be 1-128`) {
		t.Errorf("129-character id: %v", err)
	}
	if ValidID("") || !ValidID(id128) || ValidID(id128+"a") || ValidID("-a") || !ValidID("a-") {
		t.Errorf("ValidID bounds")
	}
	// The client refuses to publish a request past the limit.
	if _, err := encodeRequest("c1", "search", map[string]any{"term": strings.Repeat("x", MaxRequestSize)}, Version13); err == nil ||
		!strings.Contains(err.Error(), "64 KiB") {
		t.Errorf("client encoder: %v", err)
	}
	if h.opened() != 0 {
		t.Errorf("status opened the backend")
	}
}
