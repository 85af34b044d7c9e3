package maps

import "github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"

// Real clients over stdio and HTTP, and tool calls with raw JSON arguments
// (internal/mcpserver/mcptest).
var (
	sessions = mcptest.Sessions
	call     = mcptest.Call
)
