package embed_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/embed/embedtest"
	"github.com/tidings-mcp/tidings/internal/searcheval"
)

var (
	benchOnce sync.Once
	benchMsgs []string
)

// benchCorpus is 1M short messages in the register of the demo data.
func benchCorpus() []string {
	benchOnce.Do(func() {
		for _, m := range searcheval.Distractors(1_000_000) {
			benchMsgs = append(benchMsgs, m.Text)
		}
	})
	return benchMsgs
}

func docs(msgs []string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, m := range msgs {
			if !yield(m) {
				return
			}
		}
	}
}

// reportRate reports sentences per wall-clock second and per CPU second
// (the embedders are single-threaded per call, so the latter is the
// per-core rate even when other processes share the machine).
func reportRate(b *testing.B, n int, start time.Time, cpu0 time.Duration) {
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "sentences/s")
	if c := cpuTime() - cpu0; c > 0 {
		b.ReportMetric(float64(n)/c.Seconds(), "sentences/cpu-s")
	}
}

// BenchmarkBuiltinFit1M fits the built-in embedder on 1M messages (it
// samples MaxFitDocs of them). One op = one full Fit.
func BenchmarkBuiltinFit1M(b *testing.B) {
	msgs := benchCorpus()
	for _, c := range []struct {
		name string
		o    embed.BuiltinOptions
	}{{"default", embed.BuiltinOptions{}}, {"corpus-svd", embed.BuiltinOptions{NoLexicon: true}}} {
		b.Run(c.name, func(b *testing.B) {
			e, err := embed.NewBuiltinWithOptions(c.o)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := e.Fit(context.Background(), docs(msgs)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBuiltinEmbed embeds fitted messages on one goroutine and reports
// sentences per second.
func BenchmarkBuiltinEmbed(b *testing.B) {
	msgs := benchCorpus()[:100_000]
	e, err := embed.NewBuiltin()
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Fit(context.Background(), docs(msgs)); err != nil {
		b.Fatal(err)
	}
	const batch = 1000
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	n := 0
	for b.Loop() {
		off := (n * batch) % len(msgs)
		if _, err := e.Embed(context.Background(), msgs[off:off+batch]); err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportRate(b, n*batch, start, cpu)
}

// BenchmarkBuiltinNew measures constructing the embedder once the
// lexicon is parsed (the parse happens once per process).
func BenchmarkBuiltinNew(b *testing.B) {
	for b.Loop() {
		if _, err := embed.NewBuiltin(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkModel2VecEmbed embeds messages with a potion-base-8M-sized
// model (about 30k WordPiece tokens × 256 dims, random weights: the cost
// does not depend on their values) on one goroutine.
func BenchmarkModel2VecEmbed(b *testing.B) {
	msgs := benchCorpus()[:100_000]
	tokens := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	seen := map[string]bool{}
	for _, m := range msgs {
		for _, w := range strings.FieldsFunc(strings.ToLower(m), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if !seen[w] {
				seen[w] = true
				tokens = append(tokens, w)
			}
		}
	}
	tokens = append(tokens, ".", ",", "!", "?", "'", "$", ":")
	for i := 0; len(tokens) < 30000; i++ {
		tokens = append(tokens, fmt.Sprintf("##x%d", i), fmt.Sprintf("w%d", i))
	}
	const dim = 256
	r := rand.New(rand.NewPCG(1, 1))
	emb := make([]float32, len(tokens)*dim)
	for i := range emb {
		emb[i] = float32(r.NormFloat64())
	}
	st := embedtest.Safetensors(map[string][]float32{"embeddings": emb}, map[string][]int{"embeddings": {len(tokens), dim}})
	m, err := embed.NewModel2Vec(st, embedtest.WordPieceJSON(tokens))
	if err != nil {
		b.Fatal(err)
	}
	const batch = 1000
	start, cpu := time.Now(), cpuTime()
	n := 0
	for b.Loop() {
		off := (n * batch) % len(msgs)
		if _, err := m.Embed(context.Background(), msgs[off:off+batch]); err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportRate(b, n*batch, start, cpu)
}

// BenchmarkBuiltinHeap reports the live heap the built-in embedder holds
// once constructed, with its typo index built and fitted on 1M messages
// (the lexicon is parsed once per process, so run it with -count 1).
func BenchmarkBuiltinHeap(b *testing.B) {
	msgs := benchCorpus()
	for b.Loop() {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		e, err := embed.NewBuiltin()
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Fit(context.Background(), docs(msgs)); err != nil {
			b.Fatal(err)
		}
		e.Embed(context.Background(), []string{"tommorow at the resturant"}) // builds the typo index
		runtime.GC()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc))/1e6, "heap-MB")
		runtime.KeepAlive(e)
	}
}
