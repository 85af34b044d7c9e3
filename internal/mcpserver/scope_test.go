package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/scope"
)

// probeRows is the literal store behind calendar_probe.
var probeRows = []scope.Row{
	{Account: "iCloud", Name: "Work", ID: "c0"},
	{Account: "iCloud", Name: "Home", ID: "c1"},
	{Account: "Exchange", Name: "Work", ID: "c2"},
	{Account: "Straße", Name: "Café", ID: "c3"},
	{Account: "Shared", Name: "Team", ID: "c4"}, // two calendars whose
	{Account: "Shared", Name: "team", ID: "c5"}, // paths fold alike
}

type probeIn struct {
	Op   string `json:"op" jsonschema:"list, get or write"`
	Name string `json:"name,omitempty"`
}
type probeOut struct {
	Paths []string `json:"paths"`
}

// calendarProbe is a test-only scoped tool: it reads the call's scope and
// answers through ScopedRows over probeRows, as a calendar service would.
var calendarProbe = Define(Tool{
	Name: "calendar_probe", Title: "Calendar probe", Description: "Test-only scoped tool.", Toolset: ToolsetCalendar,
	ReadOnly: Yes, Destructive: No, Idempotent: Yes, OpenWorld: No,
}, func(*Deps) mcp.ToolHandlerFor[probeIn, probeOut] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in probeIn) (*mcp.CallToolResult, probeOut, error) {
		sc, err := scope.FromContext(ctx)
		if err != nil {
			return nil, probeOut{}, err
		}
		sr := sc.Rows(scope.Calendar, probeRows)
		var idx []int
		switch in.Op {
		case "list":
			idx, err = sr.Allowed()
		case "get":
			var i int
			i, err = sr.Resolve(in.Name)
			idx = []int{i}
		case "write":
			var i int
			i, err = sr.Target(in.Name)
			idx = []int{i}
		default:
			err = fmt.Errorf("op %q: want list, get or write", in.Op)
		}
		if err != nil {
			return nil, probeOut{}, err
		}
		out := probeOut{Paths: []string{}}
		for _, i := range idx {
			out.Paths = append(out.Paths, probeRows[i].Path())
		}
		return nil, out, nil
	}
})

// scopeClients starts one server with the profile and connects go-sdk
// clients to it over stdio (ServeStdio on pipes) and over HTTP.
func scopeClients(t *testing.T, p *Profile) map[string]*mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv, err := newFromTools([]Tool{getStatus, calendarProbe}, &Deps{Version: "test", Profile: p}, Filters{Toolsets: []string{"status", "calendar"}, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		ServeStdio(ctx, srv.SDK, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	ts := httptest.NewServer(NewHTTPHandler(srv.SDK, HTTPOptions{}))
	t.Cleanup(ts.Close)

	out := map[string]*mcp.ClientSession{}
	for name, tr := range map[string]mcp.Transport{
		"stdio": &mcp.IOTransport{Reader: outR, Writer: inW},
		"http":  &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"},
	} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "scope-test", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		out[name] = cs
	}
	return out
}

func TestScopeReachesHandlersThroughRealClients(t *testing.T) {
	tests := []struct {
		name      string
		profile   *Profile
		narrow    any // _meta["tidings/scope"]; nil = key absent
		args      map[string]any
		want      []string // admitted paths
		refused   string   // substring of the isError text
		violation bool     // _meta.scope_violation expected
		rpcErr    string   // substring of a -32602 error
	}{
		// admitted
		{name: "no profile lists everything", args: map[string]any{"op": "list"},
			want: []string{"iCloud/Work", "iCloud/Home", "Exchange/Work", "Straße/Café", "Shared/Team", "Shared/team"}},
		{name: "profile AND of account and calendars", profile: &Profile{CalendarAccounts: []string{"iCloud"}, Calendars: []string{"iCloud/Work", "Exchange/Work"}},
			args: map[string]any{"op": "list"}, want: []string{"iCloud/Work"}},
		{name: "narrower _meta narrows the listing", profile: &Profile{CalendarAccounts: []string{"iCloud"}},
			narrow: map[string]any{"calendars": []any{"ICLOUD/home"}}, args: map[string]any{"op": "list"}, want: []string{"iCloud/Home"}},
		{name: "folded names resolve", profile: &Profile{CalendarAccounts: []string{"STRASSE"}},
			narrow: map[string]any{"calendars": []any{"strasse/cafe\u0301"}}, args: map[string]any{"op": "get", "name": "Straße/Café"}, want: []string{"Straße/Café"}},
		{name: "write without a target goes to the one calendar in scope", profile: &Profile{Calendars: []string{"Exchange/Work"}},
			args: map[string]any{"op": "write", "name": "iCloud/Home"}, want: []string{"Exchange/Work"}},
		{name: "a narrowing for another service leaves calendars alone", profile: &Profile{CalendarAccounts: []string{"Exchange"}},
			narrow: map[string]any{"mail_accounts": []any{"Work"}}, args: map[string]any{"op": "list"}, want: []string{"Exchange/Work"}},
		// refused
		{name: "explicit name outside the profile is a violation", profile: &Profile{Calendars: []string{"iCloud/Work"}},
			args: map[string]any{"op": "get", "name": "Exchange/Work"}, refused: `calendar "Exchange/Work" is outside this client's scope`, violation: true},
		{name: "explicit name outside the narrowing is a violation", profile: nil,
			narrow: map[string]any{"calendar_accounts": []any{"iCloud"}}, args: map[string]any{"op": "get", "name": "Exchange/Work"}, refused: "outside this client's scope", violation: true},
		{name: "wider _meta is a violation", profile: &Profile{Calendars: []string{"iCloud/Work"}},
			narrow: map[string]any{"calendars": []any{"iCloud/Work", "iCloud/Home"}}, args: map[string]any{"op": "list"}, refused: `per-call scope calendars value "iCloud/Home" is outside`, violation: true},
		{name: "misconfigured profile is refused without the violation flag", profile: &Profile{Calendars: []string{"shared/TEAM", "iCloud/Work"}},
			args: map[string]any{"op": "get", "name": "iCloud/Work"}, refused: `calendars = "shared/TEAM" matches two calendars, "Shared/Team" (id "c4") and "Shared/team" (id "c5")`},
		{name: "typo in the profile is an ordinary error", profile: &Profile{Calendars: []string{"iCloud/Wrok"}},
			args: map[string]any{"op": "get", "name": "Exchange/Work"}, refused: `names no calendar here`},
		{name: "empty cross product is its own sentence", profile: &Profile{CalendarAccounts: []string{"Exchange"}, Calendars: []string{"iCloud/Home"}},
			args: map[string]any{"op": "list"}, refused: "no calendar is in both"},
		{name: "write that the scope cannot settle asks", profile: &Profile{CalendarAccounts: []string{"iCloud"}},
			args: map[string]any{"op": "write", "name": "Exchange/Work"}, refused: `say which calendar to use: one of "iCloud/Work", "iCloud/Home"`},
		{name: "unknown key in the narrowing", narrow: map[string]any{"calendar": []any{"iCloud/Work"}}, args: map[string]any{"op": "list"}, rpcErr: `unknown key "calendar"`},
		{name: "narrowing not an object", narrow: []any{"iCloud/Work"}, args: map[string]any{"op": "list"}, rpcErr: "must be an object"},
		{name: "narrowing null", narrow: json.RawMessage("null"), args: map[string]any{"op": "list"}, rpcErr: "must be an object"},
		{name: "field not an array", narrow: map[string]any{"calendars": "iCloud/Work"}, args: map[string]any{"op": "list"}, rpcErr: "calendars must be an array of strings"},
		{name: "field holding a number", narrow: map[string]any{"calendars": []any{7}}, args: map[string]any{"op": "list"}, rpcErr: "calendars must be an array of strings"},
		{name: "empty field", narrow: map[string]any{"calendars": []any{}}, args: map[string]any{"op": "list"}, rpcErr: "calendars is empty"},
		{name: "malformed path", narrow: map[string]any{"calendars": []any{"Work"}}, args: map[string]any{"op": "list"}, rpcErr: "not an Account/Name path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for tr, cs := range scopeClients(t, tc.profile) {
				params := &mcp.CallToolParams{Name: "calendar_probe", Arguments: tc.args}
				if tc.narrow != nil {
					params.Meta = mcp.Meta{MetaScopeKey: tc.narrow}
				}
				res, err := cs.CallTool(context.Background(), params)
				if tc.rpcErr != "" {
					var we *jsonrpc.Error
					if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams || !strings.Contains(we.Message, tc.rpcErr) {
						t.Fatalf("%s: err = %v, res = %+v; want -32602 saying %q", tr, err, res, tc.rpcErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", tr, err)
				}
				text := ""
				for _, c := range res.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						text += tc.Text
					}
				}
				if _, flagged := res.Meta[MetaScopeViolation]; flagged != tc.violation || (flagged && res.Meta[MetaScopeViolation] != true) {
					t.Errorf("%s: _meta = %v, want scope_violation=%v", tr, res.Meta, tc.violation)
				}
				if tc.refused != "" {
					if !res.IsError || !strings.Contains(text, tc.refused) {
						t.Errorf("%s: isError=%v %q; want refusal saying %q", tr, res.IsError, text, tc.refused)
					}
					continue
				}
				if res.IsError {
					t.Fatalf("%s: refused: %s", tr, text)
				}
				var out probeOut
				b, _ := json.Marshal(res.StructuredContent)
				json.Unmarshal(b, &out)
				if !slices.Equal(out.Paths, tc.want) {
					t.Errorf("%s: paths = %q, want %q", tr, out.Paths, tc.want)
				}
			}
		})
	}
}

// TestModernMetaAloneDoesNotNarrow: a 2026-07-28 request always carries
// _meta; only its "tidings/scope" key narrows, and the violation flag
// reaches the wire as result._meta.scope_violation.
func TestModernMetaAloneDoesNotNarrow(t *testing.T) {
	p := &Profile{CalendarAccounts: []string{"iCloud"}}
	srv, err := newFromTools([]Tool{calendarProbe}, &Deps{Version: "test", Profile: p}, Filters{Toolsets: []string{"calendar"}, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(NewHTTPHandler(srv.SDK, HTTPOptions{}))
	t.Cleanup(ts.Close)

	list := do(t, ts.URL, modernCall("calendar_probe", `{"op":"list"}`, nil)).result()
	if m, _ := list["_meta"].(map[string]any); list == nil || list["isError"] == true || m[MetaScopeViolation] != nil {
		t.Fatalf("modern call with plain _meta: %v", list)
	}
	if got := fmt.Sprint(list["structuredContent"]); got != "map[paths:[iCloud/Work iCloud/Home]]" {
		t.Errorf("listing = %s", got)
	}

	get := do(t, ts.URL, modernCall("calendar_probe", `{"op":"get","name":"Exchange/Work"}`, nil)).result()
	meta, _ := get["_meta"].(map[string]any)
	if get["isError"] != true || meta[MetaScopeViolation] != true {
		t.Fatalf("out-of-scope get on the wire: %v", get)
	}

	wider := strings.Replace(modernCall("calendar_probe", `{"op":"list"}`, nil).body, `"_meta":{`, `"_meta":{"tidings/scope":{"calendar_accounts":["Exchange"]},`, 1)
	w := do(t, ts.URL, rpc{path: "/mcp", headers: modernCall("calendar_probe", "", nil).headers, body: wider}).result()
	if wm, _ := w["_meta"].(map[string]any); w["isError"] != true || wm[MetaScopeViolation] != true {
		t.Fatalf("wider narrowing on the wire: %v", w)
	}

	body := strings.Replace(modernCall("calendar_probe", `{"op":"list"}`, nil).body, `"_meta":{`, `"_meta":{"tidings/scope":{"calendar_accounts":["iCloud"],"calendars":7},`, 1)
	r := do(t, ts.URL, rpc{path: "/mcp", headers: modernCall("calendar_probe", "", nil).headers, body: body})
	if r.errCode() != jsonrpc.CodeInvalidParams || !strings.Contains(r.raw, "calendars") {
		t.Fatalf("bad narrowing on the wire: %d %s", r.errCode(), r.raw)
	}
}
