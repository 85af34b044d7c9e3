// Package mcpserver is Tidings' MCP surface on go-sdk v1.8.0: the tool
// inventory and its filters, the dual-era transports (stdio; Streamable HTTP
// at POST /mcp serving MCP 2026-07-28 stateless requests and legacy
// sessions on one URL; legacy HTTP+SSE at GET /sse), and the HTTP guards
// go-sdk leaves to its users (Origin, bearer token, base64 Mcp-Name, JSON
// -32022, body caps, X-Accel-Buffering).
//
// Quick start:
//
//	srv, err := mcpserver.New(deps, mcpserver.Filters{ReadOnly: true})
//	err = mcpserver.ServeStdio(ctx, srv.SDK, os.Stdin, os.Stdout)
//	// or
//	h, err := mcpserver.NewHTTPHandler(srv.SDK, mcpserver.HTTPOptions{})
//
// Adding a tool is one file defining a Tool with Define and one line in
// Inventory; docs/architecture.md walks through it.
package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// ServerName is the implementation name sent in serverInfo.
const ServerName = "tidings"

// BaseInstructions opens the MCP instructions string. Tools add their own
// sentences through Tool.Instructions; UntrustedContentNotice follows.
const BaseInstructions = `Tidings gives read access to the user's text messages (iMessage/SMS/RCS, Android SMS) and contacts, stored locally on their machine. Call get_status first when unsure what data is available. Prefer narrow queries (one conversation, a date window) over broad ones; results are capped near 40 KB and say when they were cut and how to continue.`

// UntrustedContentNotice tells the model how to treat message content; the
// wording lives with the wrapping code it describes.
const UntrustedContentNotice = sanitize.UntrustedNotice

// StackOptions configures the shared server stack that both the product
// server and the conformance fixture server use.
type StackOptions struct {
	Name, Version string
	Instructions  string
	// Capabilities is exactly what the server advertises; methods of an
	// unadvertised capability answer -32601 (see gateCapabilities).
	Capabilities *mcp.ServerCapabilities
	// CompletionHandler, SubscribeHandler and UnsubscribeHandler are passed
	// to go-sdk unchanged (the fixture server needs them).
	CompletionHandler  func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error)
	SubscribeHandler   func(context.Context, *mcp.SubscribeRequest) error
	UnsubscribeHandler func(context.Context, *mcp.UnsubscribeRequest) error
	Logger             *slog.Logger
}

// NewStack returns a go-sdk server with Tidings' protocol hygiene applied:
// explicit capabilities (go-sdk would otherwise advertise logging) and a
// middleware that answers -32601 for methods of capabilities not advertised
// (go-sdk answers an empty prompts/list even when prompts are not offered),
// and quoteHugeArguments, so a tool argument beyond 2^53 reaches the
// coercion as written on every transport.
func NewStack(o StackOptions) *mcp.Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	caps := o.Capabilities
	if caps == nil {
		caps = &mcp.ServerCapabilities{}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: o.Name, Version: o.Version}, &mcp.ServerOptions{
		Instructions:       o.Instructions,
		Logger:             sdkLogger(o.Logger),
		Capabilities:       caps,
		CompletionHandler:  o.CompletionHandler,
		SubscribeHandler:   o.SubscribeHandler,
		UnsubscribeHandler: o.UnsubscribeHandler,
	})
	s.AddReceivingMiddleware(gateCapabilities(caps), quoteHugeArguments)
	return s
}

// gateCapabilities rejects methods whose capability the server does not
// advertise, so the advertised set and the served set are the same.
func gateCapabilities(caps *mcp.ServerCapabilities) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			var missing string
			switch method {
			case "prompts/list", "prompts/get":
				if caps.Prompts == nil {
					missing = "prompts"
				}
			case "resources/list", "resources/read", "resources/templates/list":
				if caps.Resources == nil {
					missing = "resources"
				}
			case "resources/subscribe", "resources/unsubscribe":
				if caps.Resources == nil || !caps.Resources.Subscribe {
					missing = "resource subscriptions"
				}
			case "completion/complete":
				if caps.Completions == nil {
					missing = "completions"
				}
			case "logging/setLevel":
				//lint:ignore SA1019 legacy sessions still send logging/setLevel.
				if caps.Logging == nil {
					missing = "logging"
				}
			case "tools/list", "tools/call":
				if caps.Tools == nil {
					missing = "tools"
				}
			}
			if missing != "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found: this server does not offer %s", method, missing)}
			}
			return next(ctx, method, req)
		}
	}
}

// Server is the product MCP server: the go-sdk server with the selected
// tools registered, and the record of what was selected.
type Server struct {
	SDK       *mcp.Server
	Selection *Selection
	// Instructions is the full instructions string sent to clients.
	Instructions string
}

// New builds the product server from the inventory and the tools of
// services, filtered by f, with handlers built from deps. A service's tools
// follow the inventory's in the order services are given; a service that
// is Unavailable, or not Default while the toolsets setting is unset, keeps
// its tools out with the reason in get_status (Select).
func New(deps *Deps, f Filters, services ...Service) (*Server, error) {
	tools := Inventory()
	for _, svc := range services {
		for _, t := range svc.Tools {
			t.service, t.unavailable, t.optIn = svc.Name, cmp.Or(svc.Unavailable, t.Unavailable), !svc.Default
			tools = append(tools, t)
		}
	}
	deps.Services = services
	return newFromTools(tools, deps, f)
}

func newFromTools(tools []Tool, deps *Deps, f Filters) (*Server, error) {
	for _, t := range tools {
		if err := Validate(t); err != nil {
			return nil, err
		}
	}
	deps.fill()
	profile := f.Profile
	if profile == nil {
		profile = deps.Profile
	}
	base, err := profile.Scope()
	if err != nil {
		return nil, fmt.Errorf("profile scope: %w", err)
	}
	sel, err := Select(tools, f)
	if err != nil {
		return nil, err
	}
	deps.Selection = sel
	deps.Filters = f

	var b strings.Builder
	b.WriteString(BaseInstructions)
	for _, t := range sel.Tools {
		if t.Instructions != "" {
			b.WriteString(" ")
			b.WriteString(t.Instructions)
		}
	}
	b.WriteString("\n\n")
	b.WriteString(UntrustedContentNotice)

	s := NewStack(StackOptions{
		Name:         ServerName,
		Version:      deps.Version,
		Instructions: b.String(),
		// Tools only; the list never changes while the process runs, so
		// listChanged is false.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		Logger:       deps.Logger,
	})
	// Every tools/call carries its effective scope (scope.go).
	s.AddReceivingMiddleware(scopeCalls(base))
	for _, t := range sel.Tools {
		if t.Bridged && deps.BridgeCall != nil {
			t.forward(s, t.DefFor(f), deps) // the helper runs it (forward.go)
			continue
		}
		t.register(s, t.DefFor(f), deps)
	}
	return &Server{SDK: s, Selection: sel, Instructions: b.String()}, nil
}

// WireTools returns each tool's tools/list entry as a client sees it
// (go-sdk infers the output schema at registration), whatever the filters
// would decide: the schema snapshots of services are taken from it
// (internal/app's TestServiceGuard).
func WireTools(ctx context.Context, tools []Tool) ([]json.RawMessage, error) {
	s := NewStack(StackOptions{Name: ServerName, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	for _, t := range tools {
		if err := Validate(t); err != nil {
			return nil, err
		}
		t.register(s, t.Def(), &Deps{})
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wiretools", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		return nil, err
	}
	defer cs.Close()
	var out []json.RawMessage
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
