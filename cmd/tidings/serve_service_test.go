package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// TestServeWiresQueryLayer runs `tidings serve` on stdio with a chat.db,
// contacts and a read policy configured, and checks that the message tools
// answer from the synced index, under the policy.
func TestServeWiresQueryLayer(t *testing.T) {
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	home := filepath.Join(t.TempDir(), "tidings")
	servicetest.WritePolicy(t, home, policy.ModeBlocklist, []string{servicetest.BlockedPhone}, nil)
	m, _, stderr := testMain(t, map[string]string{"TIDINGS_HOME": home, "TIDINGS_IMESSAGE": chatDB, "TIDINGS_CONTACTS": vcf,
		"TIDINGS_NOW": servicetest.Now.Format(time.RFC3339)})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	m.Stdin, m.Stdout = inR, outW
	done := make(chan error, 1)
	go func() { done <- m.Run(context.Background(), []string{"serve"}); outW.Close() }()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 4<<20)
	id := 0
	call := func(name string, args string) (map[string]any, bool, string) {
		t.Helper()
		id++
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`+"\n", id, name, args, modernMeta)
		if !sc.Scan() {
			t.Fatalf("no response; stderr:\n%s", stderr)
		}
		var resp struct {
			Result struct {
				IsError           bool           `json:"isError"`
				StructuredContent map[string]any `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		return resp.Result.StructuredContent, resp.Result.IsError, sc.Text()
	}
	// The first sync runs in the background: wait for it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, isErr, line := call("list_conversations", `{}`)
		if !isErr && out["count"].(float64) > 0 {
			if strings.Contains(line, servicetest.BlockedPhone) || strings.Contains(line, "SENTINEL") {
				t.Errorf("blocked thread listed: %s", line)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no conversations after 30 s: %s\nstderr:\n%s", line, stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, isErr, line := call("get_conversation_messages", `{"chat":"Camille"}`)
	msgs, _ := out["messages"].([]any)
	if isErr || len(msgs) != 2 || out["contact"] != "Camille Durand" ||
		msgs[0].(map[string]any)["text"] != "<untrusted_external_content>Salut ! On se voit à Lyon samedi ?</untrusted_external_content>" {
		t.Errorf("get_conversation_messages: %s", line)
	}
	out, isErr, line = call("search_messages", `{"query":"QZXSENTINELBODY","mode":"substring"}`)
	delete(out, "query") // the echo of the caller's own words
	if b, _ := json.Marshal(out); isErr || strings.Contains(string(b), "QZXSENTINELBODY") {
		t.Errorf("search for the sentinel: %s", line)
	}
	out, _, line = call("get_status", `{}`)
	if p, _ := out["policy"].(map[string]any); p == nil || p["mode"] != "blocklist" || p["blocked_entries"].(float64) != 1 {
		t.Errorf("get_status policy: %s", line)
	}
	if s, _ := out["synced_sources"].([]any); len(s) == 0 {
		t.Errorf("get_status synced_sources: %s", line)
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after EOF: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not exit on stdin EOF")
	}
}

// TestIndexRefusesBrokenPolicy: syncing under a policy that cannot be read
// would hide (and purge) every thread, so the writable index refuses.
func TestIndexRefusesBrokenPolicy(t *testing.T) {
	dir := t.TempDir()
	chatDB, _ := servicetest.BuildFixture(t, dir)
	home := filepath.Join(t.TempDir(), "tidings")
	servicetest.WritePolicy(t, home, "sometimes", nil, nil)
	m, _, _ := testMain(t, map[string]string{"TIDINGS_HOME": home, "TIDINGS_IMESSAGE": chatDB})
	err := m.Run(context.Background(), []string{"index", "--no-embed"})
	if err == nil || !strings.Contains(err.Error(), "read policy") {
		t.Fatalf("index with a broken policy: %v", err)
	}
}
