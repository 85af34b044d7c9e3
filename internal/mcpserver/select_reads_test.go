package mcpserver

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAFileReadingToolNeedsFileDirs: a tool that reads the person's files
// (ReadsFiles: utilities_play_sound) is registered only when the profile
// names file_dirs, like a file-writing tool, and its reason says read.
func TestAFileReadingToolNeedsFileDirs(t *testing.T) {
	inv := []Tool{Define(Tool{Name: "utilities_play_sound", Title: "t", Description: "d", Toolset: ToolsetUtilities,
		ReadOnly: Yes, Destructive: No, Idempotent: No, OpenWorld: No, ReadsFiles: true},
		func(*Deps) mcp.ToolHandlerFor[struct{}, struct{}] { return nil })}
	for _, tt := range []struct {
		name   string
		p      *Profile
		want   bool
		reason string
	}{
		{"no profile", nil, false, "no file_dirs: a profile must name the folders this tool may read from"},
		{"no file_dirs", &Profile{Access: "read"}, false, "read from"},
		{"file_dirs", &Profile{Access: "read", FileDirs: []string{"/in"}}, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Select(inv, Filters{Toolsets: []string{"utilities"}, Profile: tt.p})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(sel.Names()) == 1; got != tt.want {
				t.Fatalf("registered = %v, want %v (%+v)", got, tt.want, sel.Decisions)
			}
			if tt.reason != "" && !strings.Contains(sel.Decisions[0].Reason, tt.reason) {
				t.Fatalf("reason %q, want %q", sel.Decisions[0].Reason, tt.reason)
			}
		})
	}
}
