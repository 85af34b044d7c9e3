package mcpserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolErrorsQuotingInputAreEscaped: a tool's error that quotes input
// (an Android export's root element, a path read from a file) becomes an
// isError result whose text has every control character and bidi override
// escaped and its length bounded (docs/security.md, "Errors that quote
// input").
func TestToolErrorsQuotingInputAreEscaped(t *testing.T) {
	type in struct {
		Case string `json:"case"`
	}
	type out struct{}
	hostile := map[string]string{
		"osc":  "root element <\x1b]0;pwned\x07>, want <smses>",
		"c1":   "root element <x\u009b31m>",
		"bidi": "file \u202egnp.exe",
		"long": strings.Repeat("\x1b[2J", 10000),
	}
	tool := Define(Tool{Name: "failing", Title: "Failing", Description: "Fail with a hostile error.", Toolset: ToolsetStatus,
		ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No},
		func(*Deps) mcp.ToolHandlerFor[in, out] {
			return func(_ context.Context, _ *mcp.CallToolRequest, i in) (*mcp.CallToolResult, out, error) {
				return nil, out{}, errors.New(hostile[i.Case])
			}
		})
	srv, err := newFromTools([]Tool{tool}, &Deps{}, Filters{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv.SDK)
	for name := range hostile {
		t.Run(name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "failing", Arguments: map[string]any{"case": name}})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !res.IsError {
				t.Fatalf("not an error result: %q", text)
			}
			for _, r := range text {
				if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e {
					t.Fatalf("raw %U in the tool result: %q", r, text)
				}
			}
			if len(text) > 10000 {
				t.Errorf("the tool result is %d bytes: quoted input must be bounded", len(text))
			}
		})
	}
}
