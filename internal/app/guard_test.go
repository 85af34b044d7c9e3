package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

var update = flag.Bool("update", false, "rewrite the service tool snapshots in testdata/toolsnaps")

// snapDir holds one schema snapshot per service tool, whether or not the
// service registers on the machine running the test.
const snapDir = "testdata/toolsnaps"

// maxToolBytes is the budget of one tool's tools/list entry (name,
// description, schemas): services add many tools, and every byte is read
// by the model on every session.
const maxToolBytes = 1536

// neutralEnv is the environment a service is built with for the guard: an
// empty Tidings home, no config file, no profile, a pinned clock, and no
// network. A service must build in it (unavailable, if it needs an account
// or a program this machine lacks) without touching anything outside.
func neutralEnv(t *testing.T) *mcpserver.ServiceEnv {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{"TIDINGS_HOME": home, "HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config")}
	cfg, err := config.Bind(nil).Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	now := testclock.Anchor()
	cfg.Now = func() time.Time { return now }
	return NewServiceEnv(cfg, nil, nil)
}

// guardService lists every rule of docs/architecture.md ("How to add a
// service") that svc breaks: Validate-clean tools with all four hints,
// a committed snapshot per tool matching its wire definition, the size
// budget, a Checks func and a Status func.
func guardService(ctx context.Context, svc mcpserver.Service, dir string, update bool) []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("service %q: "+format, append([]any{svc.Name}, args...)...))
	}
	if svc.Name == "" {
		bad("no Name")
	}
	if len(svc.Tools) == 0 {
		bad("no tools")
	}
	if svc.Checks == nil {
		bad("no Checks func: `tidings doctor` and get_status' checks must say whether it can work")
	}
	if svc.Status == nil {
		bad("no Status func: get_status' services must report its backends")
	}
	for _, tl := range svc.Tools {
		if err := mcpserver.Validate(tl); err != nil {
			bad("%v", err)
		}
	}
	if len(errs) > 0 {
		return errs // a tool that does not validate cannot be listed
	}
	wire, err := mcpserver.WireTools(ctx, svc.Tools)
	if err != nil {
		bad("tools/list: %v", err)
		return errs
	}
	for _, raw := range wire {
		var head struct {
			Name string `json:"name"`
		}
		json.Unmarshal(raw, &head)
		if len(raw) > maxToolBytes {
			bad("tool %q: tools/list entry is %d bytes, over the %d budget (shorten the description or output schema)", head.Name, len(raw), maxToolBytes)
		}
		var v any
		json.Unmarshal(raw, &v)
		got, _ := json.MarshalIndent(v, "", "  ")
		got = append(got, '\n')
		path := filepath.Join(dir, head.Name+".json")
		if update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				bad("%v", err)
			} else if err := os.WriteFile(path, got, 0o644); err != nil {
				bad("%v", err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			bad("tool %q has no snapshot %s (run go test ./internal/app -run TestServiceGuard -update and commit it)", head.Name, path)
		case err != nil:
			bad("%v", err)
		case !bytes.Equal(got, want):
			bad("tool %q differs from %s (run with -update if intended):\n--- got\n%s\n--- want\n%s", head.Name, path, got, want)
		}
	}
	return errs
}

// Every listed service, built with a neutral environment whatever this
// machine has, keeps the rules of "How to add a service"; a snapshot
// without a listed tool is stale.
func TestServiceGuard(t *testing.T) {
	ctx := context.Background()
	svcs, err := BuildServices(neutralEnv(t), Services)
	if err != nil {
		t.Fatalf("a listed service does not build in a neutral environment: %v", err)
	}
	want := map[string]bool{}
	for _, svc := range svcs {
		for _, tl := range svc.Tools {
			want[tl.Name+".json"] = true
		}
		for _, err := range guardService(ctx, svc, snapDir, *update) {
			t.Error(err)
		}
	}
	entries, _ := os.ReadDir(snapDir)
	for _, e := range entries {
		if !want[e.Name()] {
			if *update {
				os.Remove(filepath.Join(snapDir, e.Name()))
				continue
			}
			t.Errorf("stale snapshot %s/%s: no listed service has that tool (run with -update)", snapDir, e.Name())
		}
	}
}

type probeIn struct {
	Place string `json:"place" jsonschema:"where"`
}
type probeOut struct {
	Answer string `json:"answer"`
}

func probeTool(mutate func(*mcpserver.Tool)) mcpserver.Tool {
	tl := mcpserver.Tool{Name: "probe_lookup", Title: "Probe", Description: "A tool for the guard test.", Toolset: mcpserver.ToolsetUtilities,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No}
	if mutate != nil {
		mutate(&tl)
	}
	return mcpserver.Define(tl, func(*mcpserver.Deps) mcp.ToolHandlerFor[probeIn, probeOut] { return nil })
}

// TestServiceGuardCatchesBrokenService shows the guard failing on a
// deliberately broken fake service, one rule at a time.
func TestServiceGuardCatchesBrokenService(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	good := func() mcpserver.Service {
		return mcpserver.Service{Name: "probe", Tools: []mcpserver.Tool{probeTool(nil)},
			Checks: func(context.Context) []mcpserver.CheckResult { return nil },
			Status: func(context.Context) mcpserver.ServiceStatus { return mcpserver.ServiceStatus{State: "ready"} }}
	}
	if errs := guardService(ctx, good(), dir, true); len(errs) > 0 {
		t.Fatalf("writing the snapshot: %v", errs)
	}
	if errs := guardService(ctx, good(), dir, false); len(errs) > 0 {
		t.Fatalf("a well-formed service fails the guard: %v", errs)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*mcpserver.Service)
		want   string
	}{
		{"omitted hint", func(s *mcpserver.Service) {
			s.Tools = []mcpserver.Tool{probeTool(func(tl *mcpserver.Tool) { tl.OpenWorld = mcpserver.HintUnset })}
		}, "openWorldHint not set"},
		{"no snapshot", func(s *mcpserver.Service) {
			s.Tools = append(s.Tools, probeTool(func(tl *mcpserver.Tool) { tl.Name = "probe_other" }))
		}, `tool "probe_other" has no snapshot`},
		{"schema drift", func(s *mcpserver.Service) {
			s.Tools = []mcpserver.Tool{probeTool(func(tl *mcpserver.Tool) { tl.Description = "A changed description." })}
		}, `tool "probe_lookup" differs`},
		{"over budget", func(s *mcpserver.Service) {
			s.Tools = []mcpserver.Tool{probeTool(func(tl *mcpserver.Tool) { tl.Description = strings.Repeat("Long. ", 300) })}
		}, "over the 1536 budget"},
		{"no Checks", func(s *mcpserver.Service) { s.Checks = nil }, "no Checks func"},
		{"no Status", func(s *mcpserver.Service) { s.Status = nil }, "no Status func"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := good()
			tc.mutate(&svc)
			errs := guardService(ctx, svc, dir, false)
			if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), tc.want) }) {
				t.Errorf("guard errors %v do not contain %q", errs, tc.want)
			}
		})
	}
}
