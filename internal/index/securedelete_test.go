package index

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// TestEarlierVersionsLeaveNoTrace: the text a sync replaced (an edit) is
// not left in the database's free space to outlive the purge of its
// thread — also after an earlier purge, which must not switch
// secure_delete off for the write connection.
func TestEarlierVersionsLeaveNoTrace(t *testing.T) {
	const word = "Quaggaversionword"
	zoe := "iMessage;-;zoe@example.com"
	db := smallCorpus()
	db.add(model.Message{ID: "e1", ConversationIDs: []string{zoe}, Sender: "zoe@example.com",
		Time: testNow.Add(-time.Hour), Text: "first draft " + word + " with details"})
	dir := t.TempDir()
	ix := openTest(t, dir, Options{})
	mustSync(t, ix, db.source(nil))
	ctx := context.Background()
	if n, err := ix.Purge(ctx, "iMessage;+;chat100"); err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v", n, err)
	}
	db.update("e1", testNow, func(m *model.Message) { m.Text = "an edited text"; m.Edited = true })
	mustSync(t, ix, db.source(nil))
	if n, err := ix.Purge(ctx, zoe); err != nil || n != 1 {
		t.Fatalf("Purge = %d, %v", n, err)
	}
	ix.Close()
	for _, p := range []string{"index.db", "index.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, s := range []string{word, strings.ToLower(word)} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s still holds %q", p, s)
			}
		}
	}
}
