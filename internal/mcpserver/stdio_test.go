package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioSession runs ServeStdio on pipes and returns a line writer, a line
// reader and a channel with ServeStdio's result.
type stdioSession struct {
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func startStdio(t *testing.T) *stdioSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioSession{in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.out.Buffer(make([]byte, 1<<20), 1<<20)
	srv := testServer(t)
	go func() {
		s.done <- ServeStdio(context.Background(), srv.SDK, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

func (s *stdioSession) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// recv reads the next line; every line must be one JSON-RPC message.
func (s *stdioSession) recv(t *testing.T) map[string]any {
	t.Helper()
	if !s.out.Scan() {
		t.Fatalf("no line from server: %v", s.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
		t.Fatalf("stdout line is not JSON: %q", s.out.Text())
	}
	if m["jsonrpc"] != "2.0" {
		t.Fatalf("stdout line is not JSON-RPC 2.0: %q", s.out.Text())
	}
	return m
}

func TestStdioDiscoverBeforeInitialize(t *testing.T) {
	s := startStdio(t)
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+modernMeta+`}}`)
	m := s.recv(t)
	res, _ := m["result"].(map[string]any)
	if res == nil {
		t.Fatalf("discover: %v", m)
	}
	vs, _ := res["supportedVersions"].([]any)
	if len(vs) != 5 || vs[0] != "2026-07-28" {
		t.Errorf("supportedVersions = %v", vs)
	}
	// A modern call without any handshake.
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},`+modernMeta+`}}`)
	m = s.recv(t)
	if res, _ := m["result"].(map[string]any); res == nil || res["resultType"] != "complete" {
		t.Errorf("modern call: %v", m)
	}
}

// TestStdioLegacyInitialize runs the legacy handshake for every legacy
// version, each in its own process as a legacy client would.
func TestStdioLegacyInitialize(t *testing.T) {
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			s := startStdio(t)
			s.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			m := s.recv(t)
			if res, _ := m["result"].(map[string]any); res == nil || res["protocolVersion"] != v {
				t.Fatalf("initialize %s: %v", v, m)
			}
			s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"old"}}}`)
			m = s.recv(t)
			res, _ := m["result"].(map[string]any)
			if sc, _ := res["structuredContent"].(map[string]any); sc["text"] != "old" {
				t.Errorf("legacy call: %v", m)
			}
			if _, ok := res["resultType"]; ok {
				t.Errorf("legacy result carries resultType: %v", res)
			}
		})
	}
}

func TestStdioUnsupportedVersion(t *testing.T) {
	s := startStdio(t)
	s.send(t, `{"jsonrpc":"2.0","id":"v","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	m := s.recv(t)
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32022) || m["id"] != "v" {
		t.Fatalf("1900-01-01: %v", m)
	}
	data, _ := e["data"].(map[string]any)
	if sup, _ := data["supported"].([]any); len(sup) != 5 {
		t.Errorf("data = %v", data)
	}
	// The session is still usable.
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+modernMeta+`}}`)
	if m := s.recv(t); m["result"] == nil {
		t.Errorf("tools/list after a rejected version: %v", m)
	}
}

func TestStdioExitsOnEOF(t *testing.T) {
	s := startStdio(t)
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`)
	s.recv(t)
	s.in.Close()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("ServeStdio after EOF: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return after stdin EOF")
	}
}

func TestStdioGarbageLine(t *testing.T) {
	s := startStdio(t)
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta+`}}`)
	s.recv(t)
	s.send(t, `this is not json`)
	if m := s.recv(t); m["error"] == nil {
		t.Fatalf("garbage line: %v", m)
	}
	s.in.Close()
	// Whatever follows, no non-JSON or empty line may reach stdout.
	for s.out.Scan() {
		if !json.Valid(s.out.Bytes()) {
			t.Fatalf("non-JSON stdout line: %q", s.out.Text())
		}
		if strings.TrimSpace(s.out.Text()) == "" {
			t.Fatal("empty stdout line")
		}
	}
}

// TestStdioShutdownDoesNotWaitForSlowCalls: cancelling the context (SIGINT
// or SIGTERM in the CLI) ends the session promptly even while a call is in
// flight; only stdin EOF waits for answers.
func TestStdioShutdownDoesNotWaitForSlowCalls(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slow := Define(Tool{Name: "slow", Title: "Slow", Description: "Blocks until released.", Toolset: ToolsetStatus,
		ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No},
		func(*Deps) mcp.ToolHandlerFor[struct{}, struct{}] {
			return func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, struct{}, error) {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil, struct{}{}, nil
			}
		})
	srv, err := newFromTools([]Tool{slow}, &Deps{}, Filters{})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go io.Copy(io.Discard, outR)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, srv.SDK, inR, outW) }()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},`+modernMeta+`}}`+"\n")
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio waited for an in-flight call after its context was cancelled")
	}
	inW.Close()
}
