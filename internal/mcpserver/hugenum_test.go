package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

type limitIn struct {
	Limit coerce.Number `json:"limit,omitzero"`
}
type limitOut struct {
	Limit int `json:"limit"`
}

var limitTool = Define(Tool{
	Name: "limit_echo", Title: "Limit echo", Description: "Return the coerced limit.", Toolset: ToolsetStatus,
	ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No,
}, func(*Deps) mcp.ToolHandlerFor[limitIn, limitOut] {
	return func(_ context.Context, _ *mcp.CallToolRequest, in limitIn) (*mcp.CallToolResult, limitOut, error) {
		n, err := coerce.Int(in.Limit, coerce.IntSpec{Name: "limit", Default: 20, Min: 1, Max: 200, Clamp: true})
		return nil, limitOut{Limit: n}, err
	}
})

// TestNumbersAbove2Pow53ReachTheToolAsWritten: a tool argument just above
// 2^53 (which a double rounds to exactly 2^53) is refused by the coercion
// with a sentence naming the parameter, over stdio as a JSON number — go-sdk
// decodes arguments into float64, so before, 2^53+1 arrived as 2^53 and was
// clamped like any large limit. 2^53 itself still clamps.
func TestNumbersAbove2Pow53ReachTheToolAsWritten(t *testing.T) {
	srv, err := newFromTools([]Tool{limitTool}, &Deps{Version: "test", DataSet: DataSet{Kind: "demo", Empty: true}}, Filters{})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioSession{in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	go func() {
		s.done <- ServeStdio(context.Background(), srv.SDK, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	for i, tc := range []struct {
		arg     string
		isError bool
	}{
		{`9007199254740993`, true},
		{`9007199254740993.0`, true},
		{`9.007199254740993e15`, true},
		{`-9007199254740993`, true},
		{`9007199254740992`, false}, // 2^53: clamped to 200
		{`500`, false},
	} {
		s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"limit_echo","arguments":{"limit":%s},%s}}`, i+1, tc.arg, modernMeta))
		m := s.recv(t)
		res, _ := m["result"].(map[string]any)
		if res == nil {
			t.Fatalf("limit %s: no result: %v", tc.arg, m)
		}
		isErr, _ := res["isError"].(bool)
		b, _ := json.Marshal(res["content"])
		if isErr != tc.isError || tc.isError && !strings.Contains(string(b), "limit") {
			t.Errorf("limit %s: isError %v (want %v), content %s", tc.arg, isErr, tc.isError, b)
		}
		if m["id"] != float64(i+1) {
			t.Errorf("limit %s: id %v changed", tc.arg, m["id"])
		}
	}
}

// TestQuoteHugeNumbersTouchesOnlyHugeNumbers: in a tool's arguments only
// numbers above 2^53 in magnitude (or beyond float64) become strings of
// their text; everything else is left as it was (nil: not re-encoded).
// Other methods and the request id never reach it: quoteHugeArguments
// applies it to a tools/call's arguments only.
func TestQuoteHugeNumbersTouchesOnlyHugeNumbers(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" = unchanged
	}{
		{`{"limit":9007199254740993}`, `{"limit":"9007199254740993"}`},
		{`{"a":[1,{"b":-9007199254740993}]}`, `{"a":[1,{"b":"-9007199254740993"}]}`},
		{`{"limit":1e309,"days":-1e400}`, `{"days":"-1e400","limit":"1e309"}`},
		{`{"limit":5}`, ""},
		{`{"limit":9007199254740992}`, ""},
		{`{"text":"9007199254740993"}`, ""},
		{`{"limit":1e2}`, ""},
		{`not json 9007199254740993`, ""},
	} {
		got := quoteHugeNumbers(json.RawMessage(tc.in))
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// badNumbers are JSON numbers a tool argument cannot hold as a double
// (1e309, -1e400), integers far beyond 2^53, and one just above it (which
// a double silently rounds to 2^53).
var badNumbers = []string{`1e309`, `-1e400`, `123456789012345678901234567890`, `9007199254740993`, `-9.9e99999`}

// wantOneNumberSentence checks an isError result is one sentence from the
// coercion naming param, never go-sdk's decoder text.
func wantOneNumberSentence(t *testing.T, what string, isError bool, text, param string) {
	t.Helper()
	if !isError {
		t.Errorf("%s: not an error: %s", what, text)
		return
	}
	if !strings.HasPrefix(text, param+" must be ") || strings.Contains(text, "\n") ||
		strings.Contains(text, "unmarshal") || strings.Contains(text, "Go struct") || strings.Contains(text, "validating") {
		t.Errorf("%s: error %q is not one sentence naming %s", what, text, param)
	}
}

// TestEveryBadNumberIsOneSentenceNamingTheParameter: a number the JSON
// decoder cannot hold, or a huge integer, reaches the coercion as written
// whatever carries the request — an in-process client (no stdio or HTTP
// screen in front), a 2025-03-26 batch — and comes back as one sentence
// naming the parameter. Before, the in-process path answered go-sdk's
// "cannot unmarshal … into Go struct field" and clamped 2^53+1 like 2^53,
// and a batch skipped the quoting done on single messages.
func TestEveryBadNumberIsOneSentenceNamingTheParameter(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	cs, _ := toolSession(t, env, Filters{})
	for _, n := range badNumbers {
		for _, tc := range []struct{ tool, args, param string }{
			{"search_messages", `{"query":"dinner","limit":` + n + `}`, "limit"},
			{"list_conversations", `{"limit":` + n + `}`, "limit"},
		} {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
			if err != nil {
				t.Fatalf("%s %s: protocol error %v", tc.tool, tc.args, err)
			}
			var text string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			wantOneNumberSentence(t, "in process "+tc.tool+" "+tc.args, res.IsError, text, tc.param)
		}
	}

	srv, err := newFromTools([]Tool{limitTool}, &Deps{Version: "test", DataSet: DataSet{Kind: "demo", Empty: true}}, Filters{})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioSession{in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	go func() {
		s.done <- ServeStdio(context.Background(), srv.SDK, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := s.recv(t); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, n := range badNumbers {
		s.send(t, fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"limit_echo","arguments":{"limit":%s}}}]`, i+2, n))
		if !s.out.Scan() {
			t.Fatal("no answer to the batch")
		}
		var batch []map[string]any
		if err := json.Unmarshal(s.out.Bytes(), &batch); err != nil || len(batch) != 1 {
			t.Fatalf("batch answer %s: %v", s.out.Bytes(), err)
		}
		res, _ := batch[0]["result"].(map[string]any)
		isErr, _ := res["isError"].(bool)
		var text string
		if c, _ := res["content"].([]any); len(c) == 1 {
			text, _ = c[0].(map[string]any)["text"].(string)
		}
		wantOneNumberSentence(t, "stdio batch "+n, isErr, text, "limit")
	}

	// Streamable HTTP, 2026-07-28: go-sdk decodes params for the Mcp-Name
	// check before any middleware, so the wire quoting must stay too.
	ts := httptest.NewServer(NewHTTPHandler(srv.SDK, HTTPOptions{}))
	t.Cleanup(ts.Close)
	for _, n := range badNumbers {
		r := do(t, ts.URL, modernCall("limit_echo", `{"limit":`+n+`}`, nil))
		res := r.result()
		isErr, _ := res["isError"].(bool)
		var text string
		if c, _ := res["content"].([]any); len(c) == 1 {
			text, _ = c[0].(map[string]any)["text"].(string)
		}
		wantOneNumberSentence(t, "HTTP "+n+" "+r.raw, isErr, text, "limit")
	}
}
