package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syncBuffer is a bytes.Buffer safe for the server's logger and the test
// to use at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// mcpClient is a real MCP client (go-sdk, legacy initialize handshake)
// talking to `tidings serve` run through Main.Run on in-process pipes.
type mcpClient struct {
	t      *testing.T
	cs     *mcp.ClientSession
	stderr *syncBuffer
}

// startClient runs `tidings serve ARGS…` with env and connects a client;
// the server is stopped (stdin EOF) when the test ends.
func startClient(t *testing.T, env map[string]string, args ...string) *mcpClient {
	t.Helper()
	m, _, _ := testMain(t, env)
	stderr := &syncBuffer{}
	m.Stderr = stderr
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	m.Stdin, m.Stdout = inR, outW
	done := make(chan error, 1)
	go func() {
		err := m.Run(context.Background(), append([]string{"serve"}, args...))
		outW.CloseWithError(io.EOF)
		inR.Close()
		done <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tidings-test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		select {
		case serr := <-done:
			t.Fatalf("connect: %v; serve: %v\n%s", err, serr, stderr)
		default:
		}
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v\n%s", err, stderr)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("serve did not exit after the client left")
		}
	})
	return &mcpClient{t: t, cs: cs, stderr: stderr}
}

// tools lists the registered tools.
func (c *mcpClient) tools() []*mcp.Tool {
	c.t.Helper()
	res, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		c.t.Fatalf("tools/list: %v", err)
	}
	return res.Tools
}

// toolNames lists the registered tool names.
func (c *mcpClient) toolNames() []string {
	var out []string
	for _, t := range c.tools() {
		out = append(out, t.Name)
	}
	return out
}

// callResult is one tools/call answer.
type callResult struct {
	Out   map[string]any // structuredContent (nil on an error result)
	Text  string         // the first text block
	IsErr bool
	Raw   []byte // the structured content as JSON
	Image []byte // the first image content block's bytes (get_attachment)
}

// call runs a tool and returns its result; protocol errors fail the test.
func (c *mcpClient) call(name string, args map[string]any) callResult {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("tools/call %s: %v\n%s", name, err, c.stderr)
	}
	r := callResult{IsErr: res.IsError}
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok && r.Image == nil {
			r.Image = ic.Data
		}
	}
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			r.Text = tc.Text
		}
	}
	if res.StructuredContent != nil {
		r.Raw, _ = json.Marshal(res.StructuredContent)
		json.Unmarshal(r.Raw, &r.Out)
	}
	return r
}

// mustCall is call that fails the test on an error result.
func (c *mcpClient) mustCall(name string, args map[string]any) map[string]any {
	c.t.Helper()
	r := c.call(name, args)
	if r.IsErr {
		c.t.Fatalf("%s %v: error result: %s", name, args, r.Text)
	}
	return r.Out
}

// waitFor calls a tool until ok accepts its result (the first sync runs
// in the background) or 30 s pass.
func (c *mcpClient) waitFor(name string, args map[string]any, ok func(callResult) bool) callResult {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := c.call(name, args)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s %v never gave the expected answer; last: %s %s\nstderr:\n%s", name, args, r.Text, r.Raw, c.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// listed reports whether the conversation list holds an entry whose label
// contains label.
func listed(out map[string]any, label string) map[string]any {
	convs, _ := out["conversations"].([]any)
	for _, c := range convs {
		cm, _ := c.(map[string]any)
		if l, _ := cm["label"].(string); strings.Contains(l, label) {
			return cm
		}
	}
	return nil
}

func hasAll(have []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func hasNone(have []string, unwanted ...string) bool {
	for _, w := range unwanted {
		if slices.Contains(have, w) {
			return false
		}
	}
	return true
}
