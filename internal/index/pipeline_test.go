package index

import (
	"context"
	"os"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/synth"
	"github.com/tidings-mcp/tidings/internal/model"
)

// TestPipelineScale is a manual measurement: TIDINGS_PIPELINE_N=100000 go
// test -run TestPipelineScale -v ./internal/index/
func TestPipelineScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TIDINGS_PIPELINE_N"))
	if n == 0 {
		t.Skip("set TIDINGS_PIPELINE_N")
	}
	t0 := time.Now()
	d := synth.Generate(synth.Options{Messages: n})
	t.Logf("generate %d: %v", n, time.Since(t0))
	emb := &hashEmbedder{id: "hash/v1", dim: 256}
	dir := t.TempDir()
	ix := openTest(t, dir, Options{Embedder: emb})
	src := &RowSource{SourceKey: "imessage:/synth", SourceKind: model.SourceIMessage, Reader: d.Reader()}
	t0 = time.Now()
	rep, err := ix.Sync(context.Background(), SyncOptions{Progress: os.Stderr}, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sync: %v %+v", time.Since(t0), rep.Sources[0])
	t0 = time.Now()
	k, err := ix.Embed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("embed %d: %v", k, time.Since(t0))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap %d MB sys %d MB", ms.HeapAlloc>>20, ms.Sys>>20)
	for _, mode := range []Mode{ModeFulltext, ModeSubstring, ModeSemantic, ModeHybrid} {
		var lat []time.Duration
		for _, q := range []string{"dinner", "running late", "dentist appointment", "owe me money", "pizza tonight", "passport", "climbing gym", "what did Sam say about the party last week", "keys", "birthday"} {
			for rep := 0; rep < 3; rep++ {
				t1 := time.Now()
				r, err := ix.Search(context.Background(), Query{Text: q, Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				lat = append(lat, time.Since(t1))
				if rep == 0 && q == "dinner" {
					t.Logf("%s %q: %d hits complete=%v cov=%+v notes=%v", mode, q, len(r.Hits), r.ScanComplete, r.Coverage.Fulltext, r.Notes)
				}
			}
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		t.Logf("%-9s p50 %v p95 %v max %v", mode, lat[len(lat)/2], lat[len(lat)*95/100], lat[len(lat)-1])
	}
	fi, _ := os.Stat(dir + "/index.db")
	t.Logf("size %d MB", fi.Size()>>20)
}
