package shortcuts

import (
	"context"
	"runtime"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/policy/redact"
	"github.com/tidings-mcp/tidings/internal/proc"
)

// secondsSpec bounds a shortcut's run (docs/tools.md, "Shortcuts").
var secondsSpec = coerce.IntSpec{Name: "seconds", Default: 60, Min: 1, Max: 300}

// body redacts and sanitizes a shortcut's output before it is wrapped.
var body = output.New(redact.Default())

// New builds the Shortcuts service: opt-in (toolset shortcuts), macOS
// only; elsewhere Unavailable says so.
func New(*mcpserver.ServiceEnv) (mcpserver.Service, error) {
	path, why := Find(proc.SystemHost(runtime.GOOS))
	return Service(&Runner{Path: path, Runner: proc.ExecRunner{}}, why), nil
}

// Service is the Shortcuts service over r; why is the sentence when
// Shortcuts cannot run here.
func Service(r *Runner, why string) mcpserver.Service {
	backend := mcpserver.BackendStatus{Name: "shortcuts", Kind: "program", State: "ok", Detail: r.Path}
	check := mcpserver.CheckResult{Name: "shortcuts", Status: "ok", Detail: r.Path}
	if why != "" {
		backend.State, backend.Detail = "unreachable", why
		check = mcpserver.CheckResult{Name: "shortcuts", Status: "warn", Detail: why, Fix: "leave the shortcuts toolset off on this system"}
	}
	return mcpserver.Service{
		Name:        "shortcuts",
		Unavailable: why,
		Tools:       []mcpserver.Tool{listTool(r), runTool(r)},
		Checks:      func(context.Context) []mcpserver.CheckResult { return []mcpserver.CheckResult{check} },
		Status: func(context.Context) mcpserver.ServiceStatus {
			return mcpserver.ServiceStatus{State: "ready", Backends: []mcpserver.BackendStatus{backend}}
		},
	}
}

type listOut struct {
	Shortcuts []string `json:"shortcuts"`
}

func listTool(r *Runner) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "shortcuts_list", Title: "List shortcuts", Toolset: mcpserver.ToolsetShortcuts,
		Description: "List the names of the person's Shortcuts (macOS), for shortcuts_run.",
		ReadOnly:    mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[struct{}, listOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, listOut, error) {
			names, err := r.List(ctx)
			if err != nil {
				return nil, listOut{}, err
			}
			out := listOut{Shortcuts: make([]string, 0, len(names))}
			for _, n := range names {
				out.Shortcuts = append(out.Shortcuts, output.Name(n))
			}
			return nil, out, nil
		}
	})
}

type runIn struct {
	Name    string        `json:"name" jsonschema:"a name from shortcuts_list"`
	Input   string        `json:"input,omitempty" jsonschema:"text passed to the shortcut as its input"`
	Seconds coerce.Number `json:"seconds,omitzero" jsonschema:"stop it after 1-300 seconds (default 60)"`
}

type runOut struct {
	Name      string `json:"name"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated,omitempty"`
}

func runTool(r *Runner) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "shortcuts_run", Title: "Run a shortcut", Toolset: mcpserver.ToolsetShortcuts,
		Description: "Run one of the person's Shortcuts by name (macOS) with optional text input and return its text output. " +
			"A shortcut can do anything its actions do — send messages, change files, reach the internet — so only run one the person asked for.",
		ReadOnly: mcpserver.No, Destructive: mcpserver.Yes, Idempotent: mcpserver.No, OpenWorld: mcpserver.Yes,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[runIn, runOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in runIn) (*mcp.CallToolResult, runOut, error) {
			s, err := coerce.Int(in.Seconds, secondsSpec)
			if err != nil {
				return nil, runOut{}, err
			}
			ran, err := r.Run(ctx, in.Name, in.Input, time.Duration(s)*time.Second)
			if err != nil {
				return nil, runOut{}, err
			}
			out := runOut{Name: output.Name(ran.Name), Truncated: ran.Truncated}
			if ran.Output != "" {
				out.Output = output.Wrapped(body.Body(ran.Output, nil))
			}
			return nil, out, nil
		}
	})
}
