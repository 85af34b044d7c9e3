package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
)

var update = flag.Bool("update", false, "rewrite testdata/toolsnaps from the current tool definitions")

const snapDir = "testdata/toolsnaps"

// TestInventoryGuard walks the whole inventory: every tool must pass
// Validate, which fails on any annotation not stated explicitly.
func TestInventoryGuard(t *testing.T) {
	seen := map[string]bool{}
	for _, tool := range Inventory() {
		if err := Validate(tool); err != nil {
			t.Error(err)
		}
		if seen[tool.Name] {
			t.Errorf("tool %q listed twice", tool.Name)
		}
		seen[tool.Name] = true
	}
	// The wire form carries all four hints as explicit JSON members.
	for _, wt := range wireTools(t, Inventory()) {
		b, _ := json.Marshal(wt.Annotations)
		var m map[string]any
		json.Unmarshal(b, &m)
		for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := m[k]; !ok {
				t.Errorf("tool %q: %s missing on the wire: %s", wt.Name, k, b)
			}
		}
	}
}

// TestGuardCatchesOmittedHint shows the annotation guard failing: each
// variant leaves one hint out of an otherwise valid tool.
func TestGuardCatchesOmittedHint(t *testing.T) {
	base := func() Tool {
		return Define(Tool{
			Name: "probe", Title: "Probe", Description: "A tool for the guard test.", Toolset: ToolsetStatus,
			ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No,
		}, func(*Deps) mcp.ToolHandlerFor[struct{}, struct{}] { return nil })
	}
	if err := Validate(base()); err != nil {
		t.Fatalf("valid tool rejected: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(*Tool)
		want   string
	}{
		{"readOnlyHint", func(tl *Tool) { tl.ReadOnly = HintUnset }, "readOnlyHint not set"},
		{"destructiveHint", func(tl *Tool) { tl.Destructive = HintUnset }, "destructiveHint not set"},
		{"idempotentHint", func(tl *Tool) { tl.Idempotent = HintUnset }, "idempotentHint not set"},
		{"openWorldHint", func(tl *Tool) { tl.OpenWorld = HintUnset }, "openWorldHint not set"},
		{"no handler", func(tl *Tool) { tl.register = nil }, "no handler"},
		{"read-only but destructive", func(tl *Tool) { tl.Destructive = Yes }, "cannot be destructive"},
		{"send tool claiming read-only", func(tl *Tool) { tl.SendGate = true }, "must not claim readOnlyHint"},
		{"bad name", func(tl *Tool) { tl.Name = "Send Message" }, "must match"},
		{"unknown toolset", func(tl *Tool) { tl.Toolset = "misc" }, "unknown toolset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := base()
			tt.mutate(&tl)
			err := Validate(tl)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want error containing %q", err, tt.want)
			}
			// New refuses to build a server around it, too.
			if _, err := newFromTools([]Tool{tl}, &Deps{}, Filters{}); err == nil {
				t.Fatal("newFromTools accepted the broken tool")
			}
		})
	}
}

// TestToolSnapshots pins every tool's wire definition (name, description,
// annotations, input and output schema). Run `go test ./internal/mcpserver
// -run TestToolSnapshots -update` after an intended change and commit the
// diff: a schema change is an API change.
func TestToolSnapshots(t *testing.T) {
	tools := wireTools(t, Inventory())
	want := map[string]bool{}
	for _, wt := range tools {
		want[wt.Name+".json"] = true
		if err := checkSnapshot(snapDir, wt, *update); err != nil {
			t.Error(err)
		}
	}
	// A snapshot without a tool is stale.
	entries, _ := os.ReadDir(snapDir)
	for _, e := range entries {
		if !want[e.Name()] {
			if *update {
				os.Remove(filepath.Join(snapDir, e.Name()))
				continue
			}
			t.Errorf("stale snapshot %s: no tool by that name (run with -update)", e.Name())
		}
	}
}

// TestSnapshotGuardCatchesDrift shows the snapshot guard failing when a
// tool's schema or text changes.
func TestSnapshotGuardCatchesDrift(t *testing.T) {
	status := wireTools(t, []Tool{getStatus})[0]
	if err := checkSnapshot(snapDir, status, false); err != nil {
		t.Fatalf("unchanged tool differs from its snapshot: %v", err)
	}
	// 1. An output type with one field renamed, under the same name.
	type drifted struct {
		Server StatusServer `json:"srv"`
	}
	other := Define(Tool{Name: "get_status", Title: getStatus.Title, Description: getStatus.Description, Toolset: ToolsetStatus,
		ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No},
		func(*Deps) mcp.ToolHandlerFor[StatusInput, drifted] { return nil })
	if err := checkSnapshot(snapDir, wireTools(t, []Tool{other})[0], false); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("renamed output field: err = %v, want a drift error", err)
	}
	// 2. A changed annotation.
	flipped := getStatus
	flipped.OpenWorld = Yes
	if err := checkSnapshot(snapDir, wireTools(t, []Tool{flipped})[0], false); err == nil {
		t.Error("flipped openWorldHint: no drift error")
	}
	// 3. A tool with no snapshot at all.
	renamed := getStatus
	renamed.Name = "get_status_v2"
	if err := checkSnapshot(snapDir, wireTools(t, []Tool{renamed})[0], false); err == nil || !strings.Contains(err.Error(), "no snapshot") {
		t.Errorf("missing snapshot: err = %v", err)
	}
}

// checkSnapshot compares a tool's wire JSON with dir/<name>.json, or
// rewrites the file when update is set.
func checkSnapshot(dir string, tool *mcp.Tool, update bool) error {
	got, err := canonicalJSON(tool)
	if err != nil {
		return err
	}
	path := filepath.Join(dir, tool.Name+".json")
	if update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return fmt.Errorf("tool %q has no snapshot %s (run with -update and commit it)", tool.Name, path)
	}
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("tool %q differs from %s (run with -update if intended):\n--- got\n%s\n--- want\n%s", tool.Name, path, got, want)
	}
	return nil
}

// canonicalJSON renders v with sorted keys and two-space indentation.
func canonicalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(generic, "", "  ")
	return append(out, '\n'), err
}

// wireTools registers tools on a server with every filter open and returns
// tools/list as a client sees it.
func wireTools(t *testing.T, tools []Tool) []*mcp.Tool {
	t.Helper()
	srv, err := newFromTools(tools, &Deps{}, Filters{EnableSend: true, Profile: &Profile{Access: "write", AllowExternal: true, FileDirs: []string{"/tmp"}}})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv.SDK)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// connect links a client to s in memory.
func connect(t testing.TB, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// TestDefineLenientNumbers checks that Define's inferred schema lets
// coerce.Number fields through go-sdk's validation in every accepted form,
// and that the handler's coercion turns bad values into isError sentences.
func TestDefineLenientNumbers(t *testing.T) {
	type in struct {
		Limit coerce.Number `json:"limit,omitzero"`
	}
	type out struct {
		Limit int `json:"limit"`
	}
	tool := Define(Tool{Name: "limited", Title: "Limited", Description: "Echo a coerced limit.", Toolset: ToolsetStatus,
		ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No},
		func(*Deps) mcp.ToolHandlerFor[in, out] {
			return func(_ context.Context, _ *mcp.CallToolRequest, i in) (*mcp.CallToolResult, out, error) {
				n, err := coerce.Int(i.Limit, coerce.IntSpec{Name: "limit", Default: 20, Min: 1, Max: 200, Clamp: true})
				return nil, out{n}, err
			}
		})
	srv, err := newFromTools([]Tool{tool}, &Deps{}, Filters{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv.SDK)
	for _, tt := range []struct {
		arg     any
		want    int
		wantErr bool
	}{{50, 50, false}, {"50", 50, false}, {50.0, 50, false}, {1e308, 0, true}, {"nan", 0, true}, {-1, 0, true}, {nil, 20, false}, {true, 0, true}} {
		args := map[string]any{"limit": tt.arg}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "limited", Arguments: args})
		if err != nil {
			t.Fatalf("%v: protocol error %v", tt.arg, err)
		}
		if res.IsError != tt.wantErr {
			t.Errorf("%v: isError = %v, want %v (%v)", tt.arg, res.IsError, tt.wantErr, res.Content)
			continue
		}
		if !tt.wantErr {
			b, _ := json.Marshal(res.StructuredContent)
			var o out
			json.Unmarshal(b, &o)
			if o.Limit != tt.want {
				t.Errorf("%v: limit = %d, want %d", tt.arg, o.Limit, tt.want)
			}
		}
	}
}
