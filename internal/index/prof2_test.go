package index

import (
	"context"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/index/synth"
	"github.com/tidings-mcp/tidings/internal/model"
)

// TestProfileQueries: TIDINGS_PROFILE_DIR=/tmp/x TIDINGS_PROFILE_N=100000
func TestProfileQueries(t *testing.T) {
	dir := os.Getenv("TIDINGS_PROFILE_DIR")
	n, _ := strconv.Atoi(os.Getenv("TIDINGS_PROFILE_N"))
	if dir == "" || n == 0 {
		t.Skip("manual")
	}
	emb, _ := embed.NewBuiltin()
	ctx := context.Background()
	if _, err := os.Stat(dir + "/index.db"); err != nil {
		os.MkdirAll(dir, 0o700)
		ix, err := Open(ctx, dir+"/index.db", Options{Embedder: emb})
		if err != nil {
			t.Fatal(err)
		}
		st := synth.NewStream(synth.Options{Messages: n})
		t0 := time.Now()
		if _, err := ix.Sync(ctx, SyncOptions{Embed: true}, &RowSource{SourceKey: "s", SourceKind: model.SourceIMessage, Reader: st}); err != nil {
			t.Fatal(err)
		}
		t.Logf("built in %v", time.Since(t0))
		ix.Close()
	}
	ix, err := Open(ctx, dir+"/index.db", Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	qs := []string{"dinner", "tonight", "passport", "invoice", "birthday party", "running late",
		"what did Sam say about the party last week", "when is the dentist appointment",
		"can you pick up my keys", "\"book the table\"", "dinenr plans", "climb*",
		"money I still owe", "plans to eat out", "flight lands", "rent is due",
		"happy birthday", "where are you", "interview good luck", "photos from the weekend"}
	subs := []string{"dinner", "late, be", "$4", "🎉", "airport", "ick up", "Café", "be there in"}
	for _, mode := range []Mode{ModeFulltext, ModeSubstring, ModeSemantic, ModeHybrid} {
		list := qs
		if mode == ModeSubstring {
			list = subs
		}
		type res struct {
			q string
			d time.Duration
			c bool
			k int
		}
		var rs []res
		for _, q := range list {
			best := time.Hour
			var r *Result
			for i := 0; i < 5; i++ {
				t0 := time.Now()
				r, err = ix.Search(ctx, Query{Text: q, Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				if d := time.Since(t0); d < best {
					best = d
				}
			}
			cands := 0
			if r.Coverage.Fulltext != nil {
				cands = r.Coverage.Fulltext.Candidates
			}
			if r.Coverage.Substring != nil {
				cands = r.Coverage.Substring.Candidates
			}
			rs = append(rs, res{q, best, r.ScanComplete, cands})
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].d > rs[j].d })
		for _, r := range rs[:5] {
			t.Logf("%-9s %8v complete=%v cands=%d %q", mode, r.d, r.c, r.k, r.q)
		}
	}
}
