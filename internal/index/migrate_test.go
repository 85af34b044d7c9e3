package index

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// TestMigrateFTSFromVersion1 opens an index written with schema version 1
// (FTS5 with contentless_delete=1) and checks that migration 2 rebuilds the
// full-text index from the stored rows, and that edits and deletions then
// work with FTS5's 'delete' command.
func TestMigrateFTSFromVersion1(t *testing.T) {
	dir := t.TempDir()
	db := smallCorpus()
	clock := testNow
	ix := openTest(t, dir, Options{Now: func() time.Time { return clock }})
	src := db.source(func() time.Time { return clock })
	mustSync(t, ix, src)
	// Turn it into a version-1 index: the old FTS table, filled the way
	// version 1 filled it.
	for _, q := range []string{
		"DROP TABLE fts",
		`CREATE VIRTUAL TABLE fts USING fts5(text, content='', contentless_delete=1, detail=none, tokenize='unicode61 remove_diacritics 2')`,
		`INSERT INTO fts(rowid, text) SELECT id, CASE WHEN search_extra IS NULL THEN text ELSE text || char(10) || search_extra END FROM messages WHERE searchable = 1`,
		// Version 1 had no term records (migration 4).
		"DROP TABLE docterms",
		"DELETE FROM meta WHERE key = 'docterms_from'",
		"PRAGMA user_version = 1",
	} {
		if _, err := ix.wdb.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ix.Close()

	ix = openTest(t, dir, Options{Now: func() time.Time { return clock }})
	var sql string
	if err := ix.rdb.QueryRow("SELECT sql FROM sqlite_master WHERE name = 'fts'").Scan(&sql); err != nil {
		t.Fatal(err)
	}
	if !containsAll(sql, "columnsize=0", "detail=none") || containsAll(sql, "contentless_delete") {
		t.Fatalf("fts after migration: %s", sql)
	}
	var n int
	if err := ix.rdb.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'fts_docsize'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("fts_docsize tables: %d, %v; want none", n, err)
	}
	ctx := context.Background()
	if err := ix.Verify(ctx); err != nil {
		t.Fatalf("verify after migration: %v", err)
	}
	if got := hitIDs(mustSearch(t, ix, Query{Text: "dentist", Mode: ModeFulltext})); !slices.Equal(got, []string{"m5"}) {
		t.Fatalf("dentist after migration: %v", got)
	}
	// An edit and a deletion go through the 'delete' command.
	clock = clock.Add(time.Minute)
	db.update("m5", clock, func(m *model.Message) {
		m.Text = "The orthodontist appointment moved to Thursday"
		m.Edited, m.TimeEdited = true, clock
	})
	db.remove("m1")
	mustSync(t, ix, src)
	for _, c := range []struct {
		q    string
		want []string
	}{{"orthodontist", []string{"m5"}}, {"dentist", nil}, {"tuesday", nil}} {
		if got := hitIDs(mustSearch(t, ix, Query{Text: c.q, Mode: ModeFulltext})); !slices.Equal(got, c.want) {
			t.Errorf("%q after edit = %v, want %v", c.q, got, c.want)
		}
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatalf("verify after edit: %v", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
