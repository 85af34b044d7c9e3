package main

import (
	"context"
	"database/sql"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/testclock"
	_ "modernc.org/sqlite"
)

// renameAttachment sets an attachment's transfer_name in chat.db, as a
// sender renaming the file after the index read its message does.
func renameAttachment(t *testing.T, chatDB string, rowID int64, name string) {
	t.Helper()
	db, err := sql.Open("sqlite", chatDB)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE attachment SET transfer_name = ? WHERE ROWID = ?", name, rowID); err != nil {
		t.Fatal(err)
	}
}

// attachmentNames lists the attachment names of a get_conversation_messages answer.
func attachmentNames(res map[string]any) []string {
	var out []string
	ms, _ := res["messages"].([]any)
	for _, m := range ms {
		mm, _ := m.(map[string]any)
		as, _ := mm["attachments"].([]any)
		for _, a := range as {
			am, _ := a.(map[string]any)
			if f, ok := am["filename"].(string); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// TestCLIAttachmentRenamedAfterIndexing is the red-team pass end to end:
// demo data, `tidings index`, the attachment renamed in chat.db, `tidings
// index` again, then a fresh `tidings serve` and a running one whose
// watcher sees another rename. Every path shows the current name on its
// next full sync (docs/index.md, Sources).
func TestCLIAttachmentRenamedAfterIndexing(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"TIDINGS_NOW": testclock.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC).Format(time.RFC3339)}
	m, _, _ := testMain(t, env)
	dir := filepath.Join(t.TempDir(), "demo")
	if err := m.Run(ctx, []string{"demo", "--dir", dir, "--messages", "500"}); err != nil {
		t.Fatal(err)
	}
	chatDB := filepath.Join(dir, "chat.db")
	env["TIDINGS_IMESSAGE"] = chatDB
	env["TIDINGS_HOME"] = m.Getenv("TIDINGS_HOME")
	env["HOME"] = m.Getenv("HOME")
	m, out, errb := testMain(t, env)

	// The newest message with an attachment whose name no other has (the
	// demo's voice notes are all "Audio Message.caf"), and its thread.
	db, err := sql.Open("sqlite", chatDB)
	if err != nil {
		t.Fatal(err)
	}
	var att int64
	var chat, old string
	err = db.QueryRow(`SELECT a.ROWID, a.transfer_name, c.chat_identifier FROM attachment a
		JOIN message_attachment_join j ON j.attachment_id = a.ROWID JOIN message m ON m.ROWID = j.message_id
		JOIN chat_message_join cj ON cj.message_id = m.ROWID JOIN chat c ON c.ROWID = cj.chat_id
		WHERE a.is_sticker = 0 AND (SELECT count(*) FROM attachment b WHERE b.transfer_name = a.transfer_name) = 1
		ORDER BY m.date DESC LIMIT 1`).Scan(&att, &old, &chat)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	out.Reset()
	if err := m.Run(ctx, []string{"index", "--no-embed"}); err != nil {
		t.Fatalf("index: %v\n%s", err, errb)
	}
	history := map[string]any{"chat": chat, "limit": 200}
	renamed := "lease-signed.pdf"
	renameAttachment(t, chatDB, att, renamed)
	out.Reset()
	if err := m.Run(ctx, []string{"index", "--no-embed"}); err != nil {
		t.Fatalf("index again: %v\n%s", err, errb)
	}
	// (With a `tidings serve` watching the same chat.db, its full sync may
	// have stored the rename first, and this run then says 0 updated.)
	if !strings.Contains(out.String(), " 1 updated") {
		t.Errorf("index after renaming attachment %d: %s", att, out)
	}

	// What `tidings index` stored, as a server that syncs nothing itself
	// answers it.
	noSource := maps.Clone(env)
	delete(noSource, "TIDINGS_IMESSAGE")
	got := attachmentNames(startClient(t, noSource).mustCall("get_conversation_messages", history))
	if !slices.Contains(got, renamed) || slices.Contains(got, old) {
		t.Errorf("after the rename and `tidings index` the thread shows %q, want %q and not %q", got, renamed, old)
	}

	// A running server's watcher picks the next rename up on its next full
	// sync.
	c := startClient(t, env)
	c.waitFor("get_conversation_messages", history, func(r callResult) bool { return slices.Contains(attachmentNames(r.Out), renamed) })
	again := "lease-final.pdf"
	renameAttachment(t, chatDB, att, again)
	c.waitFor("get_conversation_messages", history, func(r callResult) bool {
		got := attachmentNames(r.Out)
		return slices.Contains(got, again) && !slices.Contains(got, renamed)
	})
}
