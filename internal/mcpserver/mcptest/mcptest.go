// Package mcptest connects real go-sdk clients to a Tidings server for the
// tests of the service packages (docs/testing.md): over stdio (ServeStdio
// on pipes) and over Streamable HTTP (NewHTTPHandler on a loopback
// listener), plus a raw 2026-07-28 POST for what go-sdk's own client cannot
// send. Test-only: nothing in the product imports it.
package mcptest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

var (
	mu        sync.Mutex
	endpoints = map[*mcp.ClientSession]string{}
)

// Sessions connects a client to srv over stdio and over HTTP, keyed
// "stdio" and "http"; everything closes when the test ends.
func Sessions(t testing.TB, srv *mcpserver.Server) map[string]*mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		mcpserver.ServeStdio(ctx, srv.SDK, inR, outW)
		outW.Close()
	}()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("stdio connect: %v", err)
	}
	t.Cleanup(func() { cs.Close(); inW.Close(); <-done })

	ts := httptest.NewServer(mcpserver.NewHTTPHandler(srv.SDK, mcpserver.HTTPOptions{}))
	t.Cleanup(ts.Close)
	hs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("http connect: %v", err)
	}
	t.Cleanup(func() { hs.Close() })
	mu.Lock()
	endpoints[hs] = ts.URL + "/mcp"
	mu.Unlock()
	t.Cleanup(func() { mu.Lock(); delete(endpoints, hs); mu.Unlock() })
	return map[string]*mcp.ClientSession{"stdio": cs, "http": hs}
}

// Endpoint is the /mcp URL behind an HTTP session of Sessions ("" for
// stdio).
func Endpoint(cs *mcp.ClientSession) string {
	mu.Lock()
	defer mu.Unlock()
	return endpoints[cs]
}

// beyondGoClient: go-sdk's client cannot send arguments holding numbers
// beyond float64 over HTTP ("missing required Mcp-Name header"), so those
// are posted raw, as a client in another language would send them.
func beyondGoClient(args string) bool {
	return strings.Contains(args, "e309") || strings.Contains(args, "e400")
}

// RawCall posts one 2026-07-28 tools/call to endpoint and returns isError,
// the text and the structured content.
func RawCall(t testing.TB, endpoint, name, args string) (bool, string, map[string]any) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") { // an SSE answer: the data line
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			b = []byte(d)
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: HTTP %d %s", name, args, resp.StatusCode, b)
	}
	var text string
	for _, c := range m.Result.Content {
		text += c.Text
	}
	return m.Result.IsError, text, m.Result.StructuredContent
}

// Call calls a tool with raw JSON arguments and returns isError, the text
// and the structured content; a protocol error fails the test. Arguments a
// go-sdk client cannot encode go as a raw POST on HTTP sessions.
func Call(t testing.TB, cs *mcp.ClientSession, name, args string) (bool, string, map[string]any) {
	t.Helper()
	if u := Endpoint(cs); u != "" && beyondGoClient(args) {
		return RawCall(t, u, name, args)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: protocol error %v", name, args, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	var data map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &data)
	return res.IsError, text, data
}
