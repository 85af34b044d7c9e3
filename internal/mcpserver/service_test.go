package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func fakeServiceTool(name string, ts Toolset) Tool {
	return Define(Tool{Name: name, Title: name, Description: "test tool " + name, Toolset: ts,
		ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No},
		func(*Deps) mcp.ToolHandlerFor[struct{}, struct{}] {
			return func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
				return nil, struct{}{}, nil
			}
		})
}

// A service's tools register only when it can work here and its toolset is
// enabled: opt-in services need their toolset named, default ones join the
// unset toolsets, and an unavailable service gives its sentence as the
// reason (docs/architecture.md, "How to add a service").
func TestServiceToolsRegisterOnlyWhenTheyCanWork(t *testing.T) {
	system := Service{Name: "system", Default: true, Tools: []Tool{fakeServiceTool("permissions_check", ToolsetSystem)}}
	webOpen := fakeServiceTool("web_open", ToolsetWeb)
	webOpen.Unavailable = "no opener on PATH" // one tool of a working service
	web := Service{Name: "web", Tools: []Tool{fakeServiceTool("web_fetch", ToolsetWeb), webOpen}}
	mail := Service{Name: "mail", Default: true, Unavailable: "no [[mail.accounts]] in config.toml",
		Tools: []Tool{fakeServiceTool("mail_search", ToolsetMail)}}
	for _, tc := range []struct {
		name     string
		toolsets []string
		want     map[string]string // tool -> reason ("" = registered)
	}{
		{"toolsets unset: default service in, opt-in out", nil, map[string]string{
			"permissions_check": "",
			"web_fetch":         `toolset "web" is opt-in: name it in the toolsets setting to register it`,
			"mail_search":       "unavailable: no [[mail.accounts]] in config.toml",
			"search_messages":   "",
		}},
		{"named opt-in toolset registers", []string{"web", "mail"}, map[string]string{
			"permissions_check": `toolset "system" is not enabled`,
			"web_fetch":         "",
			"web_open":          "unavailable: no opener on PATH",
			"mail_search":       "unavailable: no [[mail.accounts]] in config.toml",
			"search_messages":   `toolset "messages" is not enabled`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := New(&Deps{}, Filters{Toolsets: tc.toolsets}, system, web, mail)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, d := range srv.Selection.Decisions {
				got[d.Tool] = d.Reason
				if d.Enabled != (d.Reason == "") {
					t.Errorf("%s: enabled=%v with reason %q", d.Tool, d.Enabled, d.Reason)
				}
			}
			for tool, want := range tc.want {
				if r, ok := got[tool]; !ok || r != want {
					t.Errorf("%s: reason %q (listed %v), want %q", tool, r, ok, want)
				}
			}
		})
	}
}
