package index

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/index/synth"
	"github.com/tidings-mcp/tidings/internal/model"
)

// The index benchmarks (docs/benchmarks.md) run on a synthetic history
// (internal/index/synth) of TIDINGS_BENCH_MESSAGES messages (default
// 20,000), indexed once per process with the built-in embedder, or on the
// index in TIDINGS_BENCH_INDEX (a folder with index.db, built there on
// first use and reused after). Profiles come from the go tool:
// `go test -run '^$' -bench Search -cpuprofile cpu.out ./internal/index`.
// The end-to-end figures (index time, latency percentiles per mode,
// freshness, memory per phase) are `tidings bench`'s.

// benchQueries and benchSubstrings are `tidings bench`'s query sets.
var (
	benchQueries = []string{"dinner", "tonight", "passport", "invoice", "birthday party", "running late",
		"what did Sam say about the party last week", "when is the dentist appointment",
		"can you pick up my keys", "\"book the table\"", "dinenr plans", "climb*",
		"money I still owe", "plans to eat out", "flight lands", "rent is due",
		"happy birthday", "where are you", "interview good luck", "photos from the weekend"}
	benchSubstrings = []string{"dinner", "late, be", "$4", "🎉", "airport", "ick up", "Café", "be there in"}
)

// benchEnd is the synthetic history's newest message and the benchmarks'
// clock, so relative dates in the queries read the same on every run.
var benchEnd = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // literal date: the synthetic history's fixed end; every clock here is pinned to it

var (
	benchOnce sync.Once
	benchPath string
	benchErr  error
)

func benchMessages() int {
	if v, err := strconv.Atoi(os.Getenv("TIDINGS_BENCH_MESSAGES")); err == nil && v > 0 {
		return v
	}
	return 20000
}

func benchOptions(b *testing.B) Options {
	b.Helper()
	emb, err := embed.NewBuiltin()
	if err != nil {
		b.Fatal(err)
	}
	return Options{Embedder: emb, Now: func() time.Time { return benchEnd }}
}

// benchIndexPath returns the path of the embedded benchmark index, building
// it on first use.
func benchIndexPath(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		dir := os.Getenv("TIDINGS_BENCH_INDEX")
		if dir == "" {
			if dir, benchErr = os.MkdirTemp("", "tidings-index-bench-"); benchErr != nil {
				return
			}
		}
		benchPath = filepath.Join(dir, "index.db")
		if _, err := os.Stat(benchPath); err == nil {
			return
		}
		if benchErr = os.MkdirAll(dir, 0o700); benchErr != nil {
			return
		}
		ctx := context.Background()
		ix, err := Open(ctx, benchPath, benchOptions(b))
		if err != nil {
			benchErr = err
			return
		}
		defer ix.Close()
		st := synth.NewStream(synth.Options{Messages: benchMessages(), End: benchEnd})
		_, benchErr = ix.Sync(ctx, SyncOptions{Embed: true}, &RowSource{SourceKey: "s", SourceKind: model.SourceIMessage, Reader: st})
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchPath
}

// openBench opens the benchmark index with opts' embedder and clock.
func openBench(b *testing.B, opts Options) *Index {
	b.Helper()
	ix, err := Open(context.Background(), benchIndexPath(b), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	return ix
}

// BenchmarkSync indexes the synthetic history into a fresh index (no
// embedding), reporting messages per second and the peak heap in use,
// sampled every 10 ms.
func BenchmarkSync(b *testing.B) {
	n := benchMessages()
	ctx := context.Background()
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	for b.Loop() {
		b.StopTimer()
		ix, err := Open(ctx, filepath.Join(b.TempDir(), "index.db"), Options{Now: func() time.Time { return benchEnd }})
		if err != nil {
			b.Fatal(err)
		}
		st := synth.NewStream(synth.Options{Messages: n, End: benchEnd})
		b.StartTimer()
		if _, err := ix.Sync(ctx, SyncOptions{}, &RowSource{SourceKey: "x", SourceKind: model.SourceIMessage, Reader: st}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	close(stop)
	<-done
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// BenchmarkSearch runs the query set once per iteration in each mode (the
// substring set in substring mode) and reports the mean time per query.
func BenchmarkSearch(b *testing.B) {
	ix := openBench(b, benchOptions(b))
	ctx := context.Background()
	for _, mode := range []Mode{ModeFulltext, ModeSubstring, ModeSemantic, ModeHybrid} {
		qs := benchQueries
		if mode == ModeSubstring {
			qs = benchSubstrings
		}
		b.Run(string(mode), func(b *testing.B) {
			for b.Loop() {
				for _, q := range qs {
					if _, err := ix.Search(ctx, Query{Text: q, Mode: mode}); err != nil {
						b.Fatalf("%s %q: %v", mode, q, err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N*len(qs)), "ms/query")
		})
	}
}

// heapMB is the heap in use after a collection, in MB.
func heapMB() float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// BenchmarkOpen opens the benchmark index and runs one hybrid search,
// reporting the heap each step keeps: the built-in embedder, the opened
// index (vocabulary, per-message metadata) and the first hybrid search
// (vectors brought into memory).
func BenchmarkOpen(b *testing.B) {
	benchIndexPath(b)
	ctx := context.Background()
	var embMB, openMB, searchMB float64
	for b.Loop() {
		h0 := heapMB()
		opts := benchOptions(b)
		h1 := heapMB()
		ix, err := Open(ctx, benchPath, opts)
		if err != nil {
			b.Fatal(err)
		}
		h2 := heapMB()
		if _, err := ix.Search(ctx, Query{Text: "dinner plans", Mode: ModeHybrid}); err != nil {
			b.Fatal(err)
		}
		h3 := heapMB()
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		embMB, openMB, searchMB = h1-h0, h2-h1, h3-h2
		runtime.KeepAlive(opts.Embedder)
	}
	b.ReportMetric(embMB, "embedder-MB")
	b.ReportMetric(openMB, "index-MB")
	b.ReportMetric(searchMB, "hybrid-search-MB")
}

// BenchmarkVectorRecall measures the 1-bit prefilter with exact
// re-ranking against an exact scan: recall@10 over 300 stored vectors used
// as queries, per candidate depth. Recall is tie-aware: a returned message
// counts when its exact score reaches the exact tenth.
func BenchmarkVectorRecall(b *testing.B) {
	opts := benchOptions(b)
	opts.VectorMemory = 1 << 40
	ix := openBench(b, opts)
	ctx := context.Background()
	if err := ix.ensureSlab(ctx); err != nil {
		b.Fatal(err)
	}
	v := ix.mem.vec
	if !v.inMemory() {
		b.Fatal("vectors not in memory")
	}
	exactScore := func(q []float32, id int64) float32 {
		s := v.slotOf[id]
		return v.pool.Score(s, q)
	}
	vecOf := func(id int64) []float32 {
		out := make([]float32, v.dim)
		s := v.slotOf[id]
		for i, x := range v.pool.Vec(s) {
			out[i] = float32(x) * v.pool.Mult(s)
		}
		return out
	}
	r := rand.New(rand.NewPCG(1, 2))
	var queries [][]float32
	for tries := 0; len(queries) < 300; tries++ {
		if tries > 100*300 {
			b.Fatalf("only %d of 300 query vectors found", len(queries))
		}
		id := int64(1 + r.IntN(int(ix.mem.maxID)))
		if v.hasVec(id) && v.pool.Mult(v.slotOf[id]) != 0 {
			queries = append(queries, vecOf(id))
		}
	}
	exact := make([][]scored, len(queries))
	for i, q := range queries {
		top := &topK{k: 10}
		for id := int64(1); id <= ix.mem.maxID; id++ {
			if v.hasVec(id) {
				top.offer(id, exactScore(q, id))
			}
		}
		exact[i] = top.sorted()
	}
	f := &filter{since: -1 << 62, until: 1 << 62, fromMe: -1, lo: 1, hi: ix.mem.maxID}
	for _, depth := range []int{100, 200, 400, 800, 1600} {
		b.Run("candidates="+strconv.Itoa(depth), func(b *testing.B) {
			ix.tune.VectorCandidates = depth
			var hits, total int
			for b.Loop() {
				hits, total = 0, 0
				for i, q := range queries {
					got, _, err := ix.vectorScan(ctx, q, f, 10, &SignalCoverage{})
					if err != nil {
						b.Fatal(err)
					}
					th := exact[i][len(exact[i])-1].score - 1e-5
					for _, g := range got {
						if exactScore(q, g.id) >= th {
							hits++
						}
					}
					total += len(exact[i])
				}
			}
			b.ReportMetric(float64(hits)/float64(total), "recall@10")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N*len(queries)), "ms/query")
		})
	}
}
