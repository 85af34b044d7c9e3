package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mail"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// writeChatDB builds a small chat.db from the real macOS 15 schema.
func writeChatDB(t *testing.T) string {
	t.Helper()
	ddl, err := schemas.DDL("macos15")
	if err != nil {
		t.Fatal(err)
	}
	db, path := chatdb.CreateForTest(t, ddl)
	defer db.Close()
	w := chatdb.ForTest(t, db)
	h := w.Handle(chatdb.Handle{ID: "+14155550101", Service: "iMessage"})
	c := w.Chat(chatdb.Chat{GUID: "iMessage;-;+14155550101", Style: 45, Identifier: "+14155550101", Service: "iMessage", Handles: []int64{h}})
	for i, m := range []struct {
		text   string
		fromMe bool
	}{{"Dinner at Café Rouge on Saturday?", false}, {"Sounds great, book a table", true}, {"you still owe me $40 for the tix", false}} {
		sender := h
		if m.fromMe {
			sender = 0
		}
		w.Message(chatdb.Message{GUID: "G" + string(rune('1'+i)), Text: m.text, Handle: sender, Service: "iMessage",
			Date: chatdb.Nanos(testclock.Date(2026, 11, 20+i, 9, 0, 0, 0, time.UTC)), FromMe: m.fromMe, Chats: []int64{c}})
	}
	return path
}

func TestIndexAndSearchCommands(t *testing.T) {
	chat := writeChatDB(t)
	vcf := filepath.Join(t.TempDir(), "people.vcf")
	os.WriteFile(vcf, []byte("BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Sam Rivera\r\nN:Rivera;Sam;;;\r\nTEL:(415) 555-0101\r\nEND:VCARD\r\n"), 0o600)
	env := map[string]string{"TIDINGS_NOW": anchorRFC3339}
	m, out, errb := testMain(t, env)
	ctx := context.Background()
	if err := m.Run(ctx, []string{"index", "--imessage", chat, "--contacts", vcf}); err != nil {
		t.Fatalf("index: %v\n%s", err, errb)
	}
	if !strings.Contains(out.String(), "3 new") || !strings.Contains(out.String(), "3 messages in 1 conversations") {
		t.Fatalf("index output:\n%s", out)
	}
	if strings.Contains(errb.String(), "\r") {
		t.Errorf("progress drawn although stderr is not a terminal: %q", errb)
	}
	// Human output.
	out.Reset()
	if err := m.Run(ctx, []string{"search", "dinner", "--mode", "fulltext"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Sam Rivera", "Dinner at Café Rouge", "1 result(s), mode fulltext, scan complete"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("search output lacks %q:\n%s", want, out)
		}
	}
	// JSON, flags after the query, a contact filter by name.
	out.Reset()
	if err := m.Run(ctx, []string{"search", "owe", "me", "--json", "--contact", "Sam", "--mode", "substring"}); err != nil {
		t.Fatal(err)
	}
	var res service.SearchResult // the query layer's answer, as search_messages gives it
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(res.Hits) != 1 || res.Hits[0].MessageID != "G3" || !res.ScanComplete || res.Hits[0].Sender != "Sam Rivera" {
		t.Fatalf("json result: %+v", res)
	}
	// A second run adds nothing.
	out.Reset()
	if err := m.Run(ctx, []string{"index", "--imessage", chat}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0 new") {
		t.Errorf("second index run:\n%s", out)
	}
	// Mistakes are usage errors with a sentence. (A bare `index` in this
	// home reloads the contacts the first run remembered, so "nothing to
	// index" is asked of a fresh home.)
	var ue usageError
	fresh, _, _ := testMain(t, nil)
	for _, args := range [][]string{{"search"}, {"search", "x", "--mode", "fuzzy"}, {"index"}, {"index", "stray"}} {
		mm := m
		if args[0] == "index" {
			mm = fresh
		}
		if err := mm.Run(ctx, args); !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	// Doctor sees the index.
	res2 := checkIndex(ctx, mustConfig(t, m))
	if len(res2) != 1 || res2[0].Status != "ok" || !strings.Contains(res2[0].Detail, "3 messages") {
		t.Errorf("index check: %+v", res2)
	}
}

func TestSearchWithoutIndex(t *testing.T) {
	m, _, _ := testMain(t, nil)
	err := m.Run(context.Background(), []string{"search", "hello"})
	if err == nil || !strings.Contains(err.Error(), "tidings index") {
		t.Fatalf("search without an index: %v", err)
	}
}

// mustConfig loads the configuration m's environment describes.
func mustConfig(t *testing.T, m *Main) *config.Config {
	t.Helper()
	cfg, err := config.Bind(nil).Load(m.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestIndexAndroidExport(t *testing.T) {
	xml := filepath.Join(t.TempDir(), "sms.xml")
	os.WriteFile(xml, []byte(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<smses count="2">
  <sms protocol="0" address="+14155550123" date="1764500000000" type="1" body="the parcel arrives tomorrow" read="1" status="-1" contact_name="Ana Lima" />
  <sms protocol="0" address="+14155550123" date="1764500060000" type="2" body="great, thanks" read="1" status="-1" contact_name="Ana Lima" />
</smses>
`), 0o600)
	m, out, errb := testMain(t, map[string]string{"TIDINGS_NOW": anchorRFC3339})
	ctx := context.Background()
	if err := m.Run(ctx, []string{"index", "--android-xml", xml}); err != nil {
		t.Fatalf("index: %v\n%s", err, errb)
	}
	if !strings.Contains(out.String(), "2 new") {
		t.Fatalf("first import:\n%s", out)
	}
	out.Reset()
	if err := m.Run(ctx, []string{"index", "--android-xml", xml}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0 new") {
		t.Fatalf("re-import:\n%s", out)
	}
	out.Reset()
	if err := m.Run(ctx, []string{"search", "parcel", "--json", "--mode", "fulltext"}); err != nil {
		t.Fatal(err)
	}
	var res service.SearchResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Sender != "Ana Lima" || !strings.HasPrefix(res.Hits[0].Conversation.ID, "android:") {
		t.Fatalf("android hit: %+v", res.Hits)
	}
}

// TestIndexSyncsMailAccounts: `tidings index` with only a
// [[mail.accounts]] entry syncs it into the index, one line per account,
// and a second run finds nothing new (docs/index.md, "When mail is
// synced").
func TestIndexSyncsMailAccounts(t *testing.T) {
	env := map[string]string{"TIDINGS_NOW": anchorRFC3339}
	m, out, errb := testMain(t, env)
	home := m.Getenv("TIDINGS_HOME")
	md, err := mail.WriteDemo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("[[mail.accounts]]\nname = \"Local\"\nmaildir = %q\nfrom = [\"me@example.com\"]\n", md)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, want := range []string{"mail Local: 13 new, 0 flag changes, 0 deleted", "mail Local: 0 new, 0 flag changes, 0 deleted"} {
		out.Reset()
		if err := m.Run(ctx, []string{"index"}); err != nil {
			t.Fatalf("index: %v\n%s", err, errb)
		}
		if !strings.Contains(out.String(), want) {
			t.Fatalf("index output lacks %q:\n%s", want, out)
		}
	}
}
