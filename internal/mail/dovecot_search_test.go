package mail_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mail"
	"github.com/tidings-mcp/tidings/internal/mail/mailindex"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// TestMailSearchFollowsDovecotThroughAnMCPClient: mail synced from a real
// Dovecot is found by mail_search through an MCP client; after flag
// changes, a move, a trash and an expunge by another client on the
// server, a re-sync makes the search show the server's state; a blocked
// sender's mail is never found (docs/index.md, "When mail is synced").
func TestMailSearchFollowsDovecotThroughAnMCPClient(t *testing.T) {
	b, maildir := mail.StartDovecotDir(t)
	ctx := context.Background()
	pst := mail.PolicyHome(t, []string{mail.BlockedAddr}, nil)
	gate := service.NewGate(pst)
	if _, err := gate.Refresh(); err != nil {
		t.Fatal(err)
	}
	now := testclock.Anchor()
	ix, err := index.Open(ctx, filepath.Join(t.TempDir(), "index.db"), index.Options{Policy: gate, Now: func() time.Time { return now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	own := []string{"me@example.com"}
	st := &mail.Store{Backends: []mail.Backend{b}, Accounts: []mail.AccountInfo{{Name: "dove", Kind: "imap", From: own}},
		Self: own, Allow: mail.PolicyAllow(pst, nil)}
	svc := mail.Service(st)
	svc.Tools = append(svc.Tools, mail.SearchTool(mail.SearchOptions{Index: func(context.Context) (*index.Index, error) { return ix, nil }}))
	p := &mcpserver.Profile{Access: "write", AllowExternal: true}
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test", Profile: p}, mcpserver.Filters{Toolsets: []string{"mail"}, Profile: p}, svc)
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Sessions(t, srv)["http"]
	sync := func(when string) {
		t.Helper()
		if _, err := mailindex.Sync(ctx, ix, b, mailindex.Options{Own: own}); err != nil {
			t.Fatalf("%s: sync: %v", when, err)
		}
	}
	type hit struct {
		Mailbox, Subject string
		UID              float64
		Unread           bool
	}
	search := func(args string) []hit {
		t.Helper()
		isErr, text, data := mcptest.Call(t, cs, "mail_search", args)
		if isErr {
			t.Fatalf("mail_search %s: %s", args, text)
		}
		var out []hit
		for _, h := range data["hits"].([]any) {
			m := h.(map[string]any)
			out = append(out, hit{Mailbox: m["mailbox"].(string), Subject: m["subject"].(string), UID: m["uid"].(float64), Unread: m["unread"].(bool)})
		}
		return out
	}
	one := func(when, args, mailbox, subject string) hit {
		t.Helper()
		hs := search(args)
		if len(hs) != 1 || hs[0].Mailbox != mailbox || hs[0].Subject != subject {
			t.Fatalf("%s: mail_search %s = %+v, want %q in %s", when, args, hs, subject, mailbox)
		}
		return hs[0]
	}
	call := func(name, args string) {
		t.Helper()
		if isErr, text, _ := mcptest.Call(t, cs, name, args); isErr {
			t.Fatalf("%s %s: %s", name, args, text)
		}
	}

	sync("first sync")
	invoice := one("first sync", `{"query":"invoice"}`, "INBOX", "Invoice attached")
	one("first sync", `{"query":"会議は明日です"}`, "INBOX", "会議")
	one("first sync", `{"query":"Vienes"}`, "INBOX", "Reunión mañana")
	for _, q := range []string{`{"query":"talk"}`, `{"query":"sender is blocked"}`, `{"from":"mallory"}`} {
		if hs := search(q); len(hs) != 0 {
			t.Fatalf("the blocked sender's mail was found by %s: %+v", q, hs)
		}
	}
	unread := search(`{"mailbox":"INBOX","unread":true,"limit":50}`)
	if len(unread) == 0 {
		t.Fatal("no unread mail in INBOX")
	}

	// Another client reads, moves, trashes and expunges on the server.
	call("mail_mark_read", fmt.Sprintf(`{"mailbox":"INBOX","uids":[%d]}`, int(unread[0].UID)))
	call("mail_move", fmt.Sprintf(`{"mailbox":"INBOX","uids":[%d],"target_mailbox":"Archive"}`, int(invoice.UID)))
	reunion := one("before trash", `{"query":"Vienes"}`, "INBOX", "Reunión mañana")
	call("mail_trash", fmt.Sprintf(`{"mailbox":"INBOX","uids":[%d]}`, int(reunion.UID)))
	files, _ := filepath.Glob(filepath.Join(maildir, "cur", "*M5P1*"))
	if len(files) != 1 {
		t.Fatalf("the ISO-2022-JP message's file in Dovecot's Maildir: %v", files)
	}
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}

	sync("re-sync")
	one("re-sync", `{"query":"invoice"}`, "Archive", "Invoice attached")
	one("re-sync", `{"query":"Vienes"}`, "Trash", "Reunión mañana")
	if hs := search(`{"query":"会議は明日です"}`); len(hs) != 0 {
		t.Fatalf("an expunged mail is still found: %+v", hs)
	}
	after := search(`{"mailbox":"INBOX","unread":true,"limit":50}`)
	want := 0 // the unread ones not marked read and not expunged
	for _, h := range unread[1:] {
		if h.Subject != "会議" {
			want++
		}
	}
	if slices.ContainsFunc(after, func(h hit) bool { return h.Subject == unread[0].Subject }) || len(after) != want {
		t.Fatalf("unread after marking %q read: %+v (before: %+v)", unread[0].Subject, after, unread)
	}
	if hs := search(`{"from":"mallory"}`); len(hs) != 0 {
		t.Fatalf("the blocked sender's mail was found after the re-sync: %+v", hs)
	}
}
