package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/policy/coerce"
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

// TestQuoteHugeNumbersTouchesOnlyToolArguments: only a tools/call's
// arguments change; the request id, other methods and ordinary numbers are
// left as they were (nil: the line is not re-encoded).
func TestQuoteHugeNumbersTouchesOnlyToolArguments(t *testing.T) {
	for _, tc := range []struct {
		in, want string // want "" = unchanged
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"limit":9007199254740993}}}`,
			`{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"limit":"9007199254740993"},"name":"x"}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":-9007199254740993}]}}}`,
			`{"id":1,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"a":[1,{"b":"-9007199254740993"}]},"name":"x"}}`},
		{`{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"x","arguments":{"limit":5}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":9007199254740993}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"limit":9007199254740992}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"text":"9007199254740993"}}}`, ""},
		{`not json 9007199254740993`, ""},
	} {
		got := quoteHugeNumbers([]byte(tc.in))
		if string(got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}
