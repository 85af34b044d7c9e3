package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/model"
)

// leakToken occurs only in the thread that gets purged, often enough to
// enter the built-in embedder's fitted vocabulary (MinCount 3).
const leakToken = "zanzquokkarind"

// leakCorpus is smallCorpus plus a thread whose messages use leakToken.
func leakCorpus() (*fakeDB, string) {
	db := smallCorpus()
	conv := "iMessage;-;+14155550177"
	db.addConv(model.Conversation{ID: conv, Identifier: "+14155550177", Kind: model.KindDirect, Service: "iMessage", Participants: []string{"+14155550177"}})
	for i, text := range []string{
		"the " + leakToken + " dinner is on at eight",
		"bring the " + leakToken + " recipe and the wine",
		leakToken + " again? we had it last week for dinner",
		"my therapist loved the " + leakToken + " story",
	} {
		db.add(model.Message{ID: fmt.Sprint("leak", i), ConversationIDs: []string{conv}, Sender: "+14155550177",
			Time: testNow.Add(-time.Duration(10-i) * time.Hour), Text: text})
	}
	return db, conv
}

// tablesContaining returns every "table.column" of the database whose text
// or blob values contain s (case-insensitive for text), read directly from
// SQLite, FTS shadow tables included.
func tablesContaining(t *testing.T, ix *Index, s string) []string {
	t.Helper()
	rows, err := ix.rdb.Query("SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	var out []string
	for _, tbl := range tables {
		if tbl == "fts" {
			continue // the virtual table itself; its shadow tables are read
		}
		cols, err := ix.rdb.Query(fmt.Sprintf("SELECT name FROM pragma_table_info('%s')", tbl))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for cols.Next() {
			var n string
			cols.Scan(&n)
			names = append(names, n)
		}
		cols.Close()
		for _, c := range names {
			vals, err := ix.rdb.Query(fmt.Sprintf(`SELECT "%s" FROM "%s"`, c, tbl))
			if err != nil {
				t.Fatalf("%s.%s: %v", tbl, c, err)
			}
			for vals.Next() {
				var v any
				if err := vals.Scan(&v); err != nil {
					t.Fatal(err)
				}
				var b []byte
				switch x := v.(type) {
				case string:
					b = []byte(strings.ToLower(x))
				case []byte:
					b = bytes.ToLower(x)
				}
				if bytes.Contains(b, []byte(s)) {
					out = append(out, tbl+"."+c)
					break
				}
			}
			vals.Close()
		}
	}
	return out
}

// TestPurgeForgetsFittedEmbedder: a word that occurs only in a purged
// thread is in no table of the index afterwards — the fitted embedder's
// stored state included — nor in the embedder's state in memory, and the
// embedder fitted again on what is left still serves semantic search.
func TestPurgeForgetsFittedEmbedder(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		purge func(t *testing.T, ix *Index, pol *blockPolicy, db *fakeDB, conv string)
	}{
		{"Purge", func(t *testing.T, ix *Index, _ *blockPolicy, _ *fakeDB, conv string) {
			if n, err := ix.Purge(ctx, conv); err != nil || n != 1 {
				t.Fatalf("Purge = %d, %v", n, err)
			}
		}},
		{"ApplyPolicy after blocking", func(t *testing.T, ix *Index, pol *blockPolicy, _ *fakeDB, conv string) {
			pol.blocked[conv] = true
			if n, err := ix.ApplyPolicy(ctx); err != nil || n != 1 {
				t.Fatalf("ApplyPolicy = %d, %v", n, err)
			}
		}},
		{"Sync after blocking", func(t *testing.T, ix *Index, pol *blockPolicy, db *fakeDB, conv string) {
			pol.blocked[conv] = true
			rep, err := ix.Sync(ctx, SyncOptions{}, db.source(nil)) // no embedding: the state must go anyway
			if err != nil || rep.Sources[0].Purged != 1 {
				t.Fatalf("Sync = %+v, %v", rep, err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			emb, err := embed.NewBuiltin()
			if err != nil {
				t.Fatal(err)
			}
			db, conv := leakCorpus()
			pol := &blockPolicy{blocked: map[string]bool{}}
			dir := t.TempDir()
			ix := openTest(t, dir, Options{Embedder: emb, Policy: pol})
			mustSync(t, ix, db.source(nil))
			state, _ := emb.MarshalBinary()
			if !bytes.Contains(state, []byte(leakToken)) || len(tablesContaining(t, ix, leakToken)) == 0 {
				t.Fatal("precondition: the fitted state does not hold the token")
			}
			fittedID := emb.ID()

			tt.purge(t, ix, pol, db, conv)
			if got := tablesContaining(t, ix, leakToken); len(got) > 0 {
				t.Errorf("after the purge the token is in %v", got)
			}
			if state, _ := emb.MarshalBinary(); bytes.Contains(state, []byte(leakToken)) {
				t.Error("after the purge the in-memory embedder still knows the token")
			}
			// Semantic search does not run on vectors of the old state.
			r := mustSearch(t, ix, Query{Text: "dinner recipe", Mode: ModeSemantic})
			if r.Mode != ModeFulltext {
				t.Errorf("semantic search ran on the forgotten state's vectors: mode %s", r.Mode)
			}

			// The next embedding pass fits on what is left.
			if _, err := ix.Embed(ctx); err != nil {
				t.Fatal(err)
			}
			if got := tablesContaining(t, ix, leakToken); len(got) > 0 {
				t.Errorf("after refitting the token is in %v", got)
			}
			state, _ = emb.MarshalBinary()
			if len(state) == 0 || bytes.Contains(state, []byte(leakToken)) || emb.ID() == fittedID {
				t.Errorf("refit: %d bytes of state (token present %v), id %s (was %s)", len(state), bytes.Contains(state, []byte(leakToken)), emb.ID(), fittedID)
			}
			if st := ix.VectorStatus(); !st.Ready || int64(st.Vectors) != st.Searchable {
				t.Errorf("vectors after refitting: %+v", st)
			}
			r = mustSearch(t, ix, Query{Text: "dinner", Mode: ModeSemantic})
			if r.Mode != ModeSemantic || len(r.Hits) == 0 {
				t.Errorf("semantic search after refitting: mode %s, %d hits", r.Mode, len(r.Hits))
			}
			if err := ix.Verify(ctx); err != nil {
				t.Fatal(err)
			}
			// Nor in the files themselves.
			ix.Close()
			for _, p := range []string{"index.db", "index.db-wal"} {
				b, err := os.ReadFile(filepath.Join(dir, p))
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				if bytes.Contains(bytes.ToLower(b), []byte(leakToken)) {
					t.Errorf("%s still contains the token", p)
				}
			}
		})
	}
}

// racingFitter runs during() once, after reading the corpus and before
// its fit is stored: a purge that commits in between.
type racingFitter struct {
	fitEmbedder
	during func()
}

func (r *racingFitter) Fit(ctx context.Context, docs func(yield func(string) bool)) error {
	err := r.fitEmbedder.Fit(ctx, docs)
	if d := r.during; d != nil {
		r.during = nil
		d()
	}
	return err
}

// TestFitRacingAPurgeIsDiscarded: a fit that read the corpus before a
// purge committed is not stored; the corpus is fitted again without the
// purged messages.
func TestFitRacingAPurgeIsDiscarded(t *testing.T) {
	ctx := context.Background()
	db, conv := leakCorpus()
	f := &racingFitter{fitEmbedder: fitEmbedder{hashEmbedder: hashEmbedder{id: "fit", dim: 16}}}
	ix := openTest(t, t.TempDir(), Options{Embedder: f})
	// The bulk load fits in the background (prefit.go) while it builds
	// its indexes; the purge commits once the sync has returned, while
	// that fit is still being stored for the embedding pass.
	f.during = func() {
		if n, err := ix.Purge(ctx, conv); err != nil || n != 1 {
			t.Errorf("Purge = %d, %v", n, err)
		}
	}
	if _, err := ix.Sync(ctx, SyncOptions{}, db.source(nil)); err != nil { // no embedding yet
		t.Fatal(err)
	}
	if _, err := ix.Embed(ctx); err != nil {
		t.Fatal(err)
	}
	var data string
	if err := ix.rdb.QueryRow("SELECT data FROM embedder_state").Scan(&data); err != nil {
		t.Fatal(err)
	}
	if data != "10" || f.fits != 2 {
		t.Fatalf("stored state fitted on %s messages after %d fits; want the 10 left after the purge, fitted twice", data, f.fits)
	}
	if f.ID() != "fit/fit-10" {
		t.Fatalf("embedder in memory: %s", f.ID())
	}
}
