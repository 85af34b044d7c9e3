package app

import "github.com/tidings-mcp/tidings/internal/mcpserver"

// Services is the explicit service list: one line per service package
// (its New, of type mcpserver.ServiceFactory), in the order their tools
// follow the inventory's and their checks follow the process's. serve,
// the helper and `tidings doctor` build exactly this list, and
// TestServiceGuard holds every entry to the rules of docs/architecture.md,
// "How to add a service" (annotations, snapshots, Checks, Status).
//
// The services of issue 14 (system, web, weather, maps) add their lines
// here as they land, e.g.
//
//	system.New,
var Services = []mcpserver.ServiceFactory{}
