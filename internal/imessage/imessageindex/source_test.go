package imessageindex

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"

	"modernc.org/sqlite"

	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// testNow is these tests' pinned clock (internal/testclock).
var testNow = testclock.Anchor()

func openTest(t testing.TB, dir string, opts index.Options) *index.Index {
	t.Helper()
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	ix, err := index.Open(context.Background(), filepath.Join(dir, "index.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func mustSync(t testing.TB, ix *index.Index, srcs ...index.Source) {
	t.Helper()
	if _, err := ix.Sync(context.Background(), index.SyncOptions{Embed: true}, srcs...); err != nil {
		t.Fatal(err)
	}
}

func mustSearch(t testing.TB, ix *index.Index, q index.Query) *index.Result {
	t.Helper()
	r, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	return r
}

func hitIDs(r *index.Result) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.MessageID)
	}
	return out
}

// Apple's triggers call functions Messages.app registers; no-op stand-ins
// let the fixture write through the real schema.
func init() {
	noop := func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) { return nil, nil }
	sqlite.MustRegisterScalarFunction("after_delete_message_plugin", 2, noop)
	sqlite.MustRegisterScalarFunction("delete_attachment_path", 1, noop)
	sqlite.MustRegisterScalarFunction("before_delete_attachment_path", 2, noop)
}

// chatDBFixture is a chat.db built from the real macOS 15 schema, in WAL
// mode like a live one, with a writer that plays Messages.app.
type chatDBFixture struct {
	t    testing.TB
	path string
	db   *sql.DB
	rows *chatdb.Writer
}

var appleEpoch = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

func newChatDB(t testing.TB) *chatDBFixture {
	t.Helper()
	ddl, err := schemas.DDL("macos15")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chat.db")
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(ddl); err != nil {
		t.Fatal(err)
	}
	return &chatDBFixture{t: t, path: path, db: db, rows: chatdb.ForTest(t, db)}
}

func (f *chatDBFixture) exec(q string, args ...any) int64 {
	f.t.Helper()
	res, err := f.db.Exec(q, args...)
	if err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
	id, _ := res.LastInsertId()
	return id
}

func (f *chatDBFixture) handle(id string) int64 {
	return f.rows.Handle(chatdb.Handle{ID: id, Service: "iMessage", Uncanonicalized: id})
}

func (f *chatDBFixture) chat(guid, ident string, style int, handles ...int64) int64 {
	return f.rows.Chat(chatdb.Chat{GUID: guid, Style: style, Identifier: ident, Service: "iMessage", Handles: handles})
}

func (f *chatDBFixture) message(chat, handle int64, guid, text string, at time.Time, fromMe bool) int64 {
	d := chatdb.Nanos(at)
	m := f.rows.Message(chatdb.Message{GUID: guid, Text: text, Handle: handle, Service: "iMessage", Date: d, FromMe: fromMe, Sent: fromMe,
		Delivered: true})
	// Written separately on purpose: a reader can see the message before
	// its chat link (the watermark must wait for it).
	f.rows.Join(chat, m, d)
	return m
}

func TestIMessageSourceEndToEnd(t *testing.T) {
	f := newChatDB(t)
	sam := f.handle("+14155550101")
	c := f.chat("iMessage;-;+14155550101", "+14155550101", 45, sam)
	base := testNow.Add(-48 * time.Hour)
	f.message(c, sam, "G1", "lunch at the taqueria?", base, false)
	f.message(c, 0, "G2", "yes! noon works", base.Add(time.Minute), true)
	r, err := imessage.Open(context.Background(), f.path, imessage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	clock := testNow
	now := func() time.Time { return clock }
	ix := openTest(t, t.TempDir(), index.Options{Now: now})
	src := Source(r, "imessage", now)
	mustSync(t, ix, src)
	if got := hitIDs(mustSearch(t, ix, index.Query{Text: "taqueria", Mode: index.ModeFulltext})); !slices.Equal(got, []string{"G1"}) {
		t.Fatalf("search: %v", got)
	}
	// Live: a new row, an edit, a deletion; the watcher syncs them.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ix.Watch(ctx, index.WatchOptions{Sources: []index.Source{src}, Paths: []string{f.path, f.path + "-wal"}, FullDelay: 20 * time.Millisecond})
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out: %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	time.Sleep(50 * time.Millisecond)
	f.message(c, sam, "G3", "bring the salsa verde", testNow.Add(-time.Minute), false)
	waitUntil("new row", func() bool {
		return len(mustSearch(t, ix, index.Query{Text: "salsa", Mode: index.ModeFulltext}).Hits) == 1
	})
	clock = clock.Add(time.Minute)
	f.exec("UPDATE message SET text = 'bring the pico de gallo', date_edited = ? WHERE guid = 'G3'", testNow.Sub(appleEpoch).Nanoseconds())
	f.exec("DELETE FROM chat_message_join WHERE message_id = (SELECT ROWID FROM message WHERE guid = 'G2')")
	f.exec("DELETE FROM message WHERE guid = 'G2'")
	waitUntil("edit and deletion", func() bool {
		return len(mustSearch(t, ix, index.Query{Text: "gallo", Mode: index.ModeFulltext}).Hits) == 1 &&
			len(mustSearch(t, ix, index.Query{Text: "noon", Mode: index.ModeFulltext}).Hits) == 0
	})
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}
