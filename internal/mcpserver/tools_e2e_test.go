package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// The end-to-end tests drive every message tool through a real MCP client
// session (go-sdk, in memory) over real data: the demo data set and the
// hand-built fixture chat.db of internal/service/servicetest, synced
// through the imessage reader into the index with the read policy.

// toolSession serves env's service over MCP and returns a client session.
func toolSession(t testing.TB, env *servicetest.Env, f Filters) (*mcp.ClientSession, *Server) {
	t.Helper()
	deps := &Deps{Messages: env.Service, Now: func() time.Time { return servicetest.Now }, Version: "test", Transport: "stdio",
		DataSet: DataSet{Kind: "demo"}}
	if f.Profile == nil {
		f.Profile = &Profile{Access: "write", AllowExternal: true, FileDirs: []string{env.Files}}
	}
	deps.Profile = f.Profile
	srv, err := New(deps, f)
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, srv.SDK), srv
}

// result is one tool call's outcome.
type result struct {
	isError bool
	text    string         // the text content blocks, joined
	data    map[string]any // structuredContent
	raw     []byte         // structuredContent JSON
}

// call calls a tool; a protocol error fails the test (bad input must be an
// isError result, never a JSON-RPC error).
func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) result {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v", name, args, err)
	}
	var r result
	r.isError = res.IsError
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			r.text += tc.Text
		}
	}
	if res.StructuredContent != nil {
		r.raw, _ = json.Marshal(res.StructuredContent)
		json.Unmarshal(r.raw, &r.data)
	}
	return r
}

// ok calls a tool and fails the test on an isError result.
func ok(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) result {
	t.Helper()
	r := callTool(t, cs, name, args)
	if r.isError {
		t.Fatalf("%s(%v): isError: %s", name, args, r.text)
	}
	if out != nil {
		if err := json.Unmarshal(r.raw, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, r.raw, err)
		}
	}
	if len(r.raw) > MaxResultBytes+4096 {
		t.Errorf("%s: result is %d bytes, over the %d budget", name, len(r.raw), MaxResultBytes)
	}
	return r
}

// failsWith calls a tool and wants an isError result whose text contains
// every want.
func failsWith(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, want ...string) string {
	t.Helper()
	r := callTool(t, cs, name, args)
	if !r.isError {
		t.Fatalf("%s(%v): want isError, got %s", name, args, clipTest(string(r.raw)))
	}
	for _, w := range want {
		if !strings.Contains(r.text, w) {
			t.Errorf("%s(%v): error %q does not contain %q", name, args, r.text, w)
		}
	}
	if strings.Count(strings.TrimSpace(r.text), "\n") > 0 {
		t.Errorf("%s: error is not one sentence on one line: %q", name, r.text)
	}
	return r.text
}

func clipTest(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

// bodies walks a JSON value and returns every string under one of keys.
func bodies(v any, keys ...string) []string {
	var out []string
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(c, k)
			}
		case []any:
			for _, c := range x {
				walk(c, key)
			}
		case string:
			if slices.Contains(keys, key) && x != "" {
				out = append(out, x)
			}
		}
	}
	walk(v, "")
	return out
}

// allStrings returns every string value (and key) of a JSON value.
func allStrings(v any) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				out = append(out, k)
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		case string:
			out = append(out, x)
		}
	}
	walk(v)
	return out
}

// checkWrapped asserts that a body is exactly one untrusted-content
// element whose content is sanitized.
func checkWrapped(t testing.TB, where, s string) string {
	t.Helper()
	inner, err := sanitize.Unwrap(s)
	if err != nil {
		t.Errorf("%s: body not wrapped exactly once: %q (%v)", where, clipTest(s), err)
		return ""
	}
	if strings.ContainsAny(s[len(sanitize.OpenTag):len(s)-len(sanitize.CloseTag)], "<>\n") {
		t.Errorf("%s: wrapped body contains a raw '<', '>' or newline: %q", where, s)
	}
	if r, bad := sanitize.Forbidden(inner); bad {
		t.Errorf("%s: body contains forbidden rune %U: %q", where, r, inner)
	}
	return inner
}

func TestToolsNeedTheQueryLayer(t *testing.T) {
	srv, err := New(&Deps{}, Filters{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv.SDK)
	for name, args := range map[string]map[string]any{"list_conversations": nil, "get_conversation_messages": {"chat": "Sam"},
		"search_messages": {"query": "x"}, "review_messages": nil, "get_response_stats": {"chat": "Sam"},
		"lookup_contacts": {"name": "Sam"}, "get_contact_dossier": {"contact_id": "Sam"}} {
		failsWith(t, cs, name, args, "no message index is available")
	}
}

func TestServerInstructionsTeachTheCatchUpFlow(t *testing.T) {
	srv, err := New(&Deps{}, Filters{EnableSend: true})
	if err != nil {
		t.Fatal(err)
	}
	in := srv.Instructions
	for _, want := range []string{"call review_messages once", "get_conversation_messages only for the one thread", "preview_message",
		"search_messages once", "get_contact_dossier once", "ask the user which one", sanitize.OpenTag} {
		if !strings.Contains(in, want) {
			t.Errorf("instructions lack %q:\n%s", want, in)
		}
	}
	// Without the send tools the send flow is not described.
	srv, _ = New(&Deps{}, Filters{})
	if strings.Contains(srv.Instructions, "call preview_message") {
		t.Error("instructions describe sending while send tools are absent")
	}
}

func TestHostileBodiesComeOutSanitizedAndWrapped(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{})
	cs, _ := toolSession(t, env, Filters{})

	var pg struct {
		Messages []struct {
			ID     string `json:"id"`
			Text   string `json:"text"`
			Sender string `json:"sender"`
		} `json:"messages"`
	}
	ok(t, cs, "get_conversation_messages", map[string]any{"chat": servicetest.HostilePhone, "limit": 100}, &pg)
	got := map[string]string{}
	for _, m := range pg.Messages {
		if m.Text == "" {
			continue
		}
		got[m.ID] = checkWrapped(t, m.ID, m.Text)
	}
	for i, body := range servicetest.Hostile[:len(servicetest.Hostile)-1] {
		id := fmt.Sprintf("fx-hostile-%d", i)
		inner, found := got[id]
		if !found {
			t.Errorf("%s missing from the history", id)
			continue
		}
		if i == 4 {
			if strings.Contains(inner, "4111") || strings.Contains(inner, "482913") || !strings.Contains(inner, "[REDACTED-CARD]") || !strings.Contains(inner, "[REDACTED-2FA]") {
				t.Errorf("secrets not redacted: %q", inner)
			}
			continue
		}
		if i == 5 {
			if strings.Contains(inner, "hunter2") {
				t.Errorf("password not redacted: %q", inner)
			}
			continue
		}
		if want := sanitize.Sanitize(body); inner != want {
			t.Errorf("%s: content %q, want the sanitized body %q", id, inner, want)
		}
	}
	// The fake closing tags are data: the raw JSON holds exactly one real
	// closing tag per wrapped body.
	r := ok(t, cs, "get_conversation_messages", map[string]any{"conversation_id": "iMessage;-;" + servicetest.HostilePhone}, nil)
	if n, m := strings.Count(string(r.raw), sanitize.CloseTag), strings.Count(string(r.raw), sanitize.OpenTag); n != m {
		t.Errorf("%d opening and %d closing tags in the result", m, n)
	}
	// Search, review and search context wrap the same way.
	var sr struct {
		Hits []map[string]any `json:"hits"`
	}
	ok(t, cs, "search_messages", map[string]any{"query": "ignore previous instructions developer mode", "context": 2, "mode": "fulltext"}, &sr)
	if len(sr.Hits) == 0 {
		t.Fatal("search found no hostile message")
	}
	for _, b := range bodies(map[string]any{"hits": toAny(sr.Hits)}, "text", "snippet") {
		checkWrapped(t, "search", b)
	}
	rv := ok(t, cs, "review_messages", map[string]any{"days": 3}, nil)
	texts := bodies(rv.data, "text", "last_text")
	if len(texts) == 0 {
		t.Fatal("review has no text")
	}
	for _, b := range texts {
		checkWrapped(t, "review", b)
	}
	// Names and file names are sanitized one-line fields, never wrapped.
	for _, s := range allStrings(rv.data) {
		if _, bad := sanitize.Forbidden(s); bad && !strings.HasPrefix(s, sanitize.OpenTag) {
			t.Errorf("review field with forbidden rune: %q", s)
		}
	}
	var att struct {
		Messages []struct {
			Attachments []struct {
				Filename string `json:"filename"`
			} `json:"attachments"`
		} `json:"messages"`
	}
	ok(t, cs, "get_conversation_messages", map[string]any{"chat": "Alex Hostile", "limit": 3}, &att)
	names := 0
	for _, m := range att.Messages {
		for _, a := range m.Attachments {
			names++
			if strings.ContainsRune(a.Filename, '\u202e') || strings.ContainsAny(a.Filename, `/\`) {
				t.Errorf("attachment name not sanitized: %q", a.Filename)
			}
		}
	}
	if names == 0 {
		t.Error("no attachment pointers in the newest messages")
	}
	if strings.Contains(string(r.raw), env.Dir) {
		t.Error("a disk path reached the result")
	}
}

func toAny(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

// adversarial are the numeric inputs of the foundation's coercion table.
var adversarial = []any{-1, 0, 1e308, "50", "nan", float64(1 << 63), "9999-12-31"}

func TestAdversarialNumbers(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	cs, _ := toolSession(t, env, Filters{})
	// For each tool and numeric parameter, which of the adversarial values
	// are accepted (true) — everything else must be an isError sentence.
	tests := []struct {
		tool  string
		param string
		base  map[string]any
		okFor map[any]bool
	}{
		{"list_conversations", "limit", nil, map[any]bool{"50": true}},
		{"list_conversations", "days", nil, map[any]bool{"50": true}},
		{"get_conversation_messages", "limit", map[string]any{"chat": "Alex Hostile"}, map[any]bool{"50": true}},
		{"search_messages", "limit", map[string]any{"query": "meetup"}, map[any]bool{"50": true}},
		{"search_messages", "days", map[string]any{"query": "meetup"}, map[any]bool{"50": true}},
		{"search_messages", "context", map[string]any{"query": "meetup"}, map[any]bool{0: true, "50": true}},
		{"review_messages", "days", nil, map[any]bool{"50": true}},
		{"review_messages", "context", nil, map[any]bool{"50": true}},
		{"get_response_stats", "hours", map[string]any{"chat": "Camille Durand"}, map[any]bool{"50": true}},
	}
	for _, tt := range tests {
		for _, v := range adversarial {
			t.Run(fmt.Sprintf("%s.%s=%v", tt.tool, tt.param, v), func(t *testing.T) {
				args := map[string]any{tt.param: v}
				for k, x := range tt.base {
					args[k] = x
				}
				r := callTool(t, cs, tt.tool, args)
				if r.isError == tt.okFor[v] {
					t.Fatalf("isError = %v, want %v: %s", r.isError, !tt.okFor[v], clipTest(r.text))
				}
				if r.isError && !strings.Contains(r.text, tt.param) {
					t.Errorf("error does not name the parameter: %q", r.text)
				}
			})
		}
	}
	// Timestamps: the same table for before_timestamp, where a date is
	// valid and numbers are not.
	for _, v := range []string{"-1", "0", "1e308", "50", "nan", "9223372036854775808", "9999-12-31", "2026-11-30T09:00:00Z", "2026-11-30"} {
		r := callTool(t, cs, "get_conversation_messages", map[string]any{"chat": "Alex Hostile", "before_timestamp": v})
		valid := strings.HasPrefix(v, "20") || strings.HasPrefix(v, "9999")
		if r.isError == valid {
			t.Errorf("before_timestamp %q: isError = %v (%s)", v, r.isError, clipTest(r.text))
		}
	}
	// The server is still alive and answering.
	ok(t, cs, "list_conversations", nil, nil)
}

func TestSaveAttachment(t *testing.T) {
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true})
	cs, _ := toolSession(t, env, Filters{})
	dest := filepath.Join(env.Files, "climb.png")
	var saved struct {
		Destination string `json:"destination"`
		Bytes       int64  `json:"bytes"`
		Format      string `json:"format"`
		Width       int    `json:"width"`
		Overwrote   bool   `json:"overwrote"`
	}
	ok(t, cs, "save_attachment", map[string]any{"attachment_id": "1", "destination": dest}, &saved)
	fi, err := os.Stat(dest)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != saved.Bytes || saved.Format != "png" || saved.Width != 3 {
		t.Fatalf("saved %+v, file %v %v", saved, fi, err)
	}
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": "1", "destination": dest}, "already exists", "overwrite")
	ok(t, cs, "save_attachment", map[string]any{"attachment_id": "1", "destination": dest, "overwrite": true}, &saved)
	if !saved.Overwrote {
		t.Error("overwrite not reported")
	}
	outside := t.TempDir()
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": "1", "destination": filepath.Join(outside, "x.png")}, "outside the folders")
	// A symlinked folder inside the allowed one that points outside.
	link := filepath.Join(env.Files, "escape")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": "1", "destination": filepath.Join(link, "x.png")}, "outside the folders")
	if _, err := os.Stat(filepath.Join(outside, "x.png")); err == nil {
		t.Fatal("a file was written outside the allowed folders")
	}
	// A symlink as the destination file is refused even with overwrite.
	target := filepath.Join(outside, "victim.txt")
	os.WriteFile(target, []byte("keep"), 0o600)
	os.Symlink(target, filepath.Join(env.Files, "trap.png"))
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": "1", "destination": filepath.Join(env.Files, "trap.png"), "overwrite": true}, "symbolic link")
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatal("the symlink's target was overwritten")
	}
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": "1", "destination": "relative/x.png"}, "absolute")
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": "1", "destination": filepath.Join(env.Files, "missing", "x.png")}, "does not exist")
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": "2", "destination": filepath.Join(env.Files, "lease.pdf")}, "not an image")
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": "3", "destination": filepath.Join(env.Files, "fake.png")}, "not a PNG, JPEG, GIF or HEIC")
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": "4", "destination": filepath.Join(env.Files, "b.png")}, "not found")
	failsWith(t, cs, "save_attachment", map[string]any{"attachment_id": "999", "destination": filepath.Join(env.Files, "c.png")}, "not found")
	entries, _ := os.ReadDir(env.Files)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tidings-save") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	// Without file_dirs the tool is not registered at all.
	cs2, srv := toolSession(t, env, Filters{Profile: &Profile{Access: "write", AllowExternal: true}})
	if slices.Contains(srv.Selection.Names(), "save_attachment") {
		t.Error("save_attachment registered without file_dirs")
	}
	if r, err := cs2.CallTool(context.Background(), &mcp.CallToolParams{Name: "save_attachment", Arguments: map[string]any{}}); err == nil && !r.IsError {
		t.Error("unregistered save_attachment answered")
	}
	// Read-only mode removes it too.
	_, srv = toolSession(t, env, Filters{ReadOnly: true})
	if slices.Contains(srv.Selection.Names(), "save_attachment") {
		t.Error("save_attachment registered in read-only mode")
	}
}
