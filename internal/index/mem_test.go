package index

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
)

func heapMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

func TestMemoryManual(t *testing.T) {
	dir := os.Getenv("TIDINGS_PROFILE_DIR")
	if dir == "" {
		t.Skip("manual")
	}
	h0 := heapMB()
	t0 := time.Now()
	emb, _ := embed.NewBuiltin()
	h1 := heapMB()
	t.Logf("builtin embedder: %.1f MB heap, %v", h1-h0, time.Since(t0))
	t0 = time.Now()
	ix, err := Open(context.Background(), dir+"/index.db", Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	h2 := heapMB()
	t.Logf("open index: %.1f MB heap, %v (terms %d, ids %d)", h2-h1, time.Since(t0), len(ix.mem.voc.df), len(ix.mem.times))
	ix.Search(context.Background(), Query{Text: "dinner plans", Mode: ModeHybrid})
	h3 := heapMB()
	t.Logf("after a hybrid search: %.1f MB heap (vectors in memory: %v)", h3-h2, ix.mem.vec.inMemory())
	ix.Close()
	runtime.KeepAlive(emb)
}
