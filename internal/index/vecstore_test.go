package index

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/vecscan"
)

// TestCodeStoredMatchesCode checks that codes computed straight from the
// stored int8 form equal the codes of the dequantised float vector.
func TestCodeStoredMatchesCode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, withCenter := range []bool{false, true} {
		v := &vecState{dim: 128, words: 2}
		if withCenter {
			v.center = make([]float32, 128)
			for i := range v.center {
				v.center[i] = float32(r.NormFloat64() * 0.05)
			}
		}
		for k := 0; k < 5000; k++ {
			vec := make([]float32, 128)
			for i := range vec {
				vec[i] = float32(r.NormFloat64())
				if k%7 == 0 && i%3 == 0 {
					vec[i] = 0
				}
			}
			if k == 5 {
				clear(vec) // the zero vector
			}
			stored := vecscan.Quantize(vec)
			f := make([]float32, 128)
			vecscan.Dequantize(stored, f)
			want, got := make([]uint64, 2), make([]uint64, 2)
			v.code(f, want)
			v.codeStored(stored, got)
			if got[0] != want[0] || got[1] != want[1] {
				t.Fatalf("vector %d (center %v): codeStored %x, code %x", k, withCenter, got, want)
			}
		}
	}
}

// TestStoreVectorsChecksChangedMessages embeds a batch, changes and deletes
// messages of it before the vectors are stored, and checks that only
// vectors of unchanged messages are kept (the fast multi-row path is taken
// only when no message changed since the texts were read).
func TestStoreVectorsChecksChangedMessages(t *testing.T) {
	ctx := context.Background()
	db := smallCorpus()
	clock := testNow
	emb := &hashEmbedder{id: "hash/v1", dim: 64}
	ix := openTest(t, t.TempDir(), Options{Embedder: emb, Now: func() time.Time { return clock }})
	src := db.source(func() time.Time { return clock })
	mustSync(t, ix, src)
	if err := ix.resetVectorsIfNeeded(ctx, emb.ID(), emb.Dim(), false); err != nil {
		t.Fatal(err)
	}
	for _, stale := range []bool{false, true} {
		items, msgGen, err := ix.readEmbedBatch(ctx, 0)
		if err != nil || len(items) < 3 {
			t.Fatalf("read batch: %d items, %v", len(items), err)
		}
		var gone int64
		if stale {
			// Delete the message of the first item after its text was read.
			id := items[0].id
			var guid string
			if err := ix.rdb.QueryRow("SELECT guid FROM messages WHERE id = ?", id).Scan(&guid); err != nil {
				t.Fatal(err)
			}
			db.remove(guid)
			mustSync(t, ix, src)
			gone = id
		}
		vecs, err := embedTexts(ctx, emb, items)
		if err != nil {
			t.Fatal(err)
		}
		n, err := ix.storeVectors(ctx, emb, emb.ID(), items, vecs, nil, -1, false, false, msgGen)
		if err != nil {
			t.Fatal(err)
		}
		var stored int
		if err := ix.rdb.QueryRow("SELECT count(*) FROM vectors").Scan(&stored); err != nil {
			t.Fatal(err)
		}
		want := len(items)
		if stale {
			want--
			var c int
			if err := ix.rdb.QueryRow("SELECT count(*) FROM vectors WHERE id = ?", gone).Scan(&c); err != nil || c != 0 {
				t.Fatalf("vector of deleted message %d stored (%d, %v)", gone, c, err)
			}
			if ix.VectorStatus().Vectors != stored {
				t.Fatalf("memory holds %d vectors, table %d", ix.VectorStatus().Vectors, stored)
			}
		}
		if n != want || stored != want {
			t.Fatalf("stale=%v: stored %d (table %d), want %d", stale, n, stored, want)
		}
	}
}
