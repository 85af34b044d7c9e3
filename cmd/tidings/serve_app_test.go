package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/app"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// The setup of serve and the doctor's checks are explicit ordered lists
// (docs/architecture.md, "Setup order"): the order is written down, not
// derived from file names and init functions. The bridge step comes first
// (it replaces the data of every later step), demo before index (it points
// the config at the demo data), service after index (it needs the open
// index), send after service (it shares the contacts book).
func TestSetupStepsAndChecksAreExplicitOrderedLists(t *testing.T) {
	var steps, checks []string
	for _, s := range serveSteps {
		steps = append(steps, s.Name)
	}
	for _, c := range doctorChecks {
		checks = append(checks, c.Name)
	}
	if got, want := strings.Join(steps, ","), "bridge,demo,index,dataset,service,send"; got != want {
		t.Errorf("serve steps = %s, want %s", got, want)
	}
	if got, want := strings.Join(checks, ","), "config,home,imessage,sources,access,http,index"; got != want {
		t.Errorf("doctor checks = %s, want %s", got, want)
	}
}

type probeArgs struct {
	Text string `json:"text" jsonschema:"what to look up"`
}
type probeResult struct {
	Text string `json:"text"`
	Home string `json:"home" jsonschema:"the Tidings home of the process that ran the tool"`
}

// probeService is a fake service with one Bridged tool (probe_store: the
// helper owns its store) and one that runs in serve (probe_local). Each
// answers with the Tidings home of the process that ran it.
func probeService(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	home := env.Config.Home
	tool := func(name string, bridged bool) mcpserver.Tool {
		return mcpserver.Define(mcpserver.Tool{Name: name, Title: name, Description: "Probe " + name + ".", Toolset: mcpserver.ToolsetUtilities,
			ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No, Bridged: bridged},
			func(*mcpserver.Deps) mcp.ToolHandlerFor[probeArgs, probeResult] {
				return func(_ context.Context, _ *mcp.CallToolRequest, in probeArgs) (*mcp.CallToolResult, probeResult, error) {
					if in.Text == "missing" {
						return nil, probeResult{}, errors.New("no entry named \"missing\" in the probe store")
					}
					return nil, probeResult{Text: in.Text, Home: home}, nil
				}
			})
	}
	return mcpserver.Service{Name: "probe", Default: true,
		Tools: []mcpserver.Tool{tool("probe_store", true), tool("probe_local", false)},
		Checks: func(context.Context) []mcpserver.CheckResult {
			return []mcpserver.CheckResult{{Name: "probe store", Status: "ok"}}
		},
		Status: func(context.Context) mcpserver.ServiceStatus {
			return mcpserver.ServiceStatus{State: "ready", Backends: []mcpserver.BackendStatus{{Name: "store", Kind: "file", State: "ok"}}}
		}}, nil
}

func withServices(t *testing.T, fs ...mcpserver.ServiceFactory) {
	saved := app.Services
	app.Services = fs
	t.Cleanup(func() { app.Services = saved })
}

// TestServeBridgeForwardsBridgedServiceTools: with `serve --bridge`, a
// Bridged service tool is answered by the helper (through the real bridge
// worker, a protocol 1.3 action of the tool's name), which runs the same
// tool; a tool that is not Bridged runs in serve; an isError answer comes
// back as the same sentence; get_status and the checks list the service.
func TestServeBridgeForwardsBridgedServiceTools(t *testing.T) {
	withServices(t, probeService)
	dir := filepath.Join(t.TempDir(), "bridge")
	helperHome := filepath.Join(t.TempDir(), "helper-home")
	serveHome := filepath.Join(t.TempDir(), "serve-home")
	startHelper(t, map[string]string{"DISPLAY": "", "TIDINGS_HOME": helperHome}, "--bridge-dir", dir)
	waitBridge(t, dir)
	s := startServe(t, map[string]string{"TIDINGS_HOME": serveHome}, "--bridge", dir)

	got, isErr := s.call("probe_store", map[string]any{"text": "hello"})
	if isErr || got["text"] != "hello" || got["home"] != helperHome {
		t.Errorf("probe_store = %v (isError %v), want it answered by the helper (home %s)", got, isErr, helperHome)
	}
	got, isErr = s.call("probe_local", map[string]any{"text": "hello"})
	if isErr || got["home"] != serveHome {
		t.Errorf("probe_local = %v (isError %v), want it answered by serve (home %s)", got, isErr, serveHome)
	}
	got, isErr = s.call("probe_store", map[string]any{"text": "missing"})
	if !isErr || got["error"] != `no entry named "missing" in the probe store` {
		t.Errorf("probe_store error = %v (isError %v)", got, isErr)
	}
	// The helper offers the action to a 1.3 client, and only that one.
	st, err := bridgeCall(t, dir, "status")
	if err != nil {
		t.Fatal(err)
	}
	acts, _ := json.Marshal(st["allowed_actions"])
	if !strings.Contains(string(acts), `"probe_store"`) || strings.Contains(string(acts), `"probe_local"`) {
		t.Errorf("helper allowed_actions = %s, want probe_store and not probe_local", acts)
	}

	status, isErr := s.call("get_status", map[string]any{})
	if isErr {
		t.Fatalf("get_status: %v", status)
	}
	if svcs, _ := status["services"].(map[string]any); svcs == nil || svcs["probe"].(map[string]any)["state"] != "ready" {
		t.Errorf("get_status services = %v", status["services"])
	}
	checks, _ := json.Marshal(status["checks"])
	if !strings.Contains(string(checks), `"name":"bridge helper","status":"ok"`) || !strings.Contains(string(checks), `"name":"probe store"`) {
		t.Errorf("checks = %s", checks)
	}
}

// `tidings doctor` runs the listed services' checks after its own.
func TestDoctorRunsServiceChecks(t *testing.T) {
	withServices(t, probeService)
	m, out, _ := testMain(t, nil)
	m.Run(context.Background(), []string{"doctor", "--json"})
	var res []mcpserver.CheckResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	i := slices.IndexFunc(res, func(c mcpserver.CheckResult) bool { return c.Name == "probe store" })
	j := slices.IndexFunc(res, func(c mcpserver.CheckResult) bool { return c.Name == "config" })
	if i < 0 || j < 0 || i < j {
		t.Errorf("doctor results = %+v, want the probe service's check after the process's own", res)
	}
}

// `serve --demo` serves the listed services that need no network as it
// does otherwise, built after the demo step: they see the demo's home
// (its config), not the person's (docs/configuration.md, "Demo mode").
func TestServeDemoServesTheServices(t *testing.T) {
	withServices(t, probeService)
	root := t.TempDir()
	home := filepath.Join(root, "tidings")
	m, _, _ := testMain(t, map[string]string{"HOME": root, "TIDINGS_HOME": home})
	if err := m.Run(t.Context(), []string{"demo", "--messages", "2000"}); err != nil {
		t.Fatal(err)
	}
	c := startClient(t, map[string]string{"HOME": root, "TIDINGS_HOME": home}, "--demo")
	got := c.mustCall("probe_local", map[string]any{"text": "x"})
	if got["home"] != filepath.Join(home, "demo") {
		t.Errorf("probe_local ran with home %v, want the demo's %s", got["home"], filepath.Join(home, "demo"))
	}
	st := c.mustCall("get_status", nil)
	if svcs, _ := st["services"].(map[string]any); svcs == nil || svcs["probe"] == nil {
		t.Errorf("get_status services = %v", st["services"])
	}
}
