// Package app is Tidings' object graph: the one place that assembles what
// `tidings serve`, `tidings helper` and the CLI need — the configuration
// and profile, the setup steps that open the index, the query layer, the
// contacts book and the send gate (in the explicit order the caller
// lists), the services of Services, mcpserver.Deps and the doctor
// checks — so the bridge and in-process paths cannot drift
// (docs/architecture.md, "Setup order"). Nothing here depends on init
// order: every list is an explicit slice.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/service"
)

// Graph is what the setup steps fill and the server is built from.
type Graph struct {
	Config *config.Config
	Logger *slog.Logger
	Deps   *mcpserver.Deps
	// Contacts is the address book the query layer uses, once a step has
	// built it; later steps (the send gate) share it.
	Contacts service.ContactBook
	// Services are the built services of the list Build was given.
	Services []mcpserver.Service
	// Endpoints are the configured endpoints that receive message text
	// (Options.Endpoints); Filters resolves OpenWorldVia hints with them.
	Endpoints []mcpserver.Endpoint
	// Index is the index a step opened (serve's index step), or nil; the
	// services reach it through ServiceEnv.Index.
	Index *index.Index
	// OnClose functions run in reverse order on Close.
	OnClose []func()
}

// Step is one setup step: it may fill g.Deps and g.Contacts and register
// what it opened in g.OnClose. An error stops the process with that error.
type Step struct {
	Name string
	Run  func(ctx context.Context, g *Graph) error
}

// Check is one doctor check: it inspects one area, changes nothing and
// prints no message content; every non-ok result carries a Fix.
type Check struct {
	Name string
	Run  func(ctx context.Context, cfg *config.Config) []mcpserver.CheckResult
}

// Options are what Build assembles from.
type Options struct {
	Config             *config.Config
	Logger             *slog.Logger
	Version, Transport string
	// DataSet is get_status' data_set before any step knows better.
	DataSet mcpserver.DataSet
	// Steps run in this order, after the profile is loaded.
	Steps []Step
	// Checks are the process's own doctor checks, in this order; the
	// services' checks follow them (unless a step set Deps.Checks, as
	// bridge mode does with the helper's).
	Checks []Check
	// Services is the service list (normally app.Services).
	Services []mcpserver.ServiceFactory
	// HTTP is the client services use for configured endpoints.
	HTTP *http.Client
	// Endpoints are the configured endpoints that receive message text
	// (the http embedder, the dossier summary endpoint): the tools that
	// use them declare openWorldHint true while allow_external allows it
	// (docs/security.md, "Open world").
	Endpoints []mcpserver.Endpoint
}

// Build loads the profile, runs the steps in order, fills Deps.Checks and
// builds the services. On error everything opened so far is closed.
func Build(ctx context.Context, o Options) (_ *Graph, err error) {
	cfg := o.Config
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	g := &Graph{Config: cfg, Logger: logger, Deps: &mcpserver.Deps{
		Config:    cfg,
		Version:   o.Version,
		Now:       cfg.Now,
		Logger:    logger,
		Transport: o.Transport,
		DataSet:   o.DataSet,
	}}
	defer func() {
		if err != nil {
			g.Close()
		}
	}()
	if cfg.Profile != "" {
		p, err := mcpserver.LoadProfile(cfg.Profile)
		if err != nil {
			return nil, err
		}
		g.Deps.Profile = p
		if !p.AllowExternal && cfg.AllowExternal {
			// The stricter of config and profile wins: every step (the
			// embedder, the summary endpoint) reads cfg.AllowExternal.
			cfg.AllowExternal = false
			cfg.Origins["allow_external"] = "profile"
		}
	}
	g.Endpoints = o.Endpoints
	for _, s := range o.Steps {
		if err := s.Run(ctx, g); err != nil {
			return nil, fmt.Errorf("serve setup (%s): %w", s.Name, err)
		}
	}
	if g.Deps.Checks == nil { // a step may supply them (bridge mode asks the helper)
		checks := o.Checks
		g.Deps.Checks = func(ctx context.Context) []mcpserver.CheckResult { return RunChecks(ctx, cfg, checks) }
	}
	env := NewServiceEnv(g.Config, logger, g.Deps.Profile) // after the steps: demo mode points the config at its data
	env.HTTP = o.HTTP
	env.Bridge = g.Config.Bridge != ""
	if ix := g.Index; ix != nil {
		env.Index = func(context.Context) (*index.Index, error) { return ix, nil }
	}
	if g.Services, err = BuildServices(env, o.Services); err != nil {
		return nil, err
	}
	return g, nil
}

// Filters are the tool filters the configuration and profile ask for.
func (g *Graph) Filters() mcpserver.Filters {
	return mcpserver.Filters{
		ReadOnly:   g.Config.ReadOnly,
		EnableSend: g.Config.EnableSend,
		Demo:       g.Config.Demo,
		Toolsets:   g.Config.Toolsets,
		Profile:    g.Deps.Profile,
		// allow_external = false in config.toml (the profile's own value
		// is read by Select from Profile).
		DenyExternal: !g.Config.AllowExternal,
		Endpoints:    g.Endpoints,
	}
}

// Server builds the MCP server: the inventory and the services' tools,
// filtered by Filters (mcpserver.New).
func (g *Graph) Server() (*mcpserver.Server, error) {
	return mcpserver.New(g.Deps, g.Filters(), g.Services...)
}

// Close runs OnClose in reverse order, once.
func (g *Graph) Close() {
	for i := len(g.OnClose) - 1; i >= 0; i-- {
		g.OnClose[i]()
	}
	g.OnClose = nil
}

// NewServiceEnv is the environment every service is built with, in serve,
// the helper and the CLI alike.
func NewServiceEnv(cfg *config.Config, logger *slog.Logger, profile *mcpserver.Profile) *mcpserver.ServiceEnv {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &mcpserver.ServiceEnv{Config: cfg, Now: cfg.Now, Logger: logger, Profile: profile}
}

// BuildServices builds every factory with (a copy of) env, in list order.
// env.Peers returns the built services once all are built. A factory's
// error stops the process (it means wrong configuration); two services of
// one name are a programming error.
func BuildServices(env *mcpserver.ServiceEnv, factories []mcpserver.ServiceFactory) ([]mcpserver.Service, error) {
	var built []mcpserver.Service
	seen := map[string]bool{}
	for _, f := range factories {
		e := *env
		e.Peers = func() []mcpserver.Service { return built }
		svc, err := f(&e)
		if err != nil {
			return nil, fmt.Errorf("services: %w", err)
		}
		if svc.Name == "" || seen[svc.Name] {
			return nil, fmt.Errorf("services: service name %q is empty or listed twice in internal/app/services.go", svc.Name)
		}
		seen[svc.Name] = true
		built = append(built, svc)
	}
	return built, nil
}

// RunChecks runs checks in order. A panicking check is reported as failed
// instead of taking the process down.
func RunChecks(ctx context.Context, cfg *config.Config, checks []Check) []mcpserver.CheckResult {
	var out []mcpserver.CheckResult
	for _, c := range checks {
		func() {
			defer func() {
				if r := recover(); r != nil {
					out = append(out, mcpserver.CheckResult{Name: c.Name, Status: "fail", Detail: fmt.Sprintf("check crashed: %v", r),
						Fix: "report this as a bug with the output of tidings doctor"})
				}
			}()
			out = append(out, c.Run(ctx, cfg)...)
		}()
	}
	return out
}
