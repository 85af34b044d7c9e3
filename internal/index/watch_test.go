package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

func TestWatchPicksUpNewMessagesAndEdits(t *testing.T) {
	db := smallCorpus()
	dir := t.TempDir()
	chat := filepath.Join(dir, "chat.db")
	wal := chat + "-wal"
	os.WriteFile(chat, []byte("x"), 0o600)
	ix := openTest(t, filepath.Join(dir, "idx"), Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	ctx, cancel := context.WithCancel(context.Background())
	var syncs, full atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- ix.Watch(ctx, WatchOptions{Sources: []Source{db.source(nil)}, Paths: []string{chat, wal}, Poll: -1,
			FullDelay: 50 * time.Millisecond,
			OnSync: func(rep SyncReport, f bool, err error) {
				// A sync the final cancel interrupts reports the cancellation.
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("sync: %v", err)
				}
				syncs.Add(1)
				if f {
					full.Add(1)
				}
			}})
	}()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitFor("first sync", func() bool { return syncs.Load() >= 1 })
	found := func(q string, mode Mode) bool {
		r, err := ix.Search(context.Background(), Query{Text: q, Mode: mode})
		return err == nil && len(r.Hits) > 0
	}
	// A new row lands in the WAL (created now: the folder is watched).
	db.add(model.Message{ID: "new1", ConversationIDs: []string{"iMessage;-;zoe@example.com"}, Sender: "zoe@example.com",
		Time: testNow, Text: "the marmalade jar is in the fridge"})
	os.WriteFile(wal, []byte("commit"), 0o600)
	waitFor("new message", func() bool { return found("marmalade", ModeFulltext) })
	// An edit is applied by the full sync that follows.
	db.update("new1", testNow.Add(time.Second), func(m *model.Message) { m.Text = "the apricot jam is in the fridge"; m.Edited = true })
	os.WriteFile(wal, []byte("commit 2"), 0o600)
	waitFor("edit", func() bool { return found("apricot", ModeFulltext) && !found("marmalade", ModeFulltext) })
	// The background embedder catches up.
	waitFor("vectors", func() bool { st := ix.VectorStatus(); return st.Ready && int64(st.Vectors) == st.Searchable })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if full.Load() < 2 {
		t.Errorf("%d full syncs, want the initial one and one after changes", full.Load())
	}
}

func TestWatchPollsWithoutEvents(t *testing.T) {
	db := smallCorpus()
	dir := t.TempDir()
	chat := filepath.Join(dir, "chat.db")
	os.WriteFile(chat, []byte("x"), 0o600)
	ix := openTest(t, filepath.Join(dir, "idx"), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Without change notification (network file systems), polling sees
	// the file change.
	go ix.Watch(ctx, WatchOptions{Sources: []Source{db.source(nil)}, Paths: []string{chat, "/nonexistent/dir/x"}, Poll: 20 * time.Millisecond, NoNotify: true})
	time.Sleep(100 * time.Millisecond)
	db.add(model.Message{ID: "p1", ConversationIDs: []string{"iMessage;-;zoe@example.com"}, Sender: "zoe@example.com", Time: testNow, Text: "quince paste"})
	time.Sleep(5 * time.Millisecond)
	os.WriteFile(chat, []byte("xy"), 0o600)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := ix.Search(context.Background(), Query{Text: "quince", Mode: ModeFulltext})
		if err == nil && len(r.Hits) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("polling never synced the change")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
