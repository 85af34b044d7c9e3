package mcpserver

import "slices"

// Budget of the tools/list result (docs/tools.md, "Sizes"): every
// conversation pays for it before its first question. The tools Tidings
// registered by default when the budget was set (OriginalTools) get
// ListBudgetBase bytes together; every other tool — one a setting enables
// (send, file_dirs), or one added since (get_attachment, the services) —
// brings at most ListBudgetPerTool.
// internal/app's TestToolsListWithEveryServiceFitsItsBudget applies the same
// rule with every service enabled.
const (
	ListBudgetBase    = 12 << 10
	ListBudgetPerTool = 1536
)

// OriginalTools are the tools of the budget's base: the default tools/list
// of 2026-12-01.
var OriginalTools = []string{"get_status", "list_conversations", "get_conversation_messages", "search_messages",
	"review_messages", "get_response_stats", "lookup_contacts", "get_contact_dossier"}

// ListBudget is the tools/list budget for a list of these tools.
func ListBudget(names []string) int {
	budget := ListBudgetBase
	for _, n := range names {
		if !slices.Contains(OriginalTools, n) {
			budget += ListBudgetPerTool
		}
	}
	return budget
}
