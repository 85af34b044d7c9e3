package capture

import (
	"context"
	"os"
	"runtime"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/proc"
)

// secondsSpec bounds capture_audio's length (docs/tools.md, "Capture").
var secondsSpec = coerce.IntSpec{Name: "seconds", Default: 5, Min: 1, Max: 60}

// New builds the Capture service: opt-in (toolset capture), each tool
// present only when a program for it works here, and only for a profile
// with file_dirs (both tools write a file).
func New(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	h := proc.SystemHost(runtime.GOOS)
	shot, shotWhy := FindScreenshotter(h)
	rec, recWhy := FindRecorder(h)
	home, _ := os.UserHomeDir()
	return Service(&Capturer{Screenshotter: shot, Recorder: rec, Runner: proc.ExecRunner{}, Now: env.Now, Home: home}, shotWhy, recWhy), nil
}

// Service is the Capture service over c; shotWhy and recWhy are the
// sentences saying why a tool has no program ("" when it has one).
func Service(c *Capturer, shotWhy, recWhy string) mcpserver.Service {
	shot, rec := screenshotTool(c), audioTool(c)
	shot.Unavailable, rec.Unavailable = shotWhy, recWhy
	backend := func(name string, p proc.Program, why string) mcpserver.BackendStatus {
		if why != "" {
			return mcpserver.BackendStatus{Name: name, Kind: "program", State: "unreachable", Detail: why}
		}
		return mcpserver.BackendStatus{Name: name, Kind: p.Name, State: "ok", Detail: p.Path}
	}
	check := func(tool, why string, p proc.Program) mcpserver.CheckResult {
		if why != "" {
			return mcpserver.CheckResult{Name: tool, Status: "warn", Detail: tool + " is unavailable: " + why,
				Fix: "install one of the programs named, or leave the capture toolset off"}
		}
		return mcpserver.CheckResult{Name: tool, Status: "ok", Detail: p.Name + " at " + p.Path}
	}
	return mcpserver.Service{
		Name:  "capture",
		Tools: []mcpserver.Tool{shot, rec},
		Checks: func(context.Context) []mcpserver.CheckResult {
			return []mcpserver.CheckResult{check("capture_screenshot", shotWhy, c.Screenshotter), check("capture_audio", recWhy, c.Recorder)}
		},
		Status: func(context.Context) mcpserver.ServiceStatus {
			st := mcpserver.ServiceStatus{State: "ready", Backends: []mcpserver.BackendStatus{
				backend("screenshot", c.Screenshotter, shotWhy), backend("recorder", c.Recorder, recWhy)}}
			if shotWhy != "" && recWhy != "" {
				st.State, st.Detail = "unavailable", "neither capture has a working program here"
			}
			return st
		},
	}
}

type screenshotIn struct {
	Path string `json:"path,omitempty" jsonschema:"absolute .png path of a new file inside file_dirs (default: ~/Desktop when allowed, else the only folder)"`
}

type audioIn struct {
	Path    string        `json:"path,omitempty" jsonschema:"absolute .wav path of a new file inside file_dirs (default: ~/Desktop when allowed, else the only folder)"`
	Seconds coerce.Number `json:"seconds,omitzero" jsonschema:"1-60 (default 5)"`
}

// shotOut and audioOut are the two answers: the saved file, no content.
type shotOut struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Format  string `json:"format"`
	Width   int    `json:"width"`
	Height  int    `json:"height"`
	Program string `json:"program"`
}

type audioOut struct {
	Path    string `json:"path"`
	Bytes   int64  `json:"bytes"`
	Format  string `json:"format"`
	Seconds int    `json:"seconds"`
	Program string `json:"program"`
}

func dirs(d *mcpserver.Deps) []string {
	if d.Profile == nil {
		return nil
	}
	return d.Profile.FileDirs
}

func screenshotTool(c *Capturer) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "capture_screenshot", Title: "Take a screenshot", Toolset: mcpserver.ToolsetCapture,
		Description: "Capture the whole screen to a new PNG file inside the profile's file_dirs. It sees whatever is on screen, " +
			"including conversations the read policy hides. Returns the file's path and size, not the picture; never replaces a file.",
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
		WritesFiles: true,
	}, func(d *mcpserver.Deps) mcp.ToolHandlerFor[screenshotIn, shotOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in screenshotIn) (*mcp.CallToolResult, shotOut, error) {
			f, err := c.Screenshot(ctx, in.Path, dirs(d))
			if err != nil {
				return nil, shotOut{}, err
			}
			return nil, shotOut{f.Path, f.Bytes, f.Format, f.Width, f.Height, f.Program}, nil
		}
	})
}

func audioTool(c *Capturer) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "capture_audio", Title: "Record audio", Toolset: mcpserver.ToolsetCapture,
		Description: "Record the default microphone for 1-60 seconds to a new WAV file inside the profile's file_dirs. " +
			"Returns the file's path and size; never replaces a file.",
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
		WritesFiles: true,
	}, func(d *mcpserver.Deps) mcp.ToolHandlerFor[audioIn, audioOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in audioIn) (*mcp.CallToolResult, audioOut, error) {
			s, err := coerce.Int(in.Seconds, secondsSpec)
			if err != nil {
				return nil, audioOut{}, err
			}
			f, err := c.Audio(ctx, in.Path, s, dirs(d))
			if err != nil {
				return nil, audioOut{}, err
			}
			return nil, audioOut{f.Path, f.Bytes, f.Format, f.Seconds, f.Program}, nil
		}
	})
}
