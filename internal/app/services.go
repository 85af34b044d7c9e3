package app

import (
	"github.com/tidings-mcp/tidings/internal/addressbook"
	"github.com/tidings-mcp/tidings/internal/calendar"
	"github.com/tidings-mcp/tidings/internal/capture"
	"github.com/tidings-mcp/tidings/internal/location"
	"github.com/tidings-mcp/tidings/internal/mail"
	"github.com/tidings-mcp/tidings/internal/maps"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/shortcuts"
	"github.com/tidings-mcp/tidings/internal/system"
	"github.com/tidings-mcp/tidings/internal/utilities"
	"github.com/tidings-mcp/tidings/internal/weather"
	"github.com/tidings-mcp/tidings/internal/web"
)

// Services is the explicit service list: one line per service package
// (its New, of type mcpserver.ServiceFactory), in the order their tools
// follow the inventory's and their checks follow the process's. serve,
// the helper and `tidings doctor` build exactly this list, and
// TestServiceGuard holds every entry to the rules of docs/architecture.md,
// "How to add a service" (annotations, snapshots, Checks, Status).
var Services = []mcpserver.ServiceFactory{
	system.New,
	web.New,
	weather.New,
	maps.New,
	calendar.New,
	calendar.NewReminders,
	addressbook.New,
	mail.New,
	location.New,
	capture.New,
	shortcuts.New,
	utilities.New,
}
