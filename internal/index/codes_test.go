package index

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// otcCorpus is smallCorpus plus a message whose code only an attribute run
// marks.
func otcCorpus() (*fakeDB, string, string) {
	db := smallCorpus()
	const code = "4K9QZ7"
	text := "Blue Heron Dental: " + code + " is your check-in pass"
	s := strings.Index(text, code)
	db.add(model.Message{ID: "otc1", ConversationIDs: []string{"iMessage;-;zoe@example.com"}, Sender: "zoe@example.com",
		Time: testNow.Add(-time.Hour), Text: text, TextSource: "attributedBody",
		Runs: []model.Run{{Start: 0, End: s}, {Start: s, End: s + len(code), OneTimeCode: true}, {Start: s + len(code), End: len(text)}}})
	return db, code, text
}

func TestMaskCodes(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		runs       []model.Run
		want       string
	}{
		{"no runs", "code 1234", nil, "code 1234"},
		{"run without the code flag", "code 1234", []model.Run{{Start: 5, End: 9}}, "code 1234"},
		{"code run", "code 1234 ok", []model.Run{{Start: 5, End: 9, OneTimeCode: true}}, "code      ok"},
		{"two runs, overlapping", "ab 12 34 cd", []model.Run{{Start: 3, End: 6, OneTimeCode: true}, {Start: 5, End: 8, OneTimeCode: true}}, "ab       cd"},
		{"run past the end is clipped", "x 99", []model.Run{{Start: 2, End: 50, OneTimeCode: true}}, "x   "},
		{"inverted run ignored", "x 99", []model.Run{{Start: 3, End: 2, OneTimeCode: true}}, "x 99"},
		{"run splitting a character widens to it", "é1é", []model.Run{{Start: 1, End: 3, OneTimeCode: true}}, "   é"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := maskCodes(tt.text, tt.runs)
			if got != tt.want || len(got) != len(tt.text) {
				t.Fatalf("maskCodes(%q) = %q, want %q (same length)", tt.text, got, tt.want)
			}
		})
	}
}

// TestOneTimeCodesAreNotIndexed: a run-marked code is in no index (FTS,
// terms, vocabulary, stored text) and no search mode matches, highlights or
// snippets it; history and hits still return the display text with its
// runs so the output boundary can mask it.
func TestOneTimeCodesAreNotIndexed(t *testing.T) {
	ctx := context.Background()
	db, code, text := otcCorpus()
	ix := openTest(t, t.TempDir(), Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	mustSync(t, ix, db.source(nil))
	checkCodeNotIndexed(t, ix, code, text)
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

func checkCodeNotIndexed(t *testing.T, ix *Index, code, text string) {
	t.Helper()
	ctx := context.Background()
	low := strings.ToLower(code)
	for _, q := range []string{
		"SELECT count(*) FROM terms WHERE term = '" + low + "'",
		"SELECT count(*) FROM fts WHERE fts MATCH '" + low + "'",
		"SELECT count(*) FROM messages WHERE text LIKE '%" + code + "%'",
	} {
		var n int
		if err := ix.rdb.QueryRow(q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s = %d, %v; want 0", q, n, err)
		}
	}
	ix.mem.mu.RLock()
	_, inVocab := ix.mem.voc.df[low]
	ix.mem.mu.RUnlock()
	if inVocab {
		t.Error("the code is in the in-memory vocabulary")
	}
	for _, mode := range []Mode{ModeFulltext, ModeSubstring, ModeHybrid, ModeSemantic} {
		for _, tt := range []struct {
			q     string
			match bool
		}{
			{code, false}, {low, false}, {"4K9", false}, {"QZ7", false}, {"4k9qz*", false}, {"4K9QZ8", false}, // typo expansion
			{"Dental: " + code, mode == ModeFulltext || mode == ModeHybrid},
			{"check-in pass", mode != ModeSemantic},
		} {
			r := mustSearch(t, ix, Query{Text: tt.q, Mode: mode, Limit: 50, Explain: true})
			var hit *Hit
			for i := range r.Hits {
				if r.Hits[i].MessageID == "otc1" {
					hit = &r.Hits[i]
				}
			}
			if in := r.Interpretation; in != nil {
				for _, tm := range in.Terms {
					for _, m := range tm.Matches {
						if strings.Contains(m, low) {
							t.Errorf("%s %q: the vocabulary offered %q", mode, tt.q, m)
						}
					}
				}
			}
			if (mode == ModeFulltext || mode == ModeSubstring) && (hit != nil) != tt.match {
				t.Errorf("%s %q: found %v, want %v", mode, tt.q, hit != nil, tt.match)
			}
			if hit == nil {
				continue
			}
			if hit.Text != text || !slices.ContainsFunc(hit.Runs, func(r model.Run) bool { return r.OneTimeCode }) {
				t.Errorf("%s %q: hit text %q runs %+v; want the display text with its code run", mode, tt.q, hit.Text, hit.Runs)
			}
			if strings.Contains(strings.ToLower(hit.Snippet), low) {
				t.Errorf("%s %q: snippet %q shows the code", mode, tt.q, hit.Snippet)
			}
			cs := strings.Index(text, code)
			for _, sp := range hit.Highlights {
				if sp[0] < cs+len(code) && sp[1] > cs {
					t.Errorf("%s %q: highlight %v covers the code", mode, tt.q, sp)
				}
			}
			if e := hit.Explain; e != nil && slices.Contains(e.Matched, low) {
				t.Errorf("%s %q: explain lists the code as matched", mode, tt.q)
			}
		}
	}
	h, err := ix.History(ctx, HistoryQuery{Chat: "zoe@example.com", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range h.Messages {
		if m.ID == "otc1" {
			found = m.Text == text && len(m.Runs) > 0
		}
	}
	if !found {
		t.Error("history does not return the display text with its runs")
	}
}

// TestStoredCodesAreMaskedOnUpgrade: an index written before codes were
// masked (raw text stored and indexed) is rewritten by the next sync.
func TestStoredCodesAreMaskedOnUpgrade(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, code, text := otcCorpus()
	ix := openTest(t, dir, Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	mustSync(t, ix, db.source(nil))
	// Put the row back the way an older version stored it.
	var id int64
	var masked string
	if err := ix.rdb.QueryRow("SELECT id, text FROM messages WHERE guid = 'otc1'").Scan(&id, &masked); err != nil {
		t.Fatal(err)
	}
	low := strings.ToLower(code)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{ftsDelete, []any{id, masked}},
		{"INSERT INTO fts(rowid, text) VALUES(?, ?)", []any{id, text}},
		{"UPDATE messages SET text = ?, extra = json_remove(extra, '$.text') WHERE id = ?", []any{text, id}},
		{"INSERT INTO terms(term, df) VALUES(?, 1)", []any{low}},
		{"UPDATE meta SET value = value + 1 WHERE key = 'total_len'", nil},
		{"DELETE FROM meta WHERE key = ?", []any{codesMaskedKey}},
	} {
		if _, err := ix.wdb.Exec(q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	ix.Close()
	ix = openTest(t, dir, Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	if r := mustSearch(t, ix, Query{Text: code, Mode: ModeSubstring}); len(r.Hits) != 1 {
		t.Fatalf("the simulated old index does not find the code: %v", hitIDs(r))
	}
	mustSync(t, ix, db.source(nil))
	checkCodeNotIndexed(t, ix, code, text)
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	// Once only: the flag is set, and a second sync changes nothing.
	if n, err := getMetaInt(ctx, ix.rdb, codesMaskedKey); err != nil || n != 1 {
		t.Fatalf("%s = %d, %v", codesMaskedKey, n, err)
	}
}
