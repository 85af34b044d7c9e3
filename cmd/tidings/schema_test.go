package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// damagedChatDB writes a chat.db on the real macOS 15 schema (tables and
// indexes) with one message (a sentinel body), then runs the damage
// statements.
func damagedChatDB(t *testing.T, damage ...string) string {
	t.Helper()
	ddl, err := schemas.Tables("macos15")
	if err != nil {
		t.Fatal(err)
	}
	db, path := chatdb.CreateForTest(t, ddl)
	defer db.Close()
	w := chatdb.ForTest(t, db)
	w.Handle(chatdb.Handle{ROWID: 1, ID: "+14155550101", Service: "iMessage"})
	w.Chat(chatdb.Chat{ROWID: 1, GUID: "iMessage;-;+14155550101", Style: 45, Identifier: "+14155550101", Service: "iMessage", Handles: []int64{1}})
	w.Message(chatdb.Message{ROWID: 1, GUID: "G1", Text: "SENTINEL-BODY dinner", Handle: 1, Service: "iMessage",
		Date: chatdb.Nanos(testclock.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)), Chats: []int64{1}})
	for _, q := range damage {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.80s: %v", q, err)
		}
	}
	return path
}

// withoutMessageDate rebuilds message without its date column.
var withoutMessageDate = []string{
	"CREATE TABLE damaged AS SELECT ROWID AS ROWID, guid, text, handle_id, service, is_from_me, attributedBody FROM message",
	"DROP TABLE message",
	"ALTER TABLE damaged RENAME TO message",
}

// TestIncompleteChatDBIsReported: a chat.db whose message table is missing
// or lacks a column the reader needs is never a successful sync of zero
// messages (docs/imessage.md): `tidings index` fails with one sentence
// naming the table and column, `tidings doctor` fails the check with its
// fix, and get_status reports the source unreadable with the reason and
// no message content.
func TestIncompleteChatDBIsReported(t *testing.T) {
	cases := []struct {
		name   string
		damage []string
		want   string
	}{
		{"message table missing", []string{"DROP TABLE message"}, "table message is missing"},
		{"message.date missing", withoutMessageDate, "table message has no column date"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := damagedChatDB(t, tc.damage...)

			m, out, _ := testMain(t, nil)
			err := m.Run(context.Background(), []string{"index", "--no-embed", "--imessage", path})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("tidings index: err = %v; stdout:\n%s\nwant one line saying %q", err, out, tc.want)
			}
			if strings.Contains(out.String(), "new,") {
				t.Errorf("tidings index reported a sync:\n%s", out)
			}

			m, out, _ = testMain(t, nil)
			err = m.Run(context.Background(), []string{"doctor", "--imessage", path})
			if err == nil || !strings.Contains(out.String(), "FAIL  messages database readable") ||
				!strings.Contains(out.String(), tc.want) || !strings.Contains(out.String(), "fix: This copy of the database is damaged") {
				t.Errorf("tidings doctor: err = %v\n%s", err, out)
			}

			c := startClient(t, nil, "--imessage", path)
			r := c.call("get_status", map[string]any{})
			var src map[string]any
			for _, s := range r.Out["sources"].([]any) {
				if s := s.(map[string]any); s["kind"] == "imessage" {
					src = s
				}
			}
			if d, _ := src["detail"].(string); !strings.Contains(d, "unreadable") || !strings.Contains(d, tc.want) {
				t.Errorf("get_status source = %v, want it unreadable because %s", src, tc.want)
			}
			if strings.Contains(string(r.Raw), "SENTINEL") || strings.Contains(r.Text, "SENTINEL") {
				t.Errorf("get_status carries message content: %s", r.Raw)
			}
		})
	}
}
