package utilities

import (
	"context"
	"runtime"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/proc"
)

// secondsSpec bounds how long a sound plays (docs/tools.md, "Utilities").
var secondsSpec = coerce.IntSpec{Name: "seconds", Default: 30, Min: 1, Max: 120}

// New builds the Utilities service: opt-in (toolset utilities), its tool
// present only when a player works here, and only for a profile with
// file_dirs (it reads the person's file).
func New(*mcpserver.ServiceEnv) (mcpserver.Service, error) {
	prog, why := FindPlayer(proc.SystemHost(runtime.GOOS))
	return Service(&Player{Program: prog, Runner: proc.ExecRunner{}}, why), nil
}

// Service is the Utilities service over p; why says why it has no player
// ("" when it has one).
func Service(p *Player, why string) mcpserver.Service {
	play := playTool(p)
	play.Unavailable = why
	backend := mcpserver.BackendStatus{Name: "player", Kind: p.Program.Name, State: "ok", Detail: p.Program.Path}
	check := mcpserver.CheckResult{Name: "utilities_play_sound", Status: "ok", Detail: p.Program.Name + " at " + p.Program.Path}
	st := mcpserver.ServiceStatus{State: "ready"}
	if why != "" {
		backend = mcpserver.BackendStatus{Name: "player", Kind: "program", State: "unreachable", Detail: why}
		check = mcpserver.CheckResult{Name: "utilities_play_sound", Status: "warn", Detail: "utilities_play_sound is unavailable: " + why,
			Fix: "install one of the programs named, or leave the utilities toolset off"}
		st = mcpserver.ServiceStatus{State: "unavailable", Detail: why}
	}
	st.Backends = []mcpserver.BackendStatus{backend}
	return mcpserver.Service{
		Name:   "utilities",
		Tools:  []mcpserver.Tool{play},
		Checks: func(context.Context) []mcpserver.CheckResult { return []mcpserver.CheckResult{check} },
		Status: func(context.Context) mcpserver.ServiceStatus { return st },
	}
}

type playIn struct {
	Path    string        `json:"path" jsonschema:"absolute path of a sound file inside file_dirs"`
	Seconds coerce.Number `json:"seconds,omitzero" jsonschema:"play at most this long, 1-120 (default 30)"`
}

func playTool(p *Player) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "utilities_play_sound", Title: "Play a sound", Toolset: mcpserver.ToolsetUtilities,
		Description: "Play a sound file (WAV, AIFF, FLAC, Ogg, MP3, CAF, M4A) from inside the profile's file_dirs on this computer's speakers, " +
			"for at most the given seconds. Reads only that file; returns when playing ends.",
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
		ReadsFiles: true,
	}, func(d *mcpserver.Deps) mcp.ToolHandlerFor[playIn, Played] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in playIn) (*mcp.CallToolResult, Played, error) {
			s, err := coerce.Int(in.Seconds, secondsSpec)
			if err != nil {
				return nil, Played{}, err
			}
			var dirs []string
			if d.Profile != nil {
				dirs = d.Profile.FileDirs
			}
			out, err := p.Play(ctx, in.Path, s, dirs)
			return nil, out, err
		}
	})
}
