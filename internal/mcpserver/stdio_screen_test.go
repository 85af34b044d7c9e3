package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// badLines are lines a client (or a buggy JSON encoder) may write that are
// not JSON-RPC messages, with the code each must be answered with.
var badLines = []struct {
	name, line string
	code       float64
}{
	{"not JSON", `this is not json`, -32700},
	{"truncated", `{"jsonrpc":"2.0","id":1,"method":"tools/list"`, -32700},
	{"NaN from a lax encoder", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":NaN}}}`, -32700},
	{"Infinity", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-Infinity}}`, -32700},
	{"two values on one line", `{"jsonrpc":"2.0","method":"x"} {"jsonrpc":"2.0","method":"y"}`, -32700},
	{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"ping",}`, -32700},
	{"invalid escape", `{"jsonrpc":"2.0","id":1,"method":"\x"}`, -32700},
	{"empty object", `{}`, -32600},
	{"empty array", `[]`, -32600},
	{"number", `1`, -32600},
	{"string", `"x"`, -32600},
	{"null", `null`, -32600},
	{"true", `true`, -32600},
	{"version only", `{"jsonrpc":"2.0"}`, -32600},
	{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600},
	{"no version", `{"id":1,"method":"ping"}`, -32600},
	{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600},
	{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, -32600},
	{"batch outside a 2025-03-26 session", `[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, -32600},
	{"array of junk", `[1,2]`, -32600},
}

// TestStdioBadLineAnsweredSessionGoesOn: every malformed line gets a
// JSON-RPC error with id null (-32700 for what is not JSON, -32600 for JSON
// that is not a message) and the session keeps serving: the initialize and
// tools/list that follow are answered.
func TestStdioBadLineAnsweredSessionGoesOn(t *testing.T) {
	s := startStdio(t)
	s.send(t, "")     // blank lines are skipped silently
	s.send(t, "  \r") // and so is a lone CR
	for _, b := range badLines {
		s.send(t, b.line)
		m := s.recv(t)
		e, _ := m["error"].(map[string]any)
		id, hasID := m["id"]
		if e == nil || e["code"] != b.code || !hasID || id != nil {
			t.Fatalf("%s: got %v, want error %v with id null", b.name, m, b.code)
		}
		if msg, _ := e["message"].(string); msg == "" || strings.Count(msg, ". ") > 0 {
			t.Errorf("%s: message %q is not one sentence", b.name, msg)
		}
	}
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"  \r")
	if m := s.recv(t); m["result"] == nil || m["id"] != float64(1) {
		t.Fatalf("initialize after bad lines: %v", m)
	}
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// A 2025-06-18 session: batches were removed in that version.
	s.send(t, `[{"jsonrpc":"2.0","id":8,"method":"ping"}]`)
	if m := s.recv(t); m["error"] == nil || m["error"].(map[string]any)["code"] != float64(-32600) {
		t.Fatalf("batch in a 2025-06-18 session: %v", m)
	}
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	m := s.recv(t)
	res, _ := m["result"].(map[string]any)
	if tools, _ := res["tools"].([]any); len(tools) == 0 || m["id"] != float64(2) {
		t.Fatalf("tools/list after bad lines: %v", m)
	}
	// Once more after the session is established.
	s.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"`)
	if m := s.recv(t); m["error"] == nil || m["error"].(map[string]any)["code"] != float64(-32700) {
		t.Fatalf("truncated line in session: %v", m)
	}
	s.send(t, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if m := s.recv(t); m["id"] != float64(4) || m["result"] == nil {
		t.Fatalf("ping: %v", m)
	}
}

// TestStdioBatchIn20250326Session: 2025-03-26 is the one version whose
// transport defines JSON-RPC batches, so a session that negotiated it still
// gets an array of answers.
func TestStdioBatchIn20250326Session(t *testing.T) {
	s := startStdio(t)
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := s.recv(t); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(t, `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`)
	if !s.out.Scan() {
		t.Fatal("no answer to the batch")
	}
	if line := s.out.Text(); !strings.HasPrefix(line, "[") || !strings.Contains(line, `"id":2`) || !strings.Contains(line, `"id":3`) {
		t.Fatalf("batch answer: %s", line)
	}
	for _, b := range []string{
		`[]`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},{}]`,
	} {
		s.send(t, b)
		if m := s.recv(t); m["error"] == nil || m["error"].(map[string]any)["code"] != float64(-32600) {
			t.Fatalf("batch %s: %v", b, m)
		}
	}
	s.send(t, `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if m := s.recv(t); m["id"] != float64(4) || m["result"] == nil {
		t.Fatalf("ping after the batch: %v", m)
	}
}

// TestStdioRequestBeforeInitialize: a legacy request before initialize is
// refused with a real JSON-RPC code (go-sdk answers code 0), naming the fix.
func TestStdioRequestBeforeInitialize(t *testing.T) {
	s := startStdio(t)
	s.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	m := s.recv(t)
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32600) || m["id"] != float64(5) {
		t.Fatalf("tools/list before initialize: %v", m)
	}
	if msg, _ := e["message"].(string); !strings.Contains(msg, "initialize") {
		t.Errorf("message %q does not say to initialize first", msg)
	}
}

// FuzzScreenMessage: for any line, the screen either answers it with
// -32700 (exactly when it is not JSON) or -32600, or passes it to go-sdk's
// stdio transport, which must then decode it without error, so no line
// can end a session.
func FuzzScreenMessage(f *testing.F) {
	for _, b := range badLines {
		f.Add(b.line, false)
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"x"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1.5,"method":"x","params":{"a":[1e999,"\ud800"]}}`,
		`  {"jsonrpc":"2.0","method":"x"}  `,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, line string, batchOK bool) {
		if strings.ContainsAny(line, "\n") || len(line) > 1<<16 {
			t.Skip()
		}
		code, text := screenMessage([]byte(line), batchOK)
		if !json.Valid([]byte(line)) != (code == codeParseError) {
			t.Fatalf("%q: code %d; valid JSON = %v", line, code, json.Valid([]byte(line)))
		}
		if code != 0 && (code != codeInvalidRequest && code != codeParseError || text == "") {
			t.Fatalf("%q: code %d %q", line, code, text)
		}
		var out bytes.Buffer
		r := newScreenReader(io.NopCloser(strings.NewReader(line+"\n")), &out, func() bool { return batchOK })
		conn, err := (&mcp.IOTransport{Reader: r, Writer: nopWriteCloser{io.Discard}, MaxLineLength: -1}).Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		msg, err := conn.Read(context.Background())
		blank := strings.Trim(line, " \t\r") == ""
		switch {
		case code == 0 && !blank:
			if err != nil || msg == nil {
				t.Fatalf("%q passed the screen but go-sdk refused it: %v", line, err)
			}
		default:
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%q (code %d): go-sdk read %v, %v; want EOF", line, code, msg, err)
			}
			if !blank && !bytes.Equal(out.Bytes(), rpcErrorLine(code, text)) {
				t.Fatalf("%q: answer %q", line, out.String())
			}
		}
	})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
