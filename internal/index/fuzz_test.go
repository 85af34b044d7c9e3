package index

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/index/fold"
)

var (
	probeOnce sync.Once
	probeDB   *sql.DB
	probeErr  error
)

// sqliteTerms tokenizes s with SQLite's own unicode61 tokenizer.
func sqliteTerms(t *testing.T, s string) []string {
	probeOnce.Do(func() {
		probeDB, probeErr = sql.Open("sqlite", "file::memory:")
		if probeErr == nil {
			probeDB.SetMaxOpenConns(1)
			_, probeErr = probeDB.Exec(`CREATE VIRTUAL TABLE p USING fts5(x, tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE pv USING fts5vocab(p, instance);`)
		}
	})
	if probeErr != nil {
		t.Fatal(probeErr)
	}
	if _, err := probeDB.Exec("DELETE FROM p"); err != nil {
		t.Fatal(err)
	}
	if _, err := probeDB.Exec("INSERT INTO p(rowid, x) VALUES(1, ?)", s); err != nil {
		t.Fatal(err)
	}
	rows, err := probeDB.Query("SELECT term FROM pv ORDER BY offset")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var term string
		rows.Scan(&term)
		out = append(out, term)
	}
	return out
}

// FuzzTokenize checks that the Go tokenizer produces exactly SQLite's terms
// for any text (after the same sanitising the index applies).
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"Café Rouge", "naïve ﬁsh İstanbul", "e\u0301x 🧗‍♀️ 😂", "中文 한국어 Ωμέγα", "$40.50 3:30pm", "\xff\xfe bad utf8", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = fold.Sanitize(s)
		if !utf8.ValidString(s) {
			t.Fatal("fold.Sanitize left invalid UTF-8")
		}
		got, want := fold.Terms(s), sqliteTerms(t, s)
		if !slices.Equal(got, want) {
			t.Fatalf("%q:\n go     %q\n sqlite %q", s, got, want)
		}
	})
}

var (
	fuzzIxOnce sync.Once
	fuzzIx     *Index
)

// FuzzQuery feeds arbitrary query text and filters to Search: it must
// answer or refuse with ErrBadQuery/ErrNotFound, never panic or fail
// otherwise.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"dinner last week", `"book a table"`, "climb*", "***", `"`, "in march 2099", "since 1900", "🎉", "-", "a OR b AND NOT c", "NEAR(a b)", "' OR 1=1 --", "%_\\"} {
		f.Add(s, "fulltext", 0, 10)
		f.Add(s, "substring", 3, 5)
		f.Add(s, "hybrid", 0, 1)
	}
	dir := f.TempDir()
	f.Cleanup(func() {
		if fuzzIx != nil {
			fuzzIx.Close()
		}
	})
	f.Fuzz(func(t *testing.T, text, mode string, days, limit int) {
		fuzzIxOnce.Do(func() {
			ix, err := Open(context.Background(), dir+"/index.db", Options{Embedder: &hashEmbedder{id: "h", dim: 32}, Now: func() time.Time { return testNow }})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ix.Sync(context.Background(), SyncOptions{Embed: true}, smallCorpus().source(nil)); err != nil {
				t.Fatal(err)
			}
			fuzzIx = ix
		})
		r, err := fuzzIx.Search(context.Background(), Query{Text: text, Mode: Mode(mode), Days: days, Limit: limit})
		if err != nil {
			if !errors.Is(err, ErrBadQuery) && !errors.Is(err, ErrNotFound) {
				t.Fatalf("%q/%s: unexpected error %v", text, mode, err)
			}
			return
		}
		if len(r.Hits) > MaxLimit {
			t.Fatalf("%d hits", len(r.Hits))
		}
		for _, h := range r.Hits {
			for _, sp := range h.Highlights {
				if sp[0] < 0 || sp[1] > len(h.Text) || sp[0] > sp[1] {
					t.Fatalf("highlight %v outside text of %d bytes", sp, len(h.Text))
				}
			}
		}
	})
}
