package mcpserver

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoTool is a trivial tool for transport tests and benchmarks.
var echoTool = Define(Tool{
	Name: "echo", Title: "Echo", Description: "Return the text argument unchanged.", Toolset: ToolsetStatus,
	ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No,
}, func(*Deps) mcp.ToolHandlerFor[echoIn, echoOut] {
	return func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
		return nil, echoOut(in), nil
	}
})

type echoIn struct {
	Text string `json:"text"`
}
type echoOut struct {
	Text string `json:"text"`
}

func testServer(t testing.TB) *Server {
	t.Helper()
	srv, err := newFromTools([]Tool{getStatus, echoTool}, &Deps{Version: "test", DataSet: DataSet{Kind: "demo", Empty: true}}, Filters{})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func startHTTP(t testing.TB, o HTTPOptions) string {
	t.Helper()
	ts := httptest.NewServer(NewHTTPHandler(testServer(t).SDK, o))
	t.Cleanup(ts.Close)
	return ts.URL
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// rpc is one raw HTTP exchange.
type rpc struct {
	method  string // HTTP method; default POST
	path    string
	headers map[string]string
	body    string
}

type reply struct {
	status int
	header http.Header
	// msgs are the JSON-RPC messages of the body (JSON or SSE).
	msgs []map[string]any
	raw  string
}

func do(t *testing.T, base string, r rpc) reply {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	req, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if r.method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range r.headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := reply{status: resp.StatusCode, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		var sb strings.Builder
		for sc.Scan() {
			line := sc.Text()
			sb.WriteString(line + "\n")
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(data), &m) == nil {
					out.msgs = append(out.msgs, m)
					if _, ok := m["id"]; ok {
						break // the response ends the request's stream
					}
				}
			}
		}
		out.raw = sb.String()
		return out
	}
	b, _ := io.ReadAll(resp.Body)
	out.raw = string(b)
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		out.msgs = append(out.msgs, m)
	}
	return out
}

func (r reply) errCode() int {
	for _, m := range r.msgs {
		if e, ok := m["error"].(map[string]any); ok {
			c, _ := e["code"].(float64)
			return int(c)
		}
	}
	return 0
}

func (r reply) result() map[string]any {
	for _, m := range r.msgs {
		if res, ok := m["result"].(map[string]any); ok {
			return res
		}
	}
	return nil
}

func modernCall(name string, args string, extra map[string]string) rpc {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
	for k, v := range extra {
		h[k] = v
	}
	return rpc{path: "/mcp", headers: h,
		body: fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`, name, args, modernMeta)}
}

func initialize(version string) rpc {
	return rpc{path: "/mcp", body: fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, version)}
}

func TestHTTPModernCall(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	r := do(t, base, modernCall("echo", `{"text":"hi"}`, nil))
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.raw)
	}
	res := r.result()
	if res == nil {
		t.Fatalf("no result: %s", r.raw)
	}
	if res["resultType"] != "complete" {
		t.Errorf("resultType = %v", res["resultType"])
	}
	if sc, _ := res["structuredContent"].(map[string]any); sc["text"] != "hi" {
		t.Errorf("structuredContent = %v", res["structuredContent"])
	}
	if r.header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("X-Accel-Buffering = %q", r.header.Get("X-Accel-Buffering"))
	}
	if r.header.Get("Mcp-Session-Id") != "" {
		t.Error("modern request was given a session id")
	}
	if r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("CORS header present")
	}
}

func TestHTTPOrigin(t *testing.T) {
	base := startHTTP(t, HTTPOptions{AllowedOrigins: []string{"https://app.example"}})
	host := strings.TrimPrefix(base, "http://")
	tests := []struct {
		name   string
		req    rpc
		origin string
		want   int
	}{
		{"POST /mcp bad origin, good host", modernCall("echo", `{"text":"x"}`, nil), "http://evil.example", 403},
		{"POST /mcp origin on another local port", modernCall("echo", `{"text":"x"}`, nil), "http://127.0.0.1:1", 403},
		{"POST /mcp null origin", modernCall("echo", `{"text":"x"}`, nil), "null", 403},
		{"GET /sse bad origin, good host", rpc{method: "GET", path: "/sse"}, "http://evil.example", 403},
		{"legacy initialize bad origin", initialize("2025-11-25"), "http://evil.example", 403},
		{"POST /mcp same origin", modernCall("echo", `{"text":"x"}`, nil), "http://" + host, 200},
		{"POST /mcp configured origin", modernCall("echo", `{"text":"x"}`, nil), "https://app.example", 200},
		{"POST /mcp no origin", modernCall("echo", `{"text":"x"}`, nil), "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.req.headers == nil {
				tt.req.headers = map[string]string{}
			}
			if tt.origin != "" {
				tt.req.headers["Origin"] = tt.origin
			}
			r := do(t, base, tt.req)
			if r.status != tt.want {
				t.Errorf("status = %d, want %d (%s)", r.status, tt.want, r.raw)
			}
		})
	}
}

func TestHTTPHostCheck(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	for _, host := range []string{"evil.example", "evil.example:80", "192.168.1.5:7740"} {
		r := do(t, base, modernCall("echo", `{"text":"x"}`, map[string]string{"Host": host}))
		if r.status != 403 {
			t.Errorf("Host %s: status %d, want 403", host, r.status)
		}
	}
	for _, host := range []string{"localhost:7740", "127.0.0.1", "[::1]:9"} {
		r := do(t, base, modernCall("echo", `{"text":"x"}`, map[string]string{"Host": host}))
		if r.status != 200 {
			t.Errorf("Host %s: status %d, want 200 (%s)", host, r.status, r.raw)
		}
	}
}

func TestHTTPMcpNameBase64(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	enc := "=?base64?" + base64.StdEncoding.EncodeToString([]byte("echo")) + "?="
	r := do(t, base, modernCall("echo", `{"text":"b64"}`, map[string]string{"Mcp-Name": enc}))
	if r.status != 200 || r.result() == nil {
		t.Fatalf("encoded Mcp-Name: status %d: %s", r.status, r.raw)
	}
	r = do(t, base, modernCall("echo", `{"text":"b64"}`, map[string]string{"Mcp-Name": "=?base64?***?="}))
	if r.status != 400 || r.errCode() != -32020 {
		t.Errorf("invalid base64: status %d code %d, want 400 -32020", r.status, r.errCode())
	}
	r = do(t, base, modernCall("echo", `{"text":"b64"}`, map[string]string{"Mcp-Name": "=?base64?" + base64.StdEncoding.EncodeToString([]byte("get_status")) + "?="}))
	if r.status != 400 || r.errCode() != -32020 {
		t.Errorf("encoded name differing from the body: status %d code %d, want 400 -32020", r.status, r.errCode())
	}
}

func TestHTTPUnsupportedVersion(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	for _, v := range []string{"1900-01-01", "2099-01-01", "2025-01-01"} {
		t.Run(v, func(t *testing.T) {
			req := rpc{path: "/mcp", headers: map[string]string{"MCP-Protocol-Version": v, "Mcp-Method": "server/discover"},
				body: fmt.Sprintf(`{"jsonrpc":"2.0","id":"d1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":{}}}}`, v)}
			r := do(t, base, req)
			if r.status != 400 || r.errCode() != -32022 {
				t.Fatalf("status %d code %d, want 400 -32022: %s", r.status, r.errCode(), r.raw)
			}
			if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Errorf("Content-Type %q, want JSON", r.header.Get("Content-Type"))
			}
			e := r.msgs[0]["error"].(map[string]any)
			data, _ := e["data"].(map[string]any)
			sup, _ := data["supported"].([]any)
			if len(sup) != 5 || sup[0] != "2026-07-28" || data["requested"] != v {
				t.Errorf("data = %v", data)
			}
			if r.msgs[0]["id"] != "d1" {
				t.Errorf("id = %v, want the request's", r.msgs[0]["id"])
			}
		})
	}
	// Only in _meta, no header.
	r := do(t, base, rpc{path: "/mcp", body: `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`})
	if r.status != 400 || r.errCode() != -32022 {
		t.Errorf("_meta only: status %d code %d", r.status, r.errCode())
	}
}

func TestHTTPMethods(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	r := do(t, base, rpc{method: "GET", path: "/mcp", headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Accept": "text/event-stream"}})
	if r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("modern GET /mcp: %d Allow=%q, want 405 POST", r.status, r.header.Get("Allow"))
	}
	r = do(t, base, rpc{method: "DELETE", path: "/mcp"})
	if r.status != 405 {
		t.Errorf("DELETE without session: %d, want 405", r.status)
	}
	// Removed methods sent modern.
	for _, m := range []string{"initialize", "ping", "logging/setLevel"} {
		r = do(t, base, rpc{path: "/mcp", headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": m},
			body: fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":%q,"params":{%s}}`, m, modernMeta)})
		if r.status != 404 || r.errCode() != -32601 {
			t.Errorf("modern %s: %d %d, want 404 -32601", m, r.status, r.errCode())
		}
	}
	// Unadvertised capability.
	r = do(t, base, rpc{path: "/mcp", headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "prompts/list"},
		body: `{"jsonrpc":"2.0","id":4,"method":"prompts/list","params":{` + modernMeta + `}}`})
	if r.errCode() != -32601 {
		t.Errorf("prompts/list on a server without prompts: code %d, want -32601 (%s)", r.errCode(), r.raw)
	}
	r = do(t, base, rpc{method: "GET", path: "/other"})
	if r.status != 404 {
		t.Errorf("GET /other: %d", r.status)
	}
}

func TestHTTPDiscover(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	r := do(t, base, rpc{path: "/mcp", headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
		body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + modernMeta + `}}`})
	res := r.result()
	if res == nil {
		t.Fatalf("discover: %s", r.raw)
	}
	caps, _ := res["capabilities"].(map[string]any)
	if _, ok := caps["tools"]; !ok || len(caps) != 1 {
		t.Errorf("capabilities = %v, want tools only", caps)
	}
	if !strings.Contains(fmt.Sprint(res["instructions"]), "untrusted_external_content") {
		t.Error("instructions lack the untrusted-content notice")
	}
	if _, ok := res["ttlMs"]; !ok || res["cacheScope"] == nil {
		t.Errorf("discover lacks ttlMs/cacheScope: %v", res)
	}
}

func TestHTTPLegacyInitialize(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			r := do(t, base, initialize(v))
			res := r.result()
			if r.status != 200 || res == nil {
				t.Fatalf("status %d: %s", r.status, r.raw)
			}
			if res["protocolVersion"] != v {
				t.Errorf("negotiated %v, want %s", res["protocolVersion"], v)
			}
			sid := r.header.Get("Mcp-Session-Id")
			if sid == "" {
				t.Fatal("no Mcp-Session-Id for a legacy session")
			}
			caps, _ := res["capabilities"].(map[string]any)
			if _, ok := caps["logging"]; ok {
				t.Error("logging advertised but not served")
			}
			h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": v}
			do(t, base, rpc{path: "/mcp", headers: h, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`})
			call := do(t, base, rpc{path: "/mcp", headers: h, body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"legacy"}}}`})
			cres := call.result()
			if cres == nil {
				t.Fatalf("tools/call in session: %d %s", call.status, call.raw)
			}
			if sc, _ := cres["structuredContent"].(map[string]any); sc["text"] != "legacy" {
				t.Errorf("structuredContent = %v", cres["structuredContent"])
			}
			// The session's GET stream is served, DELETE ends the session.
			del := do(t, base, rpc{method: "DELETE", path: "/mcp", headers: h})
			if del.status != 204 {
				t.Errorf("DELETE session: %d", del.status)
			}
		})
	}
}

func TestHTTPSSEEndpoint(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Error("SSE stream without X-Accel-Buffering: no")
	}
	sc := bufio.NewScanner(resp.Body)
	var event, data string
	for sc.Scan() && (event == "" || data == "") {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			event = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			data = v
		}
	}
	if event != "endpoint" || !strings.HasPrefix(data, "/sse?sessionid=") {
		t.Fatalf("first event %q data %q, want endpoint /sse?sessionid=…", event, data)
	}
	// The endpoint accepts the session's messages, with the same guards.
	post := do(t, base, rpc{path: data, body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`})
	if post.status != 202 {
		t.Errorf("POST to endpoint: %d %s", post.status, post.raw)
	}
	post = do(t, base, rpc{path: data, headers: map[string]string{"Origin": "http://evil.example"}, body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`})
	if post.status != 403 {
		t.Errorf("POST to endpoint with bad Origin: %d", post.status)
	}
}

func TestHTTPBodyCap(t *testing.T) {
	base := startHTTP(t, HTTPOptions{MaxBodyBytes: 1024})
	big := strings.Repeat("x", 2048)
	r := do(t, base, modernCall("echo", fmt.Sprintf(`{"text":%q}`, big), nil))
	if r.status != 413 {
		t.Errorf("oversize modern body: %d, want 413", r.status)
	}
	r = do(t, base, modernCall("echo", `{"text":"small"}`, nil))
	if r.status != 200 {
		t.Errorf("small body: %d", r.status)
	}
}

func TestHTTPToken(t *testing.T) {
	const tok = "s3cret-token-0123456789"
	base := startHTTP(t, HTTPOptions{Token: tok})
	tests := []struct {
		auth string
		want int
	}{
		{"", 401},
		{"Bearer wrong-token-0123456789", 401},
		{"Bearer " + tok + "x", 401},
		{"bearer " + tok, 401},
		{"Basic " + tok, 401},
		{"Bearer " + tok, 200},
	}
	for _, tt := range tests {
		h := map[string]string{"Host": "tidings.lan:7740"}
		if tt.auth != "" {
			h["Authorization"] = tt.auth
		}
		r := do(t, base, modernCall("echo", `{"text":"x"}`, h))
		if r.status != tt.want {
			t.Errorf("Authorization %q: %d, want %d", tt.auth, r.status, tt.want)
		}
		if r.status == 401 && r.header.Get("WWW-Authenticate") == "" {
			t.Error("401 without WWW-Authenticate")
		}
	}
	// The token guards /sse too.
	if r := do(t, base, rpc{method: "GET", path: "/sse"}); r.status != 401 {
		t.Errorf("GET /sse without token: %d", r.status)
	}
}

func TestListenRequiresTokenOffLoopback(t *testing.T) {
	s := testServer(t).SDK
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		err := ListenAndServe(context.Background(), s, ListenOptions{Addr: addr})
		if err != ErrTokenRequired {
			t.Errorf("%s without token: err = %v, want ErrTokenRequired", addr, err)
		}
	}
	// Loopback without a token serves, and stops with the context.
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- ListenAndServe(ctx, s, ListenOptions{Addr: "127.0.0.1:0", Ready: func(a net.Addr) { ready <- a }})
	}()
	addr := <-ready
	r := do(t, "http://"+addr.String(), modernCall("echo", `{"text":"x"}`, nil))
	if r.status != 200 {
		t.Errorf("loopback serve: %d", r.status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

func TestReadTokenFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "token")
	os.WriteFile(p, []byte("abcdefghijklmnopqrstuvwxyz\n"), 0o600)
	if tok, err := ReadTokenFile(p); err != nil || tok != "abcdefghijklmnopqrstuvwxyz" {
		t.Errorf("0600 file: %q %v", tok, err)
	}
	os.Chmod(p, 0o640)
	if _, err := ReadTokenFile(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("0640 file: err = %v", err)
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abc"), 0o600)
	if _, err := ReadTokenFile(short); err == nil {
		t.Error("short token accepted")
	}
	link := filepath.Join(dir, "link")
	os.Chmod(p, 0o600)
	os.Symlink(p, link)
	if _, err := ReadTokenFile(link); err == nil {
		t.Error("symlinked token file accepted")
	}
}

// TestHTTPGoClients runs go-sdk's own clients against every route.
func TestHTTPGoClients(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	ctx := context.Background()
	for name, tr := range map[string]mcp.Transport{
		"streamable": &mcp.StreamableClientTransport{Endpoint: base + "/mcp"},
		"sse":        &mcp.SSEClientTransport{Endpoint: base + "/sse"},
	} {
		t.Run(name, func(t *testing.T) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "go", Version: "1"}, nil).Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_status", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("get_status: %v %v", err, res)
			}
			var st StatusOutput
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &st)
			if !st.DataSet.Empty || st.Server.Name != "tidings" {
				t.Errorf("status = %+v", st)
			}
		})
	}
}

func TestHTTPVersionHeaderMismatch(t *testing.T) {
	base := startHTTP(t, HTTPOptions{})
	for _, metaV := range []string{"v999.0.0", "2025-11-25", "1900-01-01"} {
		r := do(t, base, rpc{path: "/mcp", headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
			body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + metaV + `","io.modelcontextprotocol/clientCapabilities":{}}}}`})
		if r.status != 400 || r.errCode() != -32020 {
			t.Errorf("header 2026-07-28, _meta %s: %d %d, want 400 -32020", metaV, r.status, r.errCode())
		}
	}
}

func TestSDKLoggerQuietsInfo(t *testing.T) {
	var buf strings.Builder
	info := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	l := sdkLogger(info)
	l.Info("session connected")
	l.Warn("something odd")
	if strings.Contains(buf.String(), "session connected") || !strings.Contains(buf.String(), "something odd") {
		t.Errorf("info-level user: %q", buf.String())
	}
	buf.Reset()
	debug := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sdkLogger(debug).Info("session connected")
	if !strings.Contains(buf.String(), "session connected") {
		t.Errorf("debug-level user lost SDK info logs: %q", buf.String())
	}
}
