package app

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// The tools/list budget of internal/mcpserver (ListBudget: the original
// default tools share 12 KB, every other tool brings at most 1.5 KB) holds
// with the listed services too: with the default toolsets, and with every
// toolset named, sending on and file_dirs set. The sizes are printed.
func TestToolsListWithEveryServiceFitsItsBudget(t *testing.T) {
	ctx := context.Background()
	services, err := BuildServices(neutralEnv(t), Services)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, ts := range mcpserver.Toolsets {
		all = append(all, string(ts))
	}
	for _, tc := range []struct {
		name string
		f    mcpserver.Filters
	}{
		{"defaults", mcpserver.Filters{}},
		{"every toolset, send and file_dirs", mcpserver.Filters{Toolsets: all, EnableSend: true,
			Profile: &mcpserver.Profile{Access: "write", AllowExternal: true, FileDirs: []string{"/tmp"}}}},
	} {
		srv, err := mcpserver.New(&mcpserver.Deps{}, tc.f, services...)
		if err != nil {
			t.Fatal(err)
		}
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.SDK.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "size", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ListTools(ctx, nil)
		cs.Close()
		ss.Close()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		budget := mcpserver.ListBudget(names)
		t.Logf("tools/list, %s: %d bytes for %d tools (budget %d)", tc.name, len(b), len(names), budget)
		if len(b) > budget {
			t.Errorf("tools/list, %s, is %d bytes, over its budget of %d", tc.name, len(b), budget)
		}
	}
}
