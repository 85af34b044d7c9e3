package mcpserver

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/index"
)

// Service is one service of seed 002 as the server sees it: its tools, why
// it cannot work here (if it cannot), its doctor checks, its get_status
// fields and the profile scope fields it enforces. A service package builds
// one from a ServiceEnv with a constructor of type ServiceFactory, and is
// registered by one line in the explicit list of internal/app
// (docs/architecture.md, "How to add a service"). Service packages own
// their backends behind small interfaces; only their tool files import
// this package.
type Service struct {
	// Name is the service's config section and its key under get_status
	// "services" ("web", "weather", "mail").
	Name string
	// Tools are the service's inventory entries, built with Define. Each
	// names a toolset from Toolsets.
	Tools []Tool
	// Unavailable says in one sentence why the service's tools cannot work
	// in this process ("no [[mail.accounts]] in config.toml", "no
	// screenshot program found: install grim or ImageMagick"); "" when they
	// can. Unavailable tools are not registered and get_status gives this
	// sentence as their reason.
	Unavailable string
	// Default puts the service's toolsets among those enabled when the
	// `toolsets` setting is unset.
	Default bool
	// Checks are the service's doctor checks: no content, and every non-ok
	// result carries a Fix. Nil = none.
	Checks func(ctx context.Context) []CheckResult
	// Status reports the service's get_status fields (no content). Nil =
	// only the state derived from Unavailable.
	Status func(ctx context.Context) ServiceStatus
	// ScopeFields are the profile scope fields the service enforces
	// ("mail_accounts", "mail_mailboxes").
	ScopeFields []string
}

// ServiceStatus is one service's part of get_status.
type ServiceStatus struct {
	// State is "ready", "unavailable" or "error".
	State  string `json:"state"`
	Detail string `json:"detail,omitempty"`
	// Backends lists each configured backend (an account, a file, an
	// endpoint) and whether it is reachable; never content or secrets.
	Backends []BackendStatus `json:"backends,omitempty"`
}

// BackendStatus is one backend of a service.
type BackendStatus struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	State  string `json:"state" jsonschema:"ok, unreachable, unauthorized, misconfigured or unknown"`
	Detail string `json:"detail,omitempty"`
}

// ServiceEnv is what a service constructor receives: the resolved
// configuration, the clock, the logger, the loaded profile, and the HTTP
// client for endpoints the user configured (trusted by the SSRF guard;
// caller-supplied URLs go through the web service's guarded client).
type ServiceEnv struct {
	Config  *config.Config
	Now     func() time.Time
	Logger  *slog.Logger
	Profile *Profile
	// HTTP is the client for configured endpoints; nil means
	// http.DefaultClient semantics with the constructor's own timeouts.
	HTTP *http.Client
	// Peers returns every service of this process once all are built (the
	// system service's permissions_check reports their backends). Call it
	// from handlers, not from the constructor.
	Peers func() []Service
	// Bridge is true in `serve --bridge`: the helper answers the
	// service's Bridged tools, so the constructor opens none of their
	// stores and reads none of their secrets (docs/bridge.md).
	Bridge bool
	// Index returns the message index this process serves from (mail is
	// synced into it, docs/index.md "Mail"); nil means this process has
	// none (bridge mode: the helper answers the tools that read it). Call
	// it from handlers: the helper opens its index after the services
	// are built.
	Index func(ctx context.Context) (*index.Index, error)
}

// ServiceFactory builds a service. An error stops the server with that
// message: it is for configuration that is wrong (a bad URL in
// config.toml), never for a backend that is merely absent (that is
// Service.Unavailable).
type ServiceFactory func(env *ServiceEnv) (Service, error)
