package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rpcError checks that r is exactly one JSON-RPC error response with the
// given code and id (nil: the id member must be present and null), sent
// as JSON.
func rpcError(t *testing.T, what string, r reply, code int, id any) map[string]any {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: Content-Type %q, body %q", what, ct, r.raw)
	}
	if len(r.msgs) != 1 || r.msgs[0]["jsonrpc"] != "2.0" {
		t.Fatalf("%s: not one JSON-RPC message: %q", what, r.raw)
	}
	m := r.msgs[0]
	got, hasID := m["id"]
	if r.errCode() != code || !hasID || got != id {
		t.Fatalf("%s: status %d %q, want code %d id %v", what, r.status, r.raw, code, id)
	}
	return m["error"].(map[string]any)
}

// TestHTTPMalformedBodyAnswered: a body that is not a JSON-RPC message gets
// a JSON-RPC error (id null) on both eras of POST /mcp, not go-sdk's plain
// text, and the server goes on serving.
func TestHTTPMalformedBodyAnswered(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	for _, era := range []map[string]string{nil, {"MCP-Protocol-Version": "2026-07-28"}} {
		for _, b := range badLines {
			r := do(t, base, rpc{path: "/mcp", headers: era, body: b.line})
			if r.status != http.StatusBadRequest {
				t.Errorf("%s %v: status %d", b.name, era, r.status)
			}
			rpcError(t, b.name, r, int(b.code), nil)
		}
	}
	if r := do(t, base, modernCall("echo", `{"text":"still here"}`, nil)); r.result() == nil {
		t.Fatalf("call after bad bodies: %s", r.raw)
	}
}

// TestHTTPSDKErrorsAreJSONRPC: the refusals go-sdk writes as plain text
// (unknown session, wrong Content-Type, missing Accept) reach the client as
// JSON-RPC errors.
func TestHTTPSDKErrorsAreJSONRPC(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	ping := `{"jsonrpc":"2.0","id":3,"method":"ping"}`
	tests := []struct {
		name   string
		req    rpc
		status int
	}{
		{"unknown session", rpc{path: "/mcp", headers: map[string]string{"Mcp-Session-Id": "nope"}, body: ping}, 404},
		{"wrong Content-Type", rpc{path: "/mcp", headers: map[string]string{"Content-Type": "text/plain", "Mcp-Session-Id": "nope"}, body: ping}, 415},
		{"Accept without event-stream", rpc{path: "/mcp", headers: map[string]string{"Accept": "application/json", "MCP-Protocol-Version": "2026-07-28"},
			body: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + modernMeta + `}}`}, 400},
		{"SSE POST to unknown session", rpc{path: "/sse?sessionid=nope", body: ping}, 404},
	}
	for _, tc := range tests {
		r := do(t, base, tc.req)
		if r.status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, r.status, tc.status)
		}
		if e := rpcError(t, tc.name, r, codeInvalidRequest, nil); e["message"] == "" {
			t.Errorf("%s: empty message", tc.name)
		}
	}
}

// TestHTTPRequestWithoutSession: a legacy request other than initialize,
// without Mcp-Session-Id, is refused with -32600 naming the fix (go-sdk
// answered it with code 0, which is no JSON-RPC code).
func TestHTTPRequestWithoutSession(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	for _, h := range []map[string]string{nil, {"MCP-Protocol-Version": "2025-06-18"}, {"MCP-Protocol-Version": "2025-03-26"}} {
		for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`} {
			r := do(t, base, rpc{path: "/mcp", headers: h, body: body})
			e := rpcError(t, body, r, codeInvalidRequest, float64(1))
			if msg, _ := e["message"].(string); !strings.Contains(msg, "initialize") || !strings.Contains(msg, "2026-07-28") {
				t.Errorf("message %q does not name the fix", msg)
			}
		}
	}
}

// TestHTTPSSEMalformedPostAnswered: the legacy SSE message endpoint answers
// a malformed POST with a JSON-RPC error (id null) and the session goes on.
func TestHTTPSSEMalformedPostAnswered(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	next := func() string { // the next data line
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				return v
			}
		}
		t.Fatalf("SSE stream ended: %v", sc.Err())
		return ""
	}
	endpoint := next()
	if r := do(t, base, rpc{path: endpoint, body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`}); r.status != 202 {
		t.Fatalf("initialize: %d %s", r.status, r.raw)
	}
	next()
	do(t, base, rpc{path: endpoint, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`})
	for _, b := range badLines {
		r := do(t, base, rpc{path: endpoint, body: b.line})
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: status %d", b.name, r.status)
		}
		rpcError(t, b.name, r, int(b.code), nil)
	}
	if r := do(t, base, rpc{path: endpoint, body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}); r.status != 202 {
		t.Fatalf("tools/list: %d %s", r.status, r.raw)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(next()), &m); err != nil || m["id"] != float64(2) || m["result"] == nil {
		t.Fatalf("tools/list answer after bad posts: %v %v", m, err)
	}
}
