package index

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// TestConcurrentPurgeFromTwoProcesses: a policy change is applied by
// whichever process notices it first — a running server's watcher and the
// `tidings policy` command (or a CLI read) each hold their own Index on
// the same file. Both purging at once is safe: neither fails, the blocked
// thread is gone from the file, the rest is intact, and both views agree
// with a fresh open (docs/index.md, "Read policy").
func TestConcurrentPurgeFromTwoProcesses(t *testing.T) {
	ctx := context.Background()
	zoe := "iMessage;-;zoe@example.com"
	for round := range 3 {
		dir := t.TempDir()
		p := &filePolicy{}
		p.set(false)
		a := openTest(t, dir, Options{Policy: p})
		mustSync(t, a, smallCorpus().source(nil))
		b := openTest(t, dir, Options{Policy: p})
		before := storedGUIDs(t, b)
		p.set(false, zoe)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, ix := range []*Index{a, b} {
			wg.Go(func() { _, errs[i] = ix.ApplyPolicy(ctx) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: ApplyPolicy of process %d: %v", round, i, err)
			}
		}
		want := slices.DeleteFunc(before, func(g string) bool { return g == "m5" || g == "m6" || g == "m10" })
		c := openTest(t, dir, Options{Policy: p})
		for name, ix := range map[string]*Index{"first": a, "second": b, "fresh": c} {
			if got := storedGUIDs(t, ix); !slices.Equal(got, want) {
				t.Errorf("round %d, %s: stored %v, want %v", round, name, got, want)
			}
			for _, q := range []struct {
				text string
				hits int
			}{{"dentist", 0}, {"dinner", 2}, {"climbing", 1}} {
				r := mustSearch(t, ix, Query{Text: q.text, Mode: ModeFulltext})
				if len(r.Hits) != q.hits {
					t.Errorf("round %d, %s: %q has %d hits, want %d", round, name, q.text, len(r.Hits), q.hits)
				}
				if q.hits == 0 && (r.Coverage.Fulltext == nil || r.Coverage.Fulltext.Note == "") {
					t.Errorf("round %d, %s: %q answers without the absent-word note: %+v", round, name, q.text, r.Coverage.Fulltext)
				}
			}
			st, err := ix.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Searchable != 7 {
				t.Errorf("round %d, %s: searchable = %d, want 7", round, name, st.Searchable)
			}
		}
	}
}
