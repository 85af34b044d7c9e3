package index

import (
	"context"
	"testing"

	"github.com/tidings-mcp/tidings/internal/model"
)

// TestBulkLoadFitIsReusedUnlessTheCorpusChanged: a bulk load fits the
// embedder while it builds its indexes; the embedding pass that follows uses
// that fit (one fit in all) unless the corpus changed in between, when it
// fits again over what is stored.
func TestBulkLoadFitIsReusedUnlessTheCorpusChanged(t *testing.T) {
	ctx := context.Background()
	t.Run("used", func(t *testing.T) {
		f := &fitEmbedder{hashEmbedder: hashEmbedder{id: "fit/v1", dim: 32}}
		ix := openTest(t, t.TempDir(), Options{Embedder: f})
		if _, err := ix.Sync(ctx, SyncOptions{}, smallCorpus().source(nil)); err != nil {
			t.Fatal(err)
		}
		ix.bg.Wait()
		if f.fits != 1 {
			t.Fatalf("%d fits after the bulk load, want the background one", f.fits)
		}
		if _, err := ix.Embed(ctx); err != nil {
			t.Fatal(err)
		}
		if f.fits != 1 || f.ID() != "fit/v1/fit-10" {
			t.Fatalf("%d fits, id %s; want 1 fit over 10 messages", f.fits, f.ID())
		}
		var fitDocs int64
		if err := ix.rdb.QueryRow("SELECT fit_docs FROM embedder_state WHERE key = 'fit/v1'").Scan(&fitDocs); err != nil || fitDocs != 10 {
			t.Fatalf("stored fit_docs %d (%v), want 10", fitDocs, err)
		}
		if st := ix.VectorStatus(); !st.Ready || st.Vectors != 10 {
			t.Fatalf("vectors: %+v", st)
		}
	})
	t.Run("stale", func(t *testing.T) {
		f := &fitEmbedder{hashEmbedder: hashEmbedder{id: "fit/v1", dim: 32}}
		ix := openTest(t, t.TempDir(), Options{Embedder: f})
		db := smallCorpus()
		if _, err := ix.Sync(ctx, SyncOptions{}, db.source(nil)); err != nil {
			t.Fatal(err)
		}
		ix.bg.Wait() // the background fit is done
		db.add(model.Message{ID: "late1", ConversationIDs: []string{"iMessage;-;zoe@example.com"}, Sender: "zoe@example.com",
			Time: testNow, Text: "one more message before the vectors"})
		if _, err := ix.Sync(ctx, SyncOptions{}, db.source(nil)); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Embed(ctx); err != nil {
			t.Fatal(err)
		}
		if f.fits != 2 || f.ID() != "fit/v1/fit-11" {
			t.Fatalf("%d fits, id %s; want a second fit over 11 messages", f.fits, f.ID())
		}
	})
}
