package imessage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/model"
)

// liveWriter plays Messages.app: its own connection, WAL mode, automatic
// checkpoints off (so every row stays in the -wal file) and busy_timeout 0,
// so any lock the reader held against it would fail its commit at once.
type liveWriter struct {
	db     *sql.DB
	rows   *chatdb.Writer
	chatID int64
	handle int64
	mu     sync.Mutex
	done   []string // guids committed, in commit order
}

func newLiveWriter(t *testing.T, path string) *liveWriter {
	t.Helper()
	setup := createFromSchema(t, path, "macos15")
	setup.Close()
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)&_pragma=busy_timeout(0)&_pragma=synchronous(NORMAL)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	w := &liveWriter{db: db}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
	rows := chatdb.ForTest(t, db)
	w.handle = rows.Handle(chatdb.Handle{ID: "+15550001111", Service: "iMessage"})
	w.chatID = rows.Chat(chatdb.Chat{GUID: "iMessage;-;+15550001111", Identifier: "+15550001111", Service: "iMessage"})
	// The commits' writer reads its tables' columns now, not inside a
	// timed commit.
	w.rows = chatdb.New(context.Background(), db)
	w.rows.Has("message", "guid")
	w.rows.Has("chat_message_join", "message_date")
	return w
}

// commit appends n messages in one transaction.
func (w *liveWriter) commit(start, n int) (time.Duration, error) {
	t0 := time.Now()
	tx, err := w.db.Begin()
	if err != nil {
		return 0, err
	}
	var guids []string
	for i := start; i < start+n; i++ {
		g := fmt.Sprintf("LIVE-%06d", i)
		rows := w.rows.On(tx)
		id := rows.Message(chatdb.Message{GUID: g, Text: "live message " + g, Handle: w.handle, Service: "iMessage",
			Date: AppleNanos(base.Add(time.Duration(i) * time.Second))})
		rows.Join(w.chatID, id, 0)
		if err := w.rows.Err(); err != nil {
			tx.Rollback()
			return 0, err
		}
		guids = append(guids, g)
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	w.mu.Lock()
	w.done = append(w.done, guids...)
	w.mu.Unlock()
	return time.Since(t0), nil
}

func (w *liveWriter) committed() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.done...)
}

// TestLiveWriter: while a writer appends in WAL mode, the reader sees every
// committed row (each pass sees at least what was committed before it
// started), in order, exactly once, and never makes the writer wait.
func TestLiveWriter(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chat.db")
	w := newLiveWriter(t, path)
	if _, err := w.commit(0, 1); err != nil {
		t.Fatal(err)
	}
	r, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if stale, why := r.Stale(); stale {
		t.Fatalf("stale: %s", why)
	}
	if r.Capabilities().JournalMode != "wal" {
		t.Errorf("journal mode seen by the reader: %q", r.Capabilities().JournalMode)
	}

	const total = 3000
	writerErr := make(chan error, 1)
	var maxCommit time.Duration
	go func() {
		i := 1
		for i < total {
			n := 1 + i%7
			if i+n > total {
				n = total - i
			}
			d, err := w.commit(i, n)
			if err != nil {
				writerErr <- fmt.Errorf("writer commit at %d: %w", i, err)
				return
			}
			maxCommit = max(maxCommit, d)
			i += n
		}
		writerErr <- nil
	}()

	var seen []string
	var watermark int64
	passes := 0
	finished := false
	for !finished {
		select {
		case err := <-writerErr:
			if err != nil {
				t.Fatal(err)
			}
			finished = true // one more pass after the writer's last commit
		default:
		}
		before := len(w.committed())
		got := len(seen)
		err := r.Messages(ctx, watermark, func(m model.Message) error {
			if m.RowID <= watermark {
				return fmt.Errorf("rowid %d not after watermark %d", m.RowID, watermark)
			}
			watermark = m.RowID
			seen = append(seen, m.ID)
			if m.Text != "live message "+m.ID || len(m.ConversationIDs) != 1 {
				return fmt.Errorf("row %s: text %q chats %v", m.ID, m.Text, m.ConversationIDs)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		passes++
		if len(seen) == got {
			time.Sleep(time.Millisecond) // a syncer waits for the next change
		}
		if len(seen) < before {
			t.Fatalf("pass %d saw %d rows, but %d were committed before it started", passes, len(seen), before)
		}
	}
	want := w.committed()
	if len(seen) != total || len(want) != total {
		t.Fatalf("saw %d rows, writer committed %d, want %d", len(seen), len(want), total)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("row %d: saw %s, committed %s", i, seen[i], want[i])
		}
	}
	if st, err := os.Stat(path + "-wal"); err != nil || st.Size() == 0 {
		t.Errorf("rows were expected to live in the WAL: %v", err)
	}
	t.Logf("%d reader passes; slowest writer commit %v", passes, maxCommit)
}

// TestStaleFallback: when the read-only open is refused, the reader reads a
// private copy of db + WAL, sees the WAL's rows, and says it may be stale.
func TestStaleFallback(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "chat.db")
	w := newLiveWriter(t, path)
	if _, err := w.commit(0, 50); err != nil {
		t.Fatal(err)
	}
	openHook = func(dsn string) error {
		if !strings.Contains(dsn, "tidings-chatdb-") {
			return errors.New("authorization denied (23)")
		}
		return nil
	}
	defer func() { openHook = nil }()
	r, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stale, why := r.Stale()
	if !stale || !strings.Contains(why, "authorization denied") {
		t.Errorf("Stale() = %v, %q", stale, why)
	}
	n := 0
	if err := r.Messages(ctx, 0, func(model.Message) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 50 {
		t.Errorf("read %d rows from the copy, want 50 (the WAL must be copied too)", n)
	}
	// Rows committed after the copy are not seen: that is what stale means.
	if _, err := w.commit(50, 5); err != nil {
		t.Fatal(err)
	}
	if max, _ := r.MaxRowID(ctx); max > 50 {
		t.Errorf("copy sees rows committed after it was made (max rowid %d)", max)
	}
	tmp := r.tmpDir
	if tmp == "" {
		t.Fatal("no private copy recorded")
	}
	r.Close()
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("private copy %s not removed: %v", tmp, err)
	}
}
