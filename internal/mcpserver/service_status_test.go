package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// get_status reports every service under "services" (unavailable ones with
// their sentence, the others by their Status func, a panicking one as
// "error") and joins every service's checks into "checks", after the
// process's own (docs/architecture.md, "How to add a service").
func TestStatusReportsEveryServiceAndJoinsItsChecks(t *testing.T) {
	ready := Service{Name: "weather", Default: true, Tools: []Tool{fakeServiceTool("weather_current", ToolsetWeather)},
		Status: func(context.Context) ServiceStatus {
			return ServiceStatus{State: "ready", Backends: []BackendStatus{{Name: "open-meteo", Kind: "endpoint", State: "ok"}}}
		},
		Checks: func(context.Context) []CheckResult { return []CheckResult{{Name: "weather endpoint", Status: "ok"}} }}
	absent := Service{Name: "mail", Default: true, Unavailable: "no [[mail.accounts]] in config.toml",
		Tools: []Tool{fakeServiceTool("mail_search", ToolsetMail)},
		Status: func(context.Context) ServiceStatus {
			t.Error("Status asked of an unavailable service")
			return ServiceStatus{}
		},
		Checks: func(context.Context) []CheckResult {
			return []CheckResult{{Name: "mail accounts", Status: "skip", Fix: "add [[mail.accounts]] to config.toml"}}
		}}
	broken := Service{Name: "maps", Tools: []Tool{fakeServiceTool("maps_search", ToolsetMaps)},
		Status: func(context.Context) ServiceStatus { panic("kaput") },
		Checks: func(context.Context) []CheckResult { panic("kaput") }}
	noStatus := Service{Name: "system", Default: true, Tools: []Tool{fakeServiceTool("permissions_check", ToolsetSystem)}}

	deps := &Deps{Checks: func(context.Context) []CheckResult { return []CheckResult{{Name: "config", Status: "ok"}} }}
	srv, err := New(deps, Filters{}, ready, absent, broken, noStatus)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv.SDK)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_status", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_status: %v %+v", err, res)
	}
	var out StatusOutput
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		service, state, detail string
		backends               int
	}{
		{"weather", "ready", "", 1},
		{"mail", "unavailable", "no [[mail.accounts]] in config.toml", 0},
		{"maps", "error", "status crashed: kaput", 0},
		{"system", "ready", "", 0},
	} {
		got, ok := out.Services[tc.service]
		if !ok || got.State != tc.state || got.Detail != tc.detail || len(got.Backends) != tc.backends {
			t.Errorf("services[%q] = %+v (listed %v), want state %q detail %q with %d backends", tc.service, got, ok, tc.state, tc.detail, tc.backends)
		}
	}
	var names []string
	for _, c := range out.Checks {
		names = append(names, c.Name+"="+c.Status)
	}
	if got, want := strings.Join(names, ","), "config=ok,weather endpoint=ok,mail accounts=skip,maps=fail"; got != want {
		t.Errorf("checks = %s, want %s", got, want)
	}
	// The absent tools stay listed with their reason.
	for _, ts := range out.Toolsets {
		for _, d := range ts.Tools {
			if d.Tool == "mail_search" && (d.Enabled || !strings.Contains(d.Reason, "no [[mail.accounts]]")) {
				t.Errorf("mail_search decision = %+v", d)
			}
		}
	}
}

type storeIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}
type storeOut struct {
	Echo  string `json:"echo"`
	Where string `json:"where"`
}

// bridgedEcho is a Bridged service tool that says which process ran it.
func bridgedEcho(where string) Tool {
	return Define(Tool{Name: "echo_store", Title: "Echo", Description: "Echo text from the store.", Toolset: ToolsetUtilities,
		ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No, Bridged: true},
		func(*Deps) mcp.ToolHandlerFor[storeIn, storeOut] {
			return func(_ context.Context, _ *mcp.CallToolRequest, in storeIn) (*mcp.CallToolResult, storeOut, error) {
				if in.Text == "fail" {
					return nil, storeOut{}, errors.New("the store refused \x1b[31mfail\x1b[0m")
				}
				return nil, storeOut{Echo: in.Text, Where: where}, nil
			}
		})
}

// A Bridged tool in bridge mode keeps its definition and answers through
// Deps.BridgeCall with what the helper's in-process server (the same
// handler) returned: results, isError sentences and transport failures
// alike. Without BridgeCall it runs in-process.
func TestBridgedToolForwardsToTheHelper(t *testing.T) {
	ctx := context.Background()
	helper, err := NewBridgedServer(ctx, &Deps{}, Service{Name: "utilities", Tools: []Tool{bridgedEcho("helper")}})
	if err != nil {
		t.Fatal(err)
	}
	defer helper.Close()
	var forwarded []string
	deps := &Deps{BridgeCall: func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		forwarded = append(forwarded, tool+" "+string(args))
		if strings.Contains(string(args), "offline") {
			return nil, errors.New("bridge helper timed out")
		}
		return helper.Call(ctx, tool, args)
	}}
	svc := Service{Name: "utilities", Tools: []Tool{bridgedEcho("serve")}}
	srv, err := New(deps, Filters{Toolsets: []string{"utilities"}}, svc)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv.SDK)

	var out storeOut
	ok(t, cs, "echo_store", map[string]any{"text": "hi"}, &out)
	if out != (storeOut{Echo: "hi", Where: "helper"}) {
		t.Errorf("forwarded result = %+v, want the helper's", out)
	}
	failsWith(t, cs, "echo_store", map[string]any{"text": "fail"}, `the store refused \x1b[31mfail\x1b[0m`)
	failsWith(t, cs, "echo_store", map[string]any{"text": "offline"}, "echo_store: the bridge helper did not answer: bridge helper timed out")
	// Arguments are validated before anything is forwarded.
	failsWith(t, cs, "echo_store", map[string]any{"text": 5}, "text")
	if len(forwarded) != 3 || forwarded[0] != `echo_store {"text":"hi"}` {
		t.Errorf("forwarded = %q", forwarded)
	}

	// The definition is the in-process one.
	inproc, err := New(&Deps{}, Filters{Toolsets: []string{"utilities"}}, svc)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := connect(t, srv.SDK).ListTools(ctx, nil)
	b, _ := connect(t, inproc.SDK).ListTools(ctx, nil)
	ja, _ := json.Marshal(a.Tools)
	jb, _ := json.Marshal(b.Tools)
	if string(ja) != string(jb) {
		t.Errorf("forwarded definition differs:\n%s\n%s", ja, jb)
	}
	ok(t, connect(t, inproc.SDK), "echo_store", map[string]any{"text": "hi"}, &out)
	if out.Where != "serve" {
		t.Errorf("without BridgeCall the tool ran in %q", out.Where)
	}
}

// Over HTTP (a 2026-07-28 request), a forwarded Bridged tool and
// get_status' services answer as they do in memory and on stdio.
func TestServiceToolsAndStatusOverHTTP(t *testing.T) {
	ctx := context.Background()
	svc := Service{Name: "utilities", Tools: []Tool{bridgedEcho("serve")},
		Status: func(context.Context) ServiceStatus { return ServiceStatus{State: "ready"} }}
	helper, err := NewBridgedServer(ctx, &Deps{}, Service{Name: "utilities", Tools: []Tool{bridgedEcho("helper")}})
	if err != nil {
		t.Fatal(err)
	}
	defer helper.Close()
	srv, err := New(&Deps{BridgeCall: helper.Call}, Filters{Toolsets: []string{"utilities", "status"}}, svc)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(NewHTTPHandler(srv.SDK, HTTPOptions{}))
	defer ts.Close()
	res := do(t, ts.URL, modernCall("echo_store", `{"text":"hi"}`, nil)).result()
	if sc, _ := res["structuredContent"].(map[string]any); sc["where"] != "helper" || sc["echo"] != "hi" {
		t.Errorf("echo_store over HTTP = %v", res)
	}
	res = do(t, ts.URL, modernCall("get_status", `{}`, nil)).result()
	sc, _ := res["structuredContent"].(map[string]any)
	if svcs, _ := sc["services"].(map[string]any); svcs == nil || svcs["utilities"].(map[string]any)["state"] != "ready" {
		t.Errorf("get_status services over HTTP = %v", sc["services"])
	}
}
