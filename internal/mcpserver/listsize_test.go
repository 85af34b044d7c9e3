package mcpserver

import (
	"context"
	"encoding/json"
	"testing"
)

// Budget of the tools/list result (docs/tools.md, "Sizes"): every
// conversation pays for it before its first question. With no config,
// profile or send switch it is at most listBudgetBase bytes; with
// everything enabled (send, a profile with file_dirs), listBudgetBase plus
// listBudgetPerTool for each tool that adds.
const (
	listBudgetBase    = 12 << 10
	listBudgetPerTool = 1536
)

// TestToolsListFitsItsBudget prints the size of the tools/list result (as
// compact JSON, what goes on the wire) with the default settings and with
// everything enabled, and fails above the budget.
func TestToolsListFitsItsBudget(t *testing.T) {
	size := func(f Filters) (int, int) {
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
		for _, tool := range res.Tools {
			tb, _ := json.Marshal(tool)
			t.Logf("  %-28s %6d bytes", tool.Name, len(tb))
		}
		return len(b), len(res.Tools)
	}
	base, nBase := size(Filters{})
	t.Logf("tools/list, defaults: %d bytes for %d tools (budget %d)", base, nBase, listBudgetBase)
	all, nAll := size(Filters{EnableSend: true, Profile: &Profile{Access: "write", AllowExternal: true, FileDirs: []string{"/tmp"}}})
	budgetAll := listBudgetBase + listBudgetPerTool*(nAll-nBase)
	t.Logf("tools/list, everything enabled: %d bytes for %d tools (budget %d)", all, nAll, budgetAll)
	if base > listBudgetBase {
		t.Errorf("tools/list with the defaults is %d bytes, over its budget of %d", base, listBudgetBase)
	}
	if all > budgetAll {
		t.Errorf("tools/list with everything enabled is %d bytes, over its budget of %d", all, budgetAll)
	}
}
