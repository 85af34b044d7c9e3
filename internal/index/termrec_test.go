package index

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/fold"
	"github.com/tidings-mcp/tidings/internal/model"
)

// recordCorpus is smallCorpus plus messages made for full-text ranking:
// repeated words, inflections, prefixes, a subject, and many messages
// sharing one word so a page is a small part of the candidates.
func recordCorpus() *fakeDB {
	db := smallCorpus()
	sam := "iMessage;-;+14155550101"
	grp := "iMessage;+;chat100"
	texts := []string{
		"dinner dinner dinner, who is cooking dinner",
		"dinners this week: Monday and Friday",
		"we owe them dinner and we owed them lunch",
		"climbing, climbed, climbs: the climber's week",
		"plans for dinner? plans plans plans",
		"I owe you, you owe me, we all owe",
		"the dinner plans changed again",
	}
	for i := range 60 {
		at := testNow.Add(-time.Duration(60-i) * time.Hour)
		text := texts[i%len(texts)]
		if i >= len(texts) {
			text = fmt.Sprintf("%s (round %d, dinner note %d)", text, i, i%5)
		}
		m := model.Message{ID: fmt.Sprintf("r%d", i), ConversationIDs: []string{sam}, Sender: "+14155550101", Time: at, Text: text, TextSource: "text"}
		if i%9 == 0 {
			m.ConversationIDs = []string{grp}
			m.Subject = "dinner plans"
		}
		db.add(m)
	}
	return db
}

// recordQueries are full-text queries over recordCorpus: one word,
// repeated words, inflections (stems), a prefix, a typo, several words.
var recordQueries = []string{"dinner", "dinner plans", "owe", "climb*", "dinenr", "plans to owe dinner", "week monday", "chalk gym tonight", "photos weekend"}

// TestRecordScoresEqualTextScores pins that ranking from term records is
// ranking from the text: for every query and mode, the hits, their order,
// scores, highlights, snippets and matched terms are those of scoring every
// candidate from its stored text.
func TestRecordScoresEqualTextScores(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, dir, Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	mustSync(t, ix, recordCorpus().source(nil))
	ctx := context.Background()
	for _, mode := range []Mode{ModeFulltext, ModeHybrid} {
		for _, q := range recordQueries {
			for _, limit := range []int{3, 50} {
				query := Query{Text: q, Mode: mode, Limit: limit, Explain: true}
				ix.textScoring = true
				want, err := ix.Search(ctx, query)
				if err != nil {
					t.Fatal(err)
				}
				ix.textScoring = false
				got, err := ix.Search(ctx, query)
				if err != nil {
					t.Fatal(err)
				}
				if len(want.Hits) == 0 && q != "dinenr" {
					t.Fatalf("%s %q: no hits; the query set should match", mode, q)
				}
				if !reflect.DeepEqual(got.Hits, want.Hits) {
					t.Errorf("%s %q limit %d: hits from term records differ from hits from text:\n got %+v\nwant %+v", mode, q, limit, got.Hits, want.Hits)
				}
				if got.NextCursor != want.NextCursor || got.ScanComplete != want.ScanComplete {
					t.Errorf("%s %q: paging/completeness differ", mode, q)
				}
			}
		}
	}
}

// TestFulltextReadsOnlyThePageTexts pins where full-text ranking's cost
// goes: candidates are scored from their term records, and only the texts
// of the hits the page shows are read (before: every candidate's, up to
// RerankDepth per query; issue 24).
func TestFulltextReadsOnlyThePageTexts(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	mustSync(t, ix, recordCorpus().source(nil))
	ctx := context.Background()
	for _, tc := range []struct {
		mode  Mode
		query string
		limit int
	}{
		{ModeFulltext, "dinner", 3},
		{ModeFulltext, "dinner plans", 5},
		{ModeHybrid, "dinner", 3},
		{ModeHybrid, "plans to owe dinner", 4},
		{ModeFulltext, "climb*", 2},
	} {
		before := ix.textsRead.Load()
		r, err := ix.Search(ctx, Query{Text: tc.query, Mode: tc.mode, Limit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		read := ix.textsRead.Load() - before
		if r.Coverage.Fulltext == nil || r.Coverage.Fulltext.Candidates <= tc.limit {
			t.Fatalf("%s %q: %+v candidates; the case needs more candidates than the page", tc.mode, tc.query, r.Coverage.Fulltext)
		}
		if read > int64(len(r.Hits)) {
			t.Errorf("%s %q limit %d: read %d texts for %d hits (%d candidates); want only the page's", tc.mode, tc.query, tc.limit, read, len(r.Hits), r.Coverage.Fulltext.Candidates)
		}
	}
}

// TestTermRecordsMatchARecount pins that the term records stay equal to a
// recount of the stored text through every write: sync, edit, deletion,
// purge, a reopen (records loaded from docterms) and a second process's
// writes picked up by refresh. Verify recounts every record.
func TestTermRecordsMatchARecount(t *testing.T) {
	dir := t.TempDir()
	db := recordCorpus()
	clock := testNow
	now := func() time.Time { return clock }
	ix := openTest(t, dir, Options{Now: now})
	ctx := context.Background()
	check := func(step string, ix *Index) {
		t.Helper()
		if err := ix.Verify(ctx); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		ix.mem.mu.RLock()
		defer ix.mem.mu.RUnlock()
		for id := range ix.mem.flags {
			searchable := ix.mem.flags[id]&(fLive|fSearchable) == fLive|fSearchable
			if has := len(ix.mem.termRec(int64(id))) > 0; has != searchable {
				t.Fatalf("%s: message %d searchable %v, has a term record in memory %v", step, id, searchable, has)
			}
		}
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"first sync", func() {}},
		{"edit", func() {
			clock = clock.Add(time.Minute)
			db.update("r3", clock, func(m *model.Message) { m.Text = "nothing about food now, only owe owe owe" })
			db.update("m5", clock, func(m *model.Message) { m.Text = "" })
		}},
		{"delete", func() { db.remove("r4"); db.remove("m3") }},
		{"new messages", func() {
			db.add(model.Message{ID: "late1", ConversationIDs: []string{"iMessage;-;zoe@example.com"}, Sender: "zoe@example.com", Time: clock, Text: "late dinner late dinner", TextSource: "text"})
		}},
	}
	for _, s := range steps {
		s.do()
		mustSync(t, ix, db.source(now))
		check(s.name, ix)
	}
	if _, err := ix.Purge(ctx, "iMessage;+;chat100"); err != nil {
		t.Fatal(err)
	}
	check("purge", ix)
	// A second process writes; the first picks the records up.
	other := openTest(t, dir, Options{Now: now})
	db.add(model.Message{ID: "other1", ConversationIDs: []string{"iMessage;-;+14155550101"}, Sender: "+14155550101", Time: clock, Text: "dinner from the other process", TextSource: "text"})
	mustSync(t, other, db.source(now))
	mustSearch(t, ix, Query{Text: "process", Mode: ModeFulltext})
	check("refresh after another process", ix)
	ix.Close()
	check("reopen", openTest(t, dir, Options{Now: now}))
}

// TestTermHashCollisionScoresFromText pins that a query term whose record
// hash another vocabulary term shares ("glbvs" and "yacxa" have the same
// FNV-1a hash) is scored from the text: the record cannot tell them apart.
func TestTermHashCollisionScoresFromText(t *testing.T) {
	if termHash([]byte("glbvs")) != termHash([]byte("yacxa")) {
		t.Fatal("the test's words no longer collide")
	}
	db := smallCorpus()
	sam := "iMessage;-;+14155550101"
	for i, text := range []string{"glbvs lunch", "yacxa yacxa yacxa lunch", "lunch lunch"} {
		db.add(model.Message{ID: fmt.Sprintf("c%d", i), ConversationIDs: []string{sam}, Sender: "+14155550101", Time: testNow.Add(-time.Duration(i) * time.Hour), Text: text, TextSource: "text"})
	}
	ix := openTest(t, t.TempDir(), Options{})
	mustSync(t, ix, db.source(nil))
	ctx := context.Background()
	q := Query{Text: "glbvs lunch", Mode: ModeFulltext, Explain: true}
	ix.textScoring = true
	want, err := ix.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	ix.textScoring = false
	got, err := ix.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Hits, want.Hits) {
		t.Fatalf("colliding term: hits differ from text scoring:\n got %+v\nwant %+v", got.Hits, want.Hits)
	}
	if len(got.Hits) < 3 || got.Hits[0].MessageID != "c0" {
		t.Fatalf("glbvs lunch: %v, want c0 first", hitIDs(got))
	}
}

// TestBulkLoadLeavesOneFTSSegment pins that the first load of an index
// ends with its full-text index merged into one segment: every query term
// seeks into each segment, and a bulk load leaves one per few batches
// (issue 24: 6 segments at 200k messages cost a hybrid search ~17 % more
// CPU).
func TestBulkLoadLeavesOneFTSSegment(t *testing.T) {
	db := smallCorpus()
	sam := "iMessage;-;+14155550101"
	words := []string{"dinner", "plans", "late", "keys", "flight", "rent", "party", "photos"}
	for i := range 3 * bulkBatch {
		db.add(model.Message{ID: fmt.Sprintf("b%d", i), ConversationIDs: []string{sam}, Sender: "+14155550101",
			Time: testNow.Add(-time.Duration(3*bulkBatch-i) * time.Minute), Text: fmt.Sprintf("%s %s w%d", words[i%len(words)], words[i/7%len(words)], i), TextSource: "text"})
	}
	ix := openTest(t, t.TempDir(), Options{})
	if rep := mustSync(t, ix, db.source(nil)); !rep.Bulk {
		t.Fatal("the first sync was not a bulk load")
	}
	var segs int
	if err := ix.rdb.QueryRow("SELECT count(DISTINCT segid) FROM fts_idx").Scan(&segs); err != nil {
		t.Fatal(err)
	}
	if segs != 1 {
		t.Fatalf("after the bulk load the full-text index has %d segments, want 1", segs)
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestTermRecordCountsEveryTerm pins the record against a naive count of
// fold.Terms: the length, and each distinct term's frequency under its
// hash, for short texts, texts past the 32 distinct terms where the count
// switches to a map, and a body with a subject.
func TestTermRecordCountsEveryTerm(t *testing.T) {
	long := ""
	for i := range 45 {
		long += fmt.Sprintf("w%d ", i%40) + "the "
	}
	for _, tc := range []struct{ text, extra string }{
		{"dinner dinner, Dinner!", ""},
		{"Café RÉSUMÉ cafe resume", "subject: café"},
		{long, "w1 w39 the"},
		{"", "only a subject"},
		{"🎉 !!", ""},
	} {
		terms, n, rec := termRecord(tc.text, tc.extra)
		want := map[string]int{}
		all := append(fold.Terms(tc.text), fold.Terms(tc.extra)...)
		for _, w := range all {
			want[w]++
		}
		if n != len(all) || len(terms) != len(want) {
			t.Fatalf("%q: length %d, %d distinct; want %d, %d", tc.text, n, len(terms), len(all), len(want))
		}
		if n == 0 {
			if rec != nil {
				t.Fatalf("%q: a record for no terms", tc.text)
			}
			continue
		}
		dl, ents, ok := recordLen(rec)
		if !ok || dl != n {
			t.Fatalf("%q: record length %d, want %d", tc.text, dl, n)
		}
		for w, c := range want {
			if got, ok := recordTF(ents, termHash([]byte(w))); !ok || got != c {
				t.Errorf("%q: tf(%q) = %d, want %d", tc.text, w, got, c)
			}
		}
		if got, ok := recordTF(ents, termHash([]byte("absent-term"))); !ok || got != 0 {
			t.Errorf("%q: tf of an absent term = %d", tc.text, got)
		}
	}
}
