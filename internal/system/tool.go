package system

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// outputSchema names Report's fields without spelling out every item.
var outputSchema = &jsonschema.Schema{
	Type:     "object",
	Required: []string{"platform", "services", "sources", "permissions"},
	Properties: map[string]*jsonschema.Schema{
		"platform":    {Type: "string"},
		"services":    {Type: "array", Description: "name, state, detail, backends[name, kind, state, detail]"},
		"sources":     {Type: "array", Description: "name (path), kind, state, detail"},
		"permissions": {Type: "array", Description: "grant, target, needed_for, state, how, detail"},
	},
}

// PermissionsInput takes no arguments.
type PermissionsInput struct{}

// tool is permissions_check. Read-only and closed world: it reads local
// files and asks each configured service for its own status, whose
// reachability probes contact only backends the user configured and carry
// nothing the caller chose — the seed's rule that reaching the user's own
// accounts is not open world (docs/security.md, "Open world"). It sends
// nothing anywhere itself.
func (s *system) tool() mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name:  "permissions_check",
		Title: "Check permissions",
		Description: "What Tidings can reach here, without content: each service's backends (reachable, credentials accepted), " +
			"each data source (readable or not) and, on macOS, the privacy permissions the configured services need " +
			"(Full Disk Access is inferred from a read probe; macOS offers no status for it). On Linux permissions are not applicable.",
		Toolset:     mcpserver.ToolsetSystem,
		ReadOnly:    mcpserver.Yes,
		Destructive: mcpserver.No,
		Idempotent:  mcpserver.Yes,
		OpenWorld:   mcpserver.No,
		// A small output schema (the tools/list budget, 1.5 KB per tool):
		// the lists' items are described in docs/tools.md.
		OutputSchema: outputSchema,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[PermissionsInput, Report] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, _ PermissionsInput) (*mcp.CallToolResult, Report, error) {
			return nil, s.report(ctx), nil
		}
	})
}
