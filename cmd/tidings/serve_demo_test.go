package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/mail"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// lukasStory returns the demo storyline about Lukas' visit (its person's
// name and the conversation guid) for the data generated at now.
func lukasStory(t *testing.T, now time.Time) demo.Story {
	t.Helper()
	for _, s := range demo.Stories(now) {
		if s.ID == "lukas-visit" {
			return s
		}
	}
	t.Fatal("no lukas-visit story in the demo data")
	return demo.Story{}
}

// checkDemoSession runs what a first session on the demo does: status,
// the conversation list, a search for a storyline and its conversation.
func checkDemoSession(t *testing.T, c *mcpClient, dataNow time.Time) {
	t.Helper()
	st := c.mustCall("get_status", nil)
	ds := st["data_set"].(map[string]any)
	if ds["kind"] != "demo" || ds["empty"] != false || !strings.Contains(ds["note"].(string), "made-up") ||
		!strings.Contains(ds["note"].(string), dataNow.Format(time.RFC3339)) {
		t.Errorf("data_set = %v", ds)
	}
	if st["now"] != dataNow.Format(time.RFC3339) {
		t.Errorf("now = %v, want the demo's clock %s", st["now"], dataNow.Format(time.RFC3339))
	}
	if ix := st["index"].(map[string]any); ix["messages"].(float64) < 15000 || ix["state"] != "ready" {
		t.Errorf("index = %v", ix)
	}
	srcs, _ := json.Marshal(st["sources"])
	if !strings.Contains(string(srcs), filepath.Join("demo", "chat.db")) || !strings.Contains(string(srcs), "contacts.vcf") {
		t.Errorf("sources = %s", srcs)
	}

	// The demo's calendar file (events and to-dos) serves the calendar
	// and reminder tools with no account configured.
	cals := c.mustCall("calendars_list", nil)
	if b := mustJSON(cals); !strings.Contains(b, `"path":"Demo/Demo"`) || !strings.Contains(b, `"read_only":true`) {
		t.Errorf("calendars_list = %s, want the read-only Demo/Demo", b)
	}
	if b := mustJSON(c.mustCall("calendars_list_events", nil)); !strings.Contains(b, "Coffee with Maya") || !strings.Contains(b, "Team standup") {
		t.Errorf("calendars_list_events (this week) = %s, want today's coffee and the standup", clip([]byte(b)))
	}
	if b := mustJSON(c.mustCall("reminders_list", nil)); !strings.Contains(b, "Renew passport") || strings.Contains(b, "Pay rent") {
		t.Errorf("reminders_list = %s, want the open demo to-dos only", clip([]byte(b)))
	}
	// The demo's vCard folder serves the contacts tools with no account,
	// both group kinds included.
	if b := mustJSON(c.mustCall("contacts_list_groups", nil)); !strings.Contains(b, `"path":"Demo/Family"`) || !strings.Contains(b, `"path":"Demo/Climbing crew"`) {
		t.Errorf("contacts_list_groups = %s, want Demo/Family and Demo/Climbing crew", b)
	}
	if b := mustJSON(c.mustCall("contacts_search", map[string]any{"query": "617 555 0192"})); !strings.Contains(b, "Linda Morgan") || !strings.Contains(b, "Demo/Family") {
		t.Errorf("contacts_search = %s, want Linda Morgan in Demo/Family", clip([]byte(b)))
	}

	story := lukasStory(t, dataNow)
	lukas := story.With[0]
	list := c.mustCall("list_conversations", map[string]any{"limit": 50})
	if list["count"].(float64) < 20 {
		t.Errorf("list_conversations: %v conversations", list["count"])
	}
	conv := listed(list, lukas)
	if conv == nil {
		t.Fatalf("%s's conversation not listed: %s", lukas, clip([]byte(mustJSON(list))))
	}
	res := c.mustCall("search_messages", map[string]any{"query": "Lukas conference San Francisco"})
	hits, _ := res["hits"].([]any)
	found := false
	for _, h := range hits[:min(5, len(hits))] {
		hm := h.(map[string]any)
		if strings.Contains(hm["text"].(string), "San Francisco for a conference") && hm["conversation"].(map[string]any)["id"] == conv["id"] {
			found = true
		}
	}
	if !found {
		t.Errorf("the Lukas storyline is not in the top 5 hits: %s", clip([]byte(mustJSON(res))))
	}
	msgs := c.mustCall("get_conversation_messages", map[string]any{"chat": lukas, "limit": 10})
	ms, _ := msgs["messages"].([]any)
	wrapped := 0
	for _, m := range ms {
		text, _ := m.(map[string]any)["text"].(string)
		if strings.HasPrefix(text, "<untrusted_external_content>") {
			wrapped++
		} else if text != "" {
			t.Errorf("an unwrapped body: %q", text)
		}
	}
	if msgs["contact"] != lukas || len(ms) != 10 || wrapped == 0 {
		t.Errorf("%s's messages: %s", lukas, clip([]byte(mustJSON(msgs))))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestServeDemoFirstUse: `tidings serve --demo` on a fresh home (no
// TIDINGS_NOW: the real clock) generates the demo data into
// $TIDINGS_HOME/demo, indexes it before answering, and serves it; a second
// start reuses it (same chat.db, same clock); a pinned TIDINGS_NOW for
// another moment regenerates it for that moment.
func TestServeDemoFirstUse(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "tidings")
	env := map[string]string{"HOME": root, "TIDINGS_HOME": home}
	c := startClient(t, env, "--demo")
	raw, err := os.ReadFile(filepath.Join(home, "demo", demoStateFile))
	if err != nil {
		t.Fatal(err)
	}
	var st demoState
	if err := json.Unmarshal(raw, &st); err != nil || st.Now.IsZero() || st.Seed != demoSeed {
		t.Fatalf("state %s: %v", raw, err)
	}
	if d := time.Since(st.Now); d < 0 || d > 5*time.Minute {
		t.Errorf("first use generated the data for %v, want about now", st.Now)
	}
	checkDemoSession(t, c, st.Now)
	for _, f := range []string{".tidings-demo", "chat.db", "contacts.vcf", "index.db"} {
		if _, err := os.Stat(filepath.Join(home, "demo", f)); err != nil {
			t.Errorf("demo folder lacks %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "index.db")); err == nil {
		t.Error("the demo was indexed into the personal index")
	}
	fi, _ := os.Stat(filepath.Join(home, "demo", "chat.db"))

	// Second start: reused as it is, with the same clock.
	c2 := startClient(t, env, "--demo")
	checkDemoSession(t, c2, st.Now)
	fi2, _ := os.Stat(filepath.Join(home, "demo", "chat.db"))
	if !fi2.ModTime().Equal(fi.ModTime()) || strings.Contains(c2.stderr.String(), "generating the demo data") {
		t.Errorf("the demo data was generated again:\n%s", c2.stderr)
	}

	// A pinned clock for another moment regenerates it for that moment.
	pinned := testclock.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	env["TIDINGS_NOW"] = pinned.Format(time.RFC3339)
	c3 := startClient(t, env, "--demo")
	checkDemoSession(t, c3, pinned)
	if !strings.Contains(c3.stderr.String(), "generating the demo data") {
		t.Errorf("a new pinned clock did not regenerate:\n%s", c3.stderr)
	}
}

// TestServeDemoKeepsUserDemo: a demo folder written by `tidings demo` is
// served as it is (not overwritten), with the real clock.
func TestServeDemoKeepsUserDemo(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "tidings")
	now := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	m, _, _ := testMain(t, map[string]string{"HOME": root, "TIDINGS_HOME": home, "TIDINGS_NOW": now.Format(time.RFC3339)})
	if err := m.Run(t.Context(), []string{"demo", "--messages", "2000"}); err != nil {
		t.Fatal(err)
	}
	c := startClient(t, map[string]string{"HOME": root, "TIDINGS_HOME": home}, "--demo")
	st := c.mustCall("get_status", nil)
	if ix := st["index"].(map[string]any); ix["messages"].(float64) < 1500 || ix["messages"].(float64) > 2000 {
		t.Errorf("index = %v, want the 2,000-message demo tidings demo wrote", ix)
	}
	if note := st["data_set"].(map[string]any)["note"].(string); !strings.Contains(note, "by `tidings demo`") || !strings.Contains(note, "real one") {
		t.Errorf("note = %q", note)
	}
	if strings.Contains(c.stderr.String(), "generating the demo data") {
		t.Errorf("serve --demo overwrote the folder tidings demo wrote:\n%s", c.stderr)
	}
}

// TestServeDemoBridgeExclusive: --demo with --bridge is a usage error.
func TestServeDemoBridgeExclusive(t *testing.T) {
	m, _, _ := testMain(t, nil)
	err := m.Run(t.Context(), []string{"serve", "--demo", "--bridge", t.TempDir()})
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "exclude each other") {
		t.Errorf("err = %v", err)
	}
}

// TestServeNoDataExplains: with no flags and no data (a Linux machine),
// get_status says how to get some.
func TestServeNoDataExplains(t *testing.T) {
	c := startClient(t, nil)
	ds := c.mustCall("get_status", nil)["data_set"].(map[string]any)
	note, _ := ds["note"].(string)
	if ds["empty"] != true {
		t.Errorf("data_set = %v", ds)
	}
	for _, want := range []string{"tidings serve --demo", "--imessage PATH", "--ios-backup DIR", "--android-xml FILE", "tidings doctor"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q: %s", want, note)
		}
	}
	r := c.call("list_conversations", nil)
	if !r.IsErr || !strings.Contains(r.Text, "no message index") {
		t.Errorf("list_conversations without data: %v %s", r.IsErr, r.Text)
	}
}

// TestServeDemoProcess runs the README's first command as a process on a
// fresh machine (only HOME and PATH set): `go run ./cmd/tidings serve
// --demo` is this binary with these arguments. A raw client lists
// conversations and finds a storyline.
func TestServeDemoProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and generates the demo data")
	}
	bin := tidingsBinary(t)
	home := t.TempDir()
	cmd := exec.Command(bin, "serve", "--demo")
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("exit: %v\n%s", err, stderr.String())
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Error("serve --demo did not exit at stdin EOF")
		}
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 4<<20)
	id := 0
	call := func(name string, args string) map[string]any {
		t.Helper()
		id++
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`+"\n", id, name, args, modernMeta)
		if !sc.Scan() {
			t.Fatalf("no answer to %s; stderr:\n%s", name, stderr.String())
		}
		var resp struct {
			Result struct {
				IsError           bool           `json:"isError"`
				StructuredContent map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &resp); err != nil || resp.Result.IsError {
			t.Fatalf("%s: %v %s", name, err, sc.Bytes())
		}
		return resp.Result.StructuredContent
	}
	if ds := call("get_status", `{}`)["data_set"].(map[string]any); ds["kind"] != "demo" || ds["empty"] != false {
		t.Errorf("data_set = %v", ds)
	}
	if list := call("list_conversations", `{"limit": 50}`); list["count"].(float64) < 20 {
		t.Errorf("list_conversations = %v", list["count"])
	}
	res := call("search_messages", `{"query": "Union Square", "mode": "fulltext"}`)
	if !strings.Contains(mustJSON(res), "staying near Union Square") {
		t.Errorf("search: %s", clip([]byte(mustJSON(res))))
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "tidings", "demo", "chat.db")); err != nil {
		t.Errorf("demo data not in the default TIDINGS_HOME: %v", err)
	}
}

// TestServeDemoSearchesMail: `serve --demo` registers mail_search and
// syncs the demo Maildir into the demo index on start (docs/index.md,
// "When mail is synced"), so a first search finds a demo mail.
func TestServeDemoSearchesMail(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "tidings")
	c := startClient(t, map[string]string{"HOME": root, "TIDINGS_HOME": home}, "--demo")
	if !hasAll(c.toolNames(), "mail_search") {
		t.Fatalf("mail_search is not registered in demo mode: %v", c.toolNames())
	}
	r := c.waitFor("mail_search", map[string]any{"query": "invoice"}, func(r callResult) bool {
		hits, _ := r.Out["hits"].([]any)
		return !r.IsErr && len(hits) > 0
	})
	hit := r.Out["hits"].([]any)[0].(map[string]any)
	if hit["subject"] != "Invoice attached" || hit["account"] != "Demo" {
		t.Fatalf("first hit %v, want the demo invoice mail", hit)
	}
}

// TestServeMailSyncFailureIsAStatusNote: an account whose server cannot
// be reached does not stop serve; the other account still syncs, and
// get_status names the failed one in the index note (docs/index.md,
// "When mail is synced").
func TestServeMailSyncFailureIsAStatusNote(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "tidings")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	md, err := mail.WriteDemo(root)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port nothing listens on once closed
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	conf := fmt.Sprintf("[[mail.accounts]]\nname = \"Down\"\nimap = \"imap://%s\"\nusername = \"me\"\npassword_env = \"TIDINGS_TEST_PW\"\n\n"+
		"[[mail.accounts]]\nname = \"Local\"\nmaildir = %q\nfrom = [\"me@example.com\"]\n", addr, md)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startClient(t, map[string]string{"HOME": root, "TIDINGS_HOME": home, "TIDINGS_TEST_PW": "pw"})
	c.waitFor("mail_search", map[string]any{"query": "invoice"}, func(r callResult) bool {
		hits, _ := r.Out["hits"].([]any)
		return !r.IsErr && len(hits) > 0 && hits[0].(map[string]any)["subject"] == "Invoice attached"
	})
	c.waitFor("get_status", nil, func(r callResult) bool {
		ix, _ := r.Out["index"].(map[string]any)
		note, _ := ix["note"].(string)
		return strings.Contains(note, "mail sync failed for account Down")
	})
}
