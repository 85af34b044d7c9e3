package mcpserver

import (
	"context"
	"encoding/json"
	"testing"
)

// TestToolsListFitsItsBudget prints the size of the tools/list result (as
// compact JSON, what goes on the wire) with the default settings and with
// everything enabled, and fails above the budget.
func TestToolsListFitsItsBudget(t *testing.T) {
	size := func(f Filters) (int, []string) {
		srv, err := New(&Deps{}, f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := connect(t, srv.SDK).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			tb, _ := json.Marshal(tool)
			t.Logf("  %-28s %6d bytes", tool.Name, len(tb))
			names = append(names, tool.Name)
		}
		return len(b), names
	}
	for _, tc := range []struct {
		name string
		f    Filters
	}{
		{"defaults", Filters{}},
		{"everything enabled", Filters{EnableSend: true, Profile: &Profile{Access: "write", AllowExternal: true, FileDirs: []string{"/tmp"}}}},
	} {
		got, names := size(tc.f)
		budget := ListBudget(names)
		t.Logf("tools/list, %s: %d bytes for %d tools (budget %d)", tc.name, got, len(names), budget)
		if got > budget {
			t.Errorf("tools/list, %s, is %d bytes, over its budget of %d", tc.name, got, budget)
		}
	}
}
