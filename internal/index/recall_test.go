package index

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
)

// TestBinaryRecallManual measures recall@10 of the 1-bit prefilter with
// exact re-ranking against an exact scan on a real index
// (TIDINGS_PROFILE_DIR, built by TestProfileQueries). Recall is tie-aware:
// a returned message counts when its exact score reaches the exact tenth.
func TestBinaryRecallManual(t *testing.T) {
	dir := os.Getenv("TIDINGS_PROFILE_DIR")
	if dir == "" {
		t.Skip("manual")
	}
	emb, _ := embed.NewBuiltin()
	ctx := context.Background()
	ix, err := Open(ctx, dir+"/index.db", Options{Embedder: emb, VectorMemory: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.ensureSlab(ctx); err != nil {
		t.Fatal(err)
	}
	v := ix.mem.vec
	if !v.inMemory() {
		t.Fatal("vectors not in memory")
	}
	exactScore := func(q []float32, id int64) float32 {
		s := v.slotOf[id]
		return v.pool.mult[s] * dotQ8(q, v.pool.vec(s))
	}
	vecOf := func(id int64) []float32 {
		out := make([]float32, v.dim)
		s := v.slotOf[id]
		for i, x := range v.pool.vec(s) {
			out[i] = float32(x) * v.pool.mult[s]
		}
		return out
	}
	r := rand.New(rand.NewPCG(1, 2))
	var queries [][]float32
	for len(queries) < 300 {
		id := int64(1 + r.IntN(int(ix.mem.maxID)))
		if v.hasVec(id) && v.pool.mult[v.slotOf[id]] != 0 {
			queries = append(queries, vecOf(id))
		}
	}
	f := &filter{since: -1 << 62, until: 1 << 62, fromMe: -1, lo: 1, hi: ix.mem.maxID}
	exact := make([][]scored, len(queries))
	t0 := time.Now()
	for i, q := range queries {
		top := &topK{k: 10}
		for id := int64(1); id <= ix.mem.maxID; id++ {
			if v.hasVec(id) {
				top.offer(id, exactScore(q, id))
			}
		}
		exact[i] = top.sorted()
	}
	t.Logf("exact scan: %v per query", time.Since(t0)/time.Duration(len(queries)))
	for _, depth := range []int{100, 200, 400, 800, 1600} {
		ix.tune.VectorCandidates = depth
		var hits, total int
		t0 := time.Now()
		for i, q := range queries {
			got, _, _ := ix.vectorScan(ctx, q, f, 10, &SignalCoverage{})
			th := exact[i][len(exact[i])-1].score - 1e-5
			for _, g := range got {
				if exactScore(q, g.id) >= th {
					hits++
				}
			}
			total += len(exact[i])
		}
		t.Logf("1-bit prefilter, %4d candidates re-ranked in memory: recall@10 %.3f, %v per query", depth, float64(hits)/float64(total), time.Since(t0)/time.Duration(len(queries)))
	}
}
