package chatdb_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"
	"github.com/tidings-mcp/tidings/internal/testclock"
	_ "modernc.org/sqlite"
)

// eras are the chat.db and sms.db schemas of internal/imessage/schemas.
var eras = []string{"iOS6.1.6", "iOS9.2.1", "iOS10.2", "iOS11.2", "macos15"}

func create(t *testing.T, schema string) *sql.DB {
	t.Helper()
	ddl, err := schemas.Tables(schema)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "chat.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(ddl); err != nil {
		t.Fatal(err)
	}
	return db
}

// row reads the columns of table's row id as quoted SQL values.
func row(t *testing.T, db *sql.DB, table string, id int64, cols ...string) string {
	t.Helper()
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = "quote(" + c + ")"
	}
	var s string
	if err := db.QueryRow("SELECT "+strings.Join(q, " || ' ' || ")+" FROM "+table+" WHERE ROWID = ?", id).Scan(&s); err != nil {
		t.Fatalf("%s %d: %v", table, id, err)
	}
	return s
}

// TestRowsHoldTheFieldsSetAndDefaultsElsewhere writes one row of each kind
// on every era's schema: set fields are stored as given, zero fields take
// the schema's default (NULL text, not ""), and a column an era lacks is
// dropped rather than failing the row.
func TestRowsHoldTheFieldsSetAndDefaultsElsewhere(t *testing.T) {
	at := testclock.Anchor()
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			db := create(t, era)
			w := chatdb.ForTest(t, db)
			h := w.Handle(chatdb.Handle{ID: "+14155550101", Service: "iMessage", Country: "us"})
			empty := ""
			c := w.Chat(chatdb.Chat{GUID: "iMessage;-;+14155550101", Style: 45, Identifier: "+14155550101", Service: "iMessage",
				DisplayName: &empty, Handles: []int64{h}})
			m := w.Message(chatdb.Message{ROWID: 7, GUID: "G1", Text: "hello", Handle: h, Service: "iMessage",
				Date: chatdb.Nanos(at), FromMe: true, Chats: []int64{c}})
			bare := w.Message(chatdb.Message{GUID: "G2", Handle: h, Date: chatdb.Seconds(at)})
			a := w.Attachment(chatdb.Attachment{GUID: "A1", OriginalGUID: "A1", Filename: "~/x.png", TransferName: "x.png", TotalBytes: 10, Messages: []int64{m}})
			if m != 7 || bare != 8 {
				t.Fatalf("ROWIDs %d, %d; want 7, 8", m, bare)
			}
			if got := row(t, db, "handle", h, "id", "service"); got != "'+14155550101' 'iMessage'" {
				t.Errorf("handle = %s", got)
			}
			if w.Has("chat", "display_name") {
				if got := row(t, db, "chat", c, "guid", "style", "display_name"); got != "'iMessage;-;+14155550101' 45 ''" {
					t.Errorf("chat = %s", got)
				}
			}
			want := fmt.Sprintf("'G1' 'hello' %d %d 1", h, chatdb.Nanos(at))
			if got := row(t, db, "message", m, "guid", "text", "handle_id", "date", "is_from_me"); got != want {
				t.Errorf("message = %s, want %s", got, want)
			}
			if got := row(t, db, "message", bare, "text", "is_from_me", "date"); got != fmt.Sprintf("NULL 0 %d", chatdb.Seconds(at)) {
				t.Errorf("bare message = %s", got)
			}
			var joins, members, attached int
			db.QueryRow("SELECT count(*) FROM chat_message_join WHERE chat_id = ? AND message_id = ?", c, m).Scan(&joins)
			db.QueryRow("SELECT count(*) FROM chat_handle_join WHERE chat_id = ? AND handle_id = ?", c, h).Scan(&members)
			db.QueryRow("SELECT count(*) FROM message_attachment_join WHERE message_id = ? AND attachment_id = ?", m, a).Scan(&attached)
			if joins != 1 || members != 1 || attached != 1 {
				t.Errorf("joins: chat_message %d, chat_handle %d, message_attachment %d; want 1 each", joins, members, attached)
			}
		})
	}
}

// TestTheFirstErrorIsKept: a Writer from New keeps the first error and
// writes nothing after it; Writers made by On share it.
func TestTheFirstErrorIsKept(t *testing.T) {
	db := create(t, "macos15")
	w := chatdb.New(context.Background(), db)
	w.Message(chatdb.Message{GUID: "dup"})
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	w.On(tx).Message(chatdb.Message{GUID: "dup"})
	tx.Rollback()
	if w.Err() == nil || !strings.Contains(w.Err().Error(), "UNIQUE") {
		t.Fatalf("Err() = %v, want the duplicate guid's error", w.Err())
	}
	if id := w.Message(chatdb.Message{GUID: "fresh"}); id != 0 {
		t.Errorf("a write after the error returned ROWID %d", id)
	}
	var n int
	db.QueryRow("SELECT count(*) FROM message").Scan(&n)
	if n != 1 {
		t.Errorf("%d messages, want 1", n)
	}
}

type fakeTB struct{ failed string }

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Fatalf(format string, a ...any) { f.failed = fmt.Sprintf(format, a...) }

// TestForTestFailsTheTestAtTheWrite: a test's Writer reports the failing
// statement to the test.
func TestForTestFailsTheTestAtTheWrite(t *testing.T) {
	db := create(t, "macos15")
	tb := &fakeTB{}
	w := chatdb.ForTest(tb, db)
	w.Insert("no_such_table", "x", 1)
	if !strings.Contains(tb.failed, "no_such_table") {
		t.Errorf("Fatalf got %q", tb.failed)
	}
}
