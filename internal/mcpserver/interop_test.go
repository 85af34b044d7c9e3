package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/conformance"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// clientReport is what testdata/interop/client.mjs prints.
type clientReport struct {
	Negotiated  string             `json:"negotiated"`
	Era         string             `json:"era"`
	Server      string             `json:"server"`
	Tools       []string           `json:"tools"`
	Annotations map[string]any     `json:"annotations"`
	IsError     bool               `json:"isError"`
	DataSet     *mcpserver.DataSet `json:"dataSet"`
	TextBlocks  int                `json:"textBlocks"`
}

// TestInteropTypeScriptClients connects the official TypeScript clients to
// Tidings over stdio (the real binary), Streamable HTTP and legacy SSE, lists
// tools and calls get_status: @modelcontextprotocol/client 2.4.0 with
// versionNegotiation auto and pinned to 2026-07-28 (and its default legacy
// mode), and @modelcontextprotocol/sdk 1.32.2, which speaks only legacy
// versions.
func TestInteropTypeScriptClients(t *testing.T) {
	node, dir := conformance.Tools(t)
	bin := conformance.BuildTidings(t)
	home := t.TempDir()

	// The script must sit under the tools folder so Node resolves the
	// packages from its node_modules.
	run, err := os.MkdirTemp(dir, "run-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(run)
	src, err := os.ReadFile("testdata/interop/client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(run, "client.mjs")
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}

	srv, err := mcpserver.New(&mcpserver.Deps{Version: "interop", Transport: "http",
		DataSet: mcpserver.DataSet{Kind: "demo", Empty: true, Note: "interop test"}}, mcpserver.Filters{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(mcpserver.NewHTTPHandler(srv.SDK, mcpserver.HTTPOptions{}))
	defer ts.Close()

	tests := []struct {
		sdk, transport, mode string
		wantVersion          string
	}{
		{"modern", "stdio", "auto", "2026-07-28"},
		{"modern", "stdio", "pin", "2026-07-28"},
		{"modern", "stdio", "legacy", "2025-11-25"},
		{"modern", "http", "auto", "2026-07-28"},
		{"modern", "http", "pin", "2026-07-28"},
		{"modern", "http", "legacy", "2025-11-25"},
		{"modern", "sse", "legacy", "2025-11-25"},
		{"legacy", "stdio", "-", ""},
		{"legacy", "http", "-", "2025-11-25"},
		{"legacy", "sse", "-", ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s-%s-%s", tt.sdk, tt.transport, tt.mode), func(t *testing.T) {
			target, args := ts.URL+"/mcp", []string{}
			switch tt.transport {
			case "stdio":
				target, args = bin, []string{"serve", "--demo"}
			case "sse":
				target = ts.URL + "/sse"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, append([]string{script, tt.sdk, tt.transport, tt.mode, target}, args...)...)
			cmd.Env = []string{"HOME=" + home, "TIDINGS_HOME=" + filepath.Join(home, "tidings"), "PATH=" + os.Getenv("PATH")}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("client: %v\nstderr:\n%s", err, stderr.String())
			}
			var rep clientReport
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("client output %q: %v", stdout.String(), err)
			}
			if tt.wantVersion != "" && rep.Negotiated != tt.wantVersion {
				t.Errorf("negotiated %q, want %q (era %q)", rep.Negotiated, tt.wantVersion, rep.Era)
			}
			if !slices.Contains(rep.Tools, "get_status") {
				t.Errorf("tools = %v", rep.Tools)
			}
			for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
				if _, ok := rep.Annotations[k]; !ok {
					t.Errorf("annotation %s missing: %v", k, rep.Annotations)
				}
			}
			// stdio runs `serve --demo` (the generated demo data); the
			// other transports reach the in-process server above.
			if rep.IsError || rep.DataSet == nil || rep.DataSet.Kind != "demo" || rep.DataSet.Empty != (tt.transport != "stdio") || rep.TextBlocks == 0 {
				t.Errorf("get_status: %+v", rep)
			}
		})
	}
}
