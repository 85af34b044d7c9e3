package maps

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// The transport helpers below are the weather package's (stdio through
// ServeStdio on pipes, Streamable HTTP on loopback).

// sessions connects a go-sdk client to srv over stdio (ServeStdio on
// pipes) and over HTTP (NewHTTPHandler on a loopback server).
func sessions(t *testing.T, srv *mcpserver.Server) map[string]*mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	out := map[string]*mcp.ClientSession{}

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		mcpserver.ServeStdio(ctx, srv.SDK, inR, outW)
		outW.Close()
		close(done)
	}()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); inW.Close(); <-done })
	out["stdio"] = cs

	ts := httptest.NewServer(mcpserver.NewHTTPHandler(srv.SDK, mcpserver.HTTPOptions{}))
	t.Cleanup(ts.Close)
	hs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hs.Close() })
	out["http"] = hs
	httpURL[hs] = ts.URL + "/mcp"
	return out
}

// httpURL maps an HTTP session to its endpoint, for rawCall.
var httpURL = map[*mcp.ClientSession]string{}

// beyondGoClient reports arguments go-sdk's own client cannot send over
// HTTP: it decodes them to build the Mcp-Name header and fails on numbers
// beyond float64 ("missing required Mcp-Name header"), so those are posted
// raw, as a client in another language would send them.
func beyondGoClient(args string) bool {
	return strings.Contains(args, "e309") || strings.Contains(args, "e400")
}

// rawCall posts one 2026-07-28 tools/call to endpoint and decodes the
// result.
func rawCall(t *testing.T, endpoint, name, args string) (bool, string, map[string]any) {
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

// call calls a tool with raw JSON arguments and returns isError, the
// text and the structured content; a protocol error fails the test.
func call(t *testing.T, cs *mcp.ClientSession, name, args string) (bool, string, map[string]any) {
	t.Helper()
	if u := httpURL[cs]; u != "" && beyondGoClient(args) {
		return rawCall(t, u, name, args)
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
