package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/bridge"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// startHelper runs `tidings helper --watch` in-process until the test ends.
func startHelper(t *testing.T, env map[string]string, args ...string) {
	t.Helper()
	m, _, stderr := testMain(t, env)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, append([]string{"helper", "--watch"}, args...)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("helper: %v\n%s", err, stderr)
		}
	})
}

// bridgeCall runs `tidings bridge call` and decodes the printed response.
func bridgeCall(t *testing.T, dir string, args ...string) (map[string]any, error) {
	t.Helper()
	m, out, _ := testMain(t, nil)
	err := m.Run(context.Background(), append([]string{"bridge", "call", "--bridge-dir", dir, "--timeout", "10s"}, args...))
	var got map[string]any
	if out.Len() > 0 {
		if jerr := json.Unmarshal(out.Bytes(), &got); jerr != nil {
			t.Fatalf("bridge call printed non-JSON: %v\n%s", jerr, out)
		}
	}
	return got, err
}

func demoData(t *testing.T) *demo.Result {
	t.Helper()
	res, err := demo.Generate(context.Background(), demo.Options{Dir: t.TempDir(), Messages: demo.MinMessages(),
		Now: testclock.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestHelperManagerBridge: a manager helper over the demo chat.db lists
// chats through `tidings bridge call`, and refuses body-returning actions.
func TestHelperManagerBridge(t *testing.T) {
	data := demoData(t)
	dir := filepath.Join(t.TempDir(), "bridge")
	startHelper(t, map[string]string{bridge.RoleEnv: "manager", "TIDINGS_NOW": anchorRFC3339},
		"--bridge-dir", dir, "--imessage", data.ChatDB, "--contacts", data.Contacts)
	waitBridge(t, dir)

	st, err := bridgeCall(t, dir, "status", "--protocol", "1.2")
	if err != nil {
		t.Fatal(err)
	}
	if st["bridge_role"] != "manager" || st["protocol_version"] != "1.2" || st["checks"].(map[string]any)["database"] != true {
		t.Errorf("status = %v", st)
	}
	got, err := bridgeCall(t, dir, "list_chats", `{"days": 3650, "limit": 5}`)
	if err != nil {
		t.Fatal(err)
	}
	chats, _ := got["chats"].([]any)
	if got["ok"] != true || len(chats) != 5 || got["truncated"] != true {
		t.Fatalf("list_chats = %v", got)
	}
	if first := chats[0].(map[string]any); first["label"] == "" || first["last_activity_date"] == "" {
		t.Errorf("first chat = %v", first)
	}
	got, err = bridgeCall(t, dir, "search", `{"term": "dinner"}`)
	var re *bridge.RemoteError
	if !errors.As(err, &re) || got["error"] != bridge.ErrTextNotPermitted {
		t.Errorf("manager search: %v %v", got, err)
	}
	if _, err := bridgeCall(t, dir, "list_chats", `{"days": 4000}`); err == nil || !strings.Contains(err.Error(), "days must be") {
		t.Errorf("days out of bounds: %v", err)
	}
}

// TestHelperInvalidRoleServesNothing: an unknown IMESSAGE_BRIDGE_ROLE
// answers every request with an error and never opens chat.db.
func TestHelperInvalidRoleServesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bridge")
	missing := filepath.Join(t.TempDir(), "never-opened.db")
	startHelper(t, map[string]string{bridge.RoleEnv: "superuser"}, "--bridge-dir", dir, "--imessage", missing)
	waitBridge(t, dir)
	got, err := bridgeCall(t, dir, "status")
	if err == nil || got["ok"] != false || !strings.Contains(got["error"].(string), "IMESSAGE_BRIDGE_ROLE") {
		t.Errorf("status under an invalid role: %v %v", got, err)
	}
	if list, _ := got["allowed_actions"].([]any); list == nil || len(list) != 0 {
		t.Errorf("allowed_actions = %v", got["allowed_actions"])
	}
}

func TestBridgeCallTimeout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bridge")
	if err := bridge.PrepareFolder(dir); err != nil {
		t.Fatal(err)
	}
	m, _, _ := testMain(t, nil)
	err := m.Run(context.Background(), []string{"bridge", "call", "status", "--bridge-dir", dir, "--timeout", "150ms"})
	if !errors.Is(err, bridge.ErrTimeout) || !strings.Contains(err.Error(), "not running") {
		t.Errorf("err = %v", err)
	}
}

func TestBridgeCommandUsage(t *testing.T) {
	var ue usageError
	for _, args := range [][]string{
		{"bridge", "frob"},
		{"bridge", "call"},
		{"bridge", "call", "status", "[1]"},
		{"bridge", "call", "status", "--protocol", "2.0"},
		{"helper", "--once", "--watch"},
		{"helper", "extra"},
		{"bridge", "install", "--mode", "daemon", "--dry-run"},
	} {
		m, _, _ := testMain(t, nil)
		if err := m.Run(context.Background(), args); !errors.As(err, &ue) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}

// TestBridgeInstallDryRun renders the service files with the exact binary
// and the data flags passed through.
func TestBridgeInstallDryRun(t *testing.T) {
	m, out, _ := testMain(t, nil)
	chat := filepath.Join(t.TempDir(), "chat.db")
	if err := m.Run(context.Background(), []string{"bridge", "install", "--dry-run", "--mode", "once", "--imessage", chat}); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	for _, want := range []string{exe, "--imessage", chat, "--once"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if !bytes.Contains(out.Bytes(), []byte("PathExistsGlob=")) && !bytes.Contains(out.Bytes(), []byte("<key>WatchPaths</key>")) {
		t.Errorf("no trigger in:\n%s", out)
	}
}

// waitBridge waits until a starting helper has made the folders a client
// opens: its requests and its responses folder (made one after the other,
// so waiting for the first alone raced the client under load).
func waitBridge(t *testing.T, dir string) {
	t.Helper()
	waitDir(t, filepath.Join(dir, "control", "requests"))
	waitDir(t, filepath.Join(dir, "control", "responses"))
}

func waitDir(t *testing.T, p string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", p)
}

// TestHelperHostSend: a host helper previews through the real send gate
// (nonce in the bridge folder's nonces/) and, on a system without
// Messages, refuses the send with the gate's sentence.
func TestHelperHostSend(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bridge")
	startHelper(t, map[string]string{"DISPLAY": ""}, "--bridge-dir", dir)
	waitBridge(t, dir)
	pv, err := bridgeCall(t, dir, "send_preview", `{"to": "+1 415 555 1234", "text": "Confirmed for 3pm."}`, "--protocol", "1.2")
	if err != nil {
		t.Fatal(err)
	}
	nonce, _ := pv["send_nonce"].(string)
	if pv["ok"] != true || nonce == "" || pv["preview"].(map[string]any)["text_length"] != 18.0 {
		t.Fatalf("preview = %v", pv)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "nonces")); err != nil || len(ents) != 1 {
		t.Errorf("nonce files in the bridge folder: %v %v", ents, err)
	}
	got, err := bridgeCall(t, dir, "send", `{"to": "+1 415 555 1234", "text": "Confirmed for 3pm.", "send_nonce": "`+nonce+`"}`)
	if err == nil || got["ok"] != false {
		t.Fatalf("send on Linux must be refused: %v", got)
	}
	if got, _ := bridgeCall(t, dir, "send", `{"to": "+14155551234", "text": "x"}`); got["error"] != "send gate: missing nonce; call send_preview first" {
		t.Errorf("missing nonce: %v", got)
	}
}

// mcpSession drives `tidings serve` over in-process pipes.
type mcpSession struct {
	t    *testing.T
	in   io.WriteCloser
	sc   *bufio.Scanner
	done chan error
	id   int
}

func startServe(t *testing.T, env map[string]string, args ...string) *mcpSession {
	t.Helper()
	m, _, stderr := testMain(t, env)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	m.Stdin, m.Stdout = inR, outW
	s := &mcpSession{t: t, in: inW, done: make(chan error, 1)}
	go func() { s.done <- m.Run(context.Background(), append([]string{"serve"}, args...)); outW.Close() }()
	s.sc = bufio.NewScanner(outR)
	s.sc.Buffer(nil, 8<<20)
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("serve: %v\n%s", err, stderr)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("serve did not exit")
		}
	})
	return s
}

// call sends tools/call and returns the structured content (and isError).
func (s *mcpSession) call(name string, args map[string]any) (map[string]any, bool) {
	s.t.Helper()
	s.id++
	a, _ := json.Marshal(args)
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`+"\n", s.id, name, a, modernMeta)
	got := make(chan bool, 1)
	go func() {
		if _, err := io.WriteString(s.in, line); err != nil {
			got <- false
			return
		}
		got <- s.sc.Scan()
	}()
	select {
	case ok := <-got:
		if !ok {
			s.t.Fatalf("no response to %s", name)
		}
	case err := <-s.done:
		s.done <- err
		s.t.Fatalf("serve exited before answering %s: %v", name, err)
	case <-time.After(30 * time.Second):
		s.t.Fatalf("no response to %s within 30 s", name)
	}
	var resp struct {
		Result struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
			Content           []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal(s.sc.Bytes(), &resp); err != nil || resp.Error != nil {
		s.t.Fatalf("%s: %v %s", name, err, s.sc.Bytes())
	}
	if resp.Result.IsError && resp.Result.StructuredContent == nil && len(resp.Result.Content) > 0 {
		return map[string]any{"error": resp.Result.Content[0].Text}, true
	}
	return resp.Result.StructuredContent, resp.Result.IsError
}

// TestServeBridge: `tidings serve --bridge DIR` answers through the helper
// and never opens the chat.db or index.db it is configured with.
func TestServeBridge(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the open-tracking part uses inotify")
	}
	data := demoData(t)
	// The helper reads its own copy; the server is configured with the
	// original, which nothing may open.
	helperDB := filepath.Join(t.TempDir(), "chat.db")
	raw, err := os.ReadFile(data.ChatDB)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helperDB, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	serveHome := filepath.Join(t.TempDir(), "home")
	os.MkdirAll(serveHome, 0o700)
	serveIndex := filepath.Join(serveHome, "index.db")
	os.WriteFile(serveIndex, []byte("not opened"), 0o600)
	opens := watchOpens(t, data.ChatDB, serveIndex)

	dir := filepath.Join(t.TempDir(), "bridge")
	startHelper(t, map[string]string{"DISPLAY": ""}, "--bridge-dir", dir, "--imessage", helperDB)
	waitBridge(t, dir)
	s := startServe(t, map[string]string{"TIDINGS_HOME": serveHome, "TIDINGS_IMESSAGE": data.ChatDB, "ENABLE_MCP_SEND_MESSAGE": "true"},
		"--bridge", dir)

	st, isErr := s.call("get_status", map[string]any{})
	if isErr {
		t.Fatalf("get_status: %v", st)
	}
	if ds := st["data_set"].(map[string]any); ds["kind"] != "bridge" {
		t.Errorf("data_set = %v", ds)
	}
	src := st["sources"].([]any)
	if len(src) != 1 || src[0].(map[string]any)["kind"] != "bridge" || src[0].(map[string]any)["found"] != true {
		t.Errorf("sources = %v", src)
	}
	checks, _ := json.Marshal(st["checks"])
	if !strings.Contains(string(checks), `"name":"bridge helper","status":"ok"`) || !strings.Contains(string(checks), "bridge helper: database") {
		t.Errorf("checks = %s", checks)
	}
	pv, isErr := s.call("preview_message", map[string]any{"recipient": "+1 415 555 1234", "text": "Confirmed for 3pm."})
	if isErr || pv["send_nonce"] == "" || pv["preview"].(map[string]any)["text_length"] != 18.0 {
		t.Fatalf("preview_message over the bridge: %v", pv)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "nonces")); len(ents) != 1 {
		t.Errorf("the nonce was not minted by the helper: %v", ents)
	}
	if got := opens(); len(got) > 0 {
		t.Errorf("serve --bridge opened its configured data: %v", got)
	}
}

// callRaw sends tools/call and returns the raw result object.
func (s *mcpSession) callRaw(name string, args map[string]any) json.RawMessage {
	s.t.Helper()
	s.id++
	a, _ := json.Marshal(args)
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`+"\n", s.id, name, a, modernMeta)
	got := make(chan bool, 1)
	go func() {
		if _, err := io.WriteString(s.in, line); err != nil {
			got <- false
			return
		}
		got <- s.sc.Scan()
	}()
	select {
	case ok := <-got:
		if !ok {
			s.t.Fatalf("no response to %s", name)
		}
	case <-time.After(60 * time.Second):
		s.t.Fatalf("no response to %s within 60 s", name)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(s.sc.Bytes(), &resp); err != nil || resp.Error != nil {
		s.t.Fatalf("%s: %v %s", name, err, s.sc.Bytes())
	}
	return resp.Result
}

// TestServeBridgeMatchesInProcess runs the MCP message tools against one
// fixture twice — in-process (`serve` over its own index) and through the
// bridge (`serve --bridge` → helper → the helper's index) — and requires
// byte-identical tool results (structured content, text and isError) for
// calls inside the bridge's 90-day read window; for calls reaching past it
// the bridge answers exactly the in-process answer cut to the window, and
// says so (search note, an error for a page before the window).
func TestServeBridgeMatchesInProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two indexes of the demo data")
	}
	data := demoData(t)
	now := anchorRFC3339
	var person string
	for _, st := range data.Stories {
		if len(st.With) == 1 {
			person = st.With[0]
			break
		}
	}
	if person == "" {
		t.Fatal("no one-to-one story in the demo data")
	}

	// In-process: index the demo data, then serve it.
	home1 := filepath.Join(t.TempDir(), "home1")
	env1 := map[string]string{"TIDINGS_HOME": home1, "TIDINGS_NOW": now}
	m, _, stderr := testMain(t, env1)
	if err := m.Run(context.Background(), []string{"index", "--imessage", data.ChatDB, "--contacts", data.Contacts}); err != nil {
		t.Fatalf("index: %v\n%s", err, stderr)
	}
	local := startServe(t, env1, "--imessage", data.ChatDB, "--contacts", data.Contacts)

	// Bridge: the helper indexes the same data into its own index.
	dir := filepath.Join(t.TempDir(), "bridge")
	startHelper(t, map[string]string{"TIDINGS_HOME": filepath.Join(t.TempDir(), "home2"), "TIDINGS_NOW": now, "DISPLAY": ""},
		"--bridge-dir", dir, "--imessage", data.ChatDB, "--contacts", data.Contacts)
	waitBridge(t, dir)
	remote := startServe(t, map[string]string{"TIDINGS_HOME": filepath.Join(t.TempDir(), "home3"), "TIDINGS_NOW": now}, "--bridge", dir)

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"list_conversations", map[string]any{"limit": 10}},
		{"list_conversations", map[string]any{"limit": 5, "query": person}},
		{"get_conversation_messages", map[string]any{"chat": person, "limit": 5}},
		{"get_conversation_messages", map[string]any{"chat": "nobody-by-this-name"}},
		{"search_messages", map[string]any{"query": "dinner", "days": 90}},
		{"search_messages", map[string]any{"query": "dinner", "mode": "substring", "limit": 5, "days": 60}},
		{"search_messages", map[string]any{"query": "when are we meeting", "mode": "fulltext", "days": 30}},
		{"get_response_stats", map[string]any{"chat": person, "hours": 720}},
		{"lookup_contacts", map[string]any{"name": person}},
		{"get_contact_dossier", map[string]any{"contact_id": person}},
		{"search_messages", map[string]any{"query": "x", "limit": "lots"}},
	}
	for _, c := range calls {
		l := local.callRaw(c.tool, c.args)
		r := remote.callRaw(c.tool, c.args)
		var lv, rv any
		json.Unmarshal(l, &lv)
		json.Unmarshal(r, &rv)
		lb, _ := json.Marshal(lv)
		rb, _ := json.Marshal(rv)
		if !bytes.Equal(lb, rb) {
			t.Errorf("%s %v differs:\n in-process %s\n bridge     %s", c.tool, c.args, clip(lb), clip(rb))
		} else if len(lb) < 60 {
			t.Errorf("%s %v: suspiciously small result %s", c.tool, c.args, lb)
		}
		t.Logf("%s %v: %d bytes, %s", c.tool, c.args, len(lb), clip(lb)[:min(len(lb), 160)])
	}

	// The bridge's read window (docs/bridge.md, "Actions and parameters":
	// 90 days for search and chat_history): a search with no days, or more than 90, answers over
	// the bridge what the in-process search answers for 90 days, and says
	// so in a note; reading a thread before the window is an error there,
	// while in-process it is a page of messages.
	for _, days := range []any{nil, 3650} {
		args := map[string]any{"query": "dinner", "mode": "substring", "limit": 5}
		if days != nil {
			args["days"] = days
		}
		in := map[string]any{"query": "dinner", "mode": "substring", "limit": 5, "days": 90}
		lsc, lerr := local.call("search_messages", in)
		rsc, rerr := remote.call("search_messages", args)
		if lerr || rerr {
			t.Fatalf("search: %v / %v", lsc, rsc)
		}
		var notes []any
		found := false
		for _, n := range rsc["notes"].([]any) {
			if n == bridge.WindowNote {
				found = true
				continue
			}
			notes = append(notes, n)
		}
		if notes == nil {
			notes = []any{}
		}
		rsc["notes"] = notes
		lb, _ := json.Marshal(lsc)
		rb, _ := json.Marshal(rsc)
		if !found || !bytes.Equal(lb, rb) || len(lsc["hits"].([]any)) == 0 {
			t.Errorf("search with days %v over the bridge (window note %v):\n in-process (90 days) %s\n bridge %s", days, found, clip(lb), clip(rb))
		}
	}
	floor := testclock.Anchor().AddDate(0, 0, -90).Format(time.RFC3339) // the read window's start
	old := map[string]any{"chat": person, "limit": 5, "before_timestamp": testclock.Text(time.RFC3339, "2026-08-01T00:00:00Z")}
	if pg, isErr := local.call("get_conversation_messages", old); isErr || pg["count"].(float64) < 1 {
		t.Errorf("in-process, 4 months back: %v", pg)
	}
	if pg, isErr := remote.call("get_conversation_messages", old); !isErr || !strings.Contains(fmt.Sprint(pg["error"]), "outside the read window of the last 90 days") {
		t.Errorf("over the bridge, 4 months back: %v (isError %v)", pg, isErr)
	}
	// A whole thread: the bridge returns the in-process page's messages
	// inside the window, says older ones exist, and refuses the next page.
	whole := map[string]any{"chat": person, "limit": 200}
	lpg, _ := local.call("get_conversation_messages", whole)
	rpg, isErr := remote.call("get_conversation_messages", whole)
	var inWindow, all []string
	for _, m := range lpg["messages"].([]any) {
		mm := m.(map[string]any)
		all = append(all, mm["id"].(string))
		if mm["ts"].(string) >= floor {
			inWindow = append(inWindow, mm["id"].(string))
		}
	}
	var got []string
	for _, m := range rpg["messages"].([]any) {
		got = append(got, m.(map[string]any)["id"].(string))
	}
	if isErr || len(inWindow) == len(all) || strings.Join(got, ",") != strings.Join(inWindow, ",") || rpg["more"] != true {
		t.Fatalf("thread over the bridge: %d messages (more %v), want the %d of %d in the window", len(got), rpg["more"], len(inWindow), len(all))
	}
	next, isErr := remote.call("get_conversation_messages", map[string]any{"chat": person, "cursor": rpg["next_cursor"]})
	if !isErr || !strings.Contains(fmt.Sprint(next["error"]), "outside the read window") {
		t.Errorf("the page before the window over the bridge: %v", next)
	}
	// Review: a thread active in the window carries earlier messages as
	// context; over the bridge those older than the window are left out.
	lrv, _ := local.call("review_messages", map[string]any{"days": 14})
	rrv, _ := remote.call("review_messages", map[string]any{"days": 14})
	dropped := 0
	for _, bucket := range []string{"needs_reply", "low_priority"} {
		for _, th := range lrv[bucket].([]any) {
			tm := th.(map[string]any)
			var kept []any
			for _, c := range tm["context"].([]any) {
				if c.(map[string]any)["ts"].(string) >= floor {
					kept = append(kept, c)
				} else {
					dropped++
				}
			}
			if kept == nil {
				kept = []any{}
			}
			tm["context"] = kept
		}
	}
	lb, _ := json.Marshal(lrv)
	rb, _ := json.Marshal(rrv)
	if dropped == 0 || !bytes.Equal(lb, rb) {
		t.Errorf("review over the bridge (%d old context messages in-process):\n in-process minus old context %s\n bridge %s", dropped, clip(lb), clip(rb))
	}
}

func clip(b []byte) string {
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}

// keySet returns an object's sorted keys.
func keySet(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// TestHelperHostActions: protocol 1.2's data actions on a host helper over
// the demo data answer with the documented shapes from the query layer,
// under the bridge folder's read policy (a blocked thread never shows).
func TestHelperHostActions(t *testing.T) {
	data := demoData(t)
	dir := filepath.Join(t.TempDir(), "bridge")
	if err := bridge.PrepareFolder(dir); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "contacts"), 0o700)
	if err := os.WriteFile(filepath.Join(dir, "contacts", "blocked_chats.txt"), []byte("# landlord\n+1 (415) 555-0171\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startHelper(t, map[string]string{"TIDINGS_NOW": anchorRFC3339, "DISPLAY": ""},
		"--bridge-dir", dir, "--imessage", data.ChatDB, "--contacts", data.Contacts)
	var all bytes.Buffer
	call := func(action, params string) map[string]any {
		t.Helper()
		got, err := bridgeCall(t, dir, action, params, "--protocol", "1.2")
		rest := map[string]any{}
		for k, v := range got {
			if k != "term" && k != "query" && k != "chat_query" { // echoes of the question
				rest[k] = v
			}
		}
		b, _ := json.Marshal(rest)
		all.Write(b)
		if err != nil {
			t.Fatalf("%s %s: %v", action, params, err)
		}
		return got
	}
	isTS := func(s any) bool {
		str, _ := s.(string)
		_, err := time.ParseInLocation("2006-01-02T15:04:05", str, time.Local)
		return err == nil
	}

	rv := call("review", `{"days": 14}`)
	if keySet(rv) != "action,counts,days,id,low_priority,needs_reply,ok,skip_summary" || rv["days"] != 14.0 {
		t.Errorf("review keys = %s", keySet(rv))
	}
	for _, e := range append(rv["needs_reply"].([]any), rv["low_priority"].([]any)...) {
		th := e.(map[string]any)
		if keySet(th) != "chat_id,contact_name,context,display_name,label,last_text,last_ts,msg_count" || !isTS(th["last_ts"]) {
			t.Errorf("review thread = %v", th)
		}
		for _, c := range th["context"].([]any) {
			if keySet(c.(map[string]any)) != "me,text,ts" {
				t.Errorf("context = %v", c)
			}
		}
	}
	for _, e := range rv["skip_summary"].([]any) {
		if keySet(e.(map[string]any)) != "chat_id,label,last_ts" {
			t.Errorf("skip entry = %v", e)
		}
	}

	sr := call("search", `{"term": "RAMEN", "days": 90}`)
	ms := sr["matches"].([]any)
	if sr["match_count"] != float64(len(ms)) || len(ms) == 0 || sr["term"] != "RAMEN" {
		t.Fatalf("search = %v", sr)
	}
	for _, m := range ms {
		mm := m.(map[string]any)
		if keySet(mm) != "chat_id,contact_name,is_from_me,text,ts" || !strings.Contains(strings.ToLower(mm["text"].(string)), "ramen") || !isTS(mm["ts"]) {
			t.Errorf("match = %v", mm)
		}
		if mm["chat_id"] == "+14155550147" && mm["is_from_me"] == false && mm["contact_name"] != "Jordan Kim" {
			t.Errorf("contact_name = %v", mm)
		}
	}
	if blocked := call("search", `{"term": "plumber"}`); blocked["match_count"] != 0.0 {
		t.Errorf("a blocked thread was searched: %v", blocked)
	}

	ch := call("chat_history", `{"chat": "Jordan Kim", "days": 90, "limit": 50}`)
	msgs := ch["messages"].([]any)
	if keySet(ch) != "action,chat_query,count,id,messages,ok,resolved_substr" || ch["resolved_substr"] != "4155550147" || len(msgs) < 3 {
		t.Fatalf("chat_history = %v", ch)
	}
	last := ""
	for _, m := range msgs {
		mm := m.(map[string]any)
		if mm["ts"].(string) < last || mm["chat_id"] != "+14155550147" {
			t.Errorf("chat_history order or chat_id: %v", mm)
		}
		last = mm["ts"].(string)
		if mm["is_from_me"] == true && mm["contact_name"] != "" {
			t.Errorf("my message has a contact_name: %v", mm)
		}
	}
	if got, err := bridgeCall(t, dir, "chat_history", `{"chat": "Marcus Webb"}`); err == nil || got["ok"] != false {
		t.Errorf("a blocked thread's history: %v", got)
	}

	st := call("response_stats", `{"chat": "Sam Rivera", "hours": 720}`)
	if keySet(st) != "action,avg_human,avg_seconds,chat_query,hours,id,max_seconds,median_seconds,min_seconds,ok,resolved_substr,sample_size,total_inbound_messages,total_outbound_messages" {
		t.Errorf("response_stats keys = %s", keySet(st))
	}

	cl := call("contacts_lookup", `{"name": "Jordan"}`)
	if cl["match_count"] != 1.0 || cl["matches"].([]any)[0].(map[string]any)["phone_last10"] != "4155550147" {
		t.Errorf("contacts_lookup = %v", cl)
	}
	if cl := call("contacts_lookup", `{"name": "Marcus"}`); cl["match_count"] != 0.0 {
		t.Errorf("a blocked person was listed: %v", cl)
	}
	// A hostile 1.3 client cannot switch the host's policy filter off.
	ext, err := bridgeCall(t, dir, "lookup_contacts", `{"Name": "Marcus", "Unfiltered": true}`, "--protocol", "1.3")
	if err != nil || ext["result"].(map[string]any)["match_count"] != 0.0 {
		t.Errorf("1.3 lookup_contacts with Unfiltered: %v %v", ext, err)
	}
	for _, s := range []string{"plumber", "Marcus", "sink", "4155550171"} {
		if strings.Contains(all.String(), s) {
			t.Errorf("the blocked thread leaked %q", s)
		}
	}
}
