package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/fold"
	"github.com/tidings-mcp/tidings/internal/model"
)

func searchIndex(t *testing.T, opts Options) *Index {
	t.Helper()
	if opts.Embedder == nil {
		opts.Embedder = &hashEmbedder{id: "hash/v1", dim: 64, syn: map[string]string{"money": "owe", "cash": "owe", "tix": "tickets"}}
	}
	ix := openTest(t, t.TempDir(), opts)
	if opts.Now != nil {
		// A test that pins its own clock gets the corpus at that clock.
		mustSync(t, ix, smallCorpusAt(opts.Now()).source(opts.Now))
		return ix
	}
	mustSync(t, ix, smallCorpus().source(nil))
	return ix
}

// calendarNow is the literal clock of the tests of calendar arithmetic
// (month and week boundaries checked against literal expectations): they
// pin the index and the corpus to it, so nothing meets the real clock.
func calendarNow() time.Time {
	return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // literal date: calendar arithmetic, a Monday ending a month
}

func TestFulltextNaturalQueries(t *testing.T) {
	ix := searchIndex(t, Options{})
	for _, c := range []struct {
		q     string
		first string   // expected top hit
		all   []string // or the exact hit set
	}{
		{q: "dinner", all: []string{"m8", "m3"}},
		{q: "DINNER", all: []string{"m8", "m3"}},
		{q: "cafe", first: "m3"},                                // diacritics folded
		{q: "what did they say about the dentist", first: "m5"}, // stop-words dropped
		{q: "owed", all: []string{"m6", "m1"}},                  // owe, owing via stemming
		{q: "dentsit", first: "m5"},                             // typo
		{q: "climb*", first: "m7"},                              // explicit prefix
		{q: "dinner after", first: "m8"},                        // both words beat one
		{q: "dinner tonight", all: []string{"m7", "m8", "m3"}},  // OR semantics: the rarer word ranks first
		{q: "appointment tuesday", first: "m5"},                 // more matching words rank higher
		{q: `"book a table"`, all: []string{"m4"}},              // quoted phrase must appear
		{q: `"table a book"`, all: nil},
		{q: "xylophone", all: nil},
	} {
		r := mustSearch(t, ix, Query{Text: c.q, Mode: ModeFulltext, LiteralDates: c.q == "dinner tonight"})
		got := hitIDs(r)
		if c.first != "" {
			if len(got) == 0 || got[0] != c.first {
				t.Errorf("%q: hits %v, want %s first", c.q, got, c.first)
			}
		} else if !slices.Equal(got, c.all) {
			t.Errorf("%q: hits %v, want %v", c.q, got, c.all)
		}
		if !r.ScanComplete {
			t.Errorf("%q: scan incomplete on a tiny index: %+v", c.q, r.Coverage.Fulltext)
		}
	}
}

func TestRelativeDates(t *testing.T) {
	ix := searchIndex(t, Options{Now: calendarNow})
	// Asked as a time window: a hard filter.
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"messages about dinner last week", []string{"m8"}}, // 2026-11-27 is in the week starting Monday 2026-11-23
		{"what did they say about dinner in the last 5 days", []string{"m8"}},
		{"texts about dinner this month", []string{"m3", "m8"}},
		{"what did anyone say about dinner yesterday", nil},
		{"what did I text yesterday", []string{"m9"}},
		{"who texted me about owing money in October", []string{"m1"}},
		{"did anyone mention the dentist last month", nil},
	} {
		r := mustSearch(t, ix, Query{Text: c.q, Mode: ModeFulltext})
		got := hitIDs(r)
		slices.Sort(got)
		want := slices.Clone(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v (interpreted %+v)", c.q, got, want, r.Interpretation)
		}
		if r.Interpretation == nil || r.Interpretation.DateText == "" {
			t.Errorf("%q: no date filter", c.q)
		}
	}
	// A relative date that describes the topic ranks, it does not hide.
	if r := mustSearch(t, ix, Query{Text: "dinner", Mode: ModeFulltext}); len(r.Hits) < 2 || r.Hits[0].MessageID != "m8" {
		t.Fatalf("precondition: dinner → %v, want m8 first", hitIDs(r))
	}
	for _, c := range []struct {
		q     string
		first string
		all   []string
	}{
		{"dinner 10 days ago", "m3", []string{"m3", "m8"}}, // m3 was sent 10 days ago and now ranks first
		{"dinner yesterday", "m8", []string{"m3", "m8"}},   // neither was sent yesterday: order unchanged
		{"photos today", "m10", []string{"m10"}},
		{"dentist last month", "m5", []string{"m5"}},
	} {
		for _, mode := range []Mode{ModeFulltext, ModeHybrid} {
			r := mustSearch(t, ix, Query{Text: c.q, Mode: mode})
			got := hitIDs(r)
			if mode == ModeFulltext {
				sorted := slices.Clone(got)
				slices.Sort(sorted)
				if !slices.Equal(sorted, c.all) {
					t.Errorf("%s %q: %v, want %v", mode, c.q, got, c.all)
				}
			}
			if len(got) == 0 || got[0] != c.first {
				t.Errorf("%s %q: %v, want %s first", mode, c.q, got, c.first)
			}
			if in := r.Interpretation; in == nil || in.DateText != "" || in.SoftDate == nil {
				t.Errorf("%s %q: interpreted %+v, want a soft date and no filter", mode, c.q, in)
			}
		}
	}
	// LiteralDates keeps the words.
	r := mustSearch(t, ix, Query{Text: "tonight", Mode: ModeFulltext, LiteralDates: true})
	if got := hitIDs(r); !slices.Equal(got, []string{"m7"}) {
		t.Errorf("literal tonight: %v", got)
	}
}

func TestSubstringSearch(t *testing.T) {
	ix := searchIndex(t, Options{})
	for _, c := range []struct {
		q    string
		want []string // newest first
	}{
		{"dinner", []string{"m8", "m3"}},
		{"INNE", []string{"m8", "m3"}},           // inside a word, case-insensitive
		{"café", []string{"m3"}},                 // diacritics
		{"cafe rou", []string{"m3"}},             // spans words, open at the end
		{"e rouge on", []string{"m3"}},           // open at the start
		{"$40", []string{"m1"}},                  // punctuation kept in the pattern
		{"owe me $4", []string{"m1"}},            //
		{"❤️", []string{"m10"}},                  // no letters: message-by-message scan
		{"?", []string{"m10", "m8", "m7", "m3"}}, // newest first
		{"dinner at cafe", []string{"m3"}},
		{"dinnerat", nil},
		{"zzz", nil},
	} {
		r := mustSearch(t, ix, Query{Text: c.q, Mode: ModeSubstring, Limit: 20})
		if got := hitIDs(r); !slices.Equal(got, c.want) {
			t.Errorf("substring %q = %v, want %v", c.q, got, c.want)
		}
		if !r.ScanComplete {
			t.Errorf("substring %q incomplete: %+v", c.q, r.Coverage.Substring)
		}
	}
	r := mustSearch(t, ix, Query{Text: "cafe rou", Mode: ModeSubstring})
	if h := r.Hits[0]; h.Snippet != "Dinner at **Café Rou**ge on Saturday?" || len(h.Highlights) != 1 {
		t.Errorf("substring snippet %q highlights %v", h.Snippet, h.Highlights)
	}
}

func TestSemanticAndHybrid(t *testing.T) {
	ix := searchIndex(t, Options{})
	// "money" is a synonym of "owe" for the test embedder: semantic finds
	// what the words do not say.
	r := mustSearch(t, ix, Query{Text: "money", Mode: ModeSemantic, Explain: true})
	if got := hitIDs(r); len(got) == 0 || got[0] != "m1" {
		t.Fatalf("semantic money: %v", got)
	}
	if r.Hits[0].Explain.Semantic == nil || r.Hits[0].Explain.Semantic.Rank != 1 || r.Hits[0].Explain.Fulltext != nil {
		t.Errorf("semantic explain: %+v", r.Hits[0].Explain)
	}
	if r := mustSearch(t, ix, Query{Text: "money", Mode: ModeFulltext}); len(r.Hits) != 0 {
		t.Errorf("fulltext money: %v", hitTexts(r))
	}
	r = mustSearch(t, ix, Query{Text: "money dinner", Mode: ModeHybrid, Explain: true})
	got := hitIDs(r)
	if len(got) < 3 || got[0] != "m8" && got[0] != "m3" {
		t.Fatalf("hybrid: %v", got)
	}
	// m1 has no query word: only the semantic signal brings it in.
	var m1 *Hit
	for i := range r.Hits {
		if r.Hits[i].MessageID == "m1" {
			m1 = &r.Hits[i]
		}
	}
	if m1 == nil || m1.Explain.Fulltext != nil || m1.Explain.Semantic == nil {
		t.Fatalf("hybrid did not bring in m1 by meaning: %v", got)
	}
	for _, h := range r.Hits {
		e := h.Explain
		want := 0.0
		if e.Fulltext != nil {
			want += 1 / float64(RRFK+e.Fulltext.Rank)
		}
		if e.Semantic != nil {
			want += 1 / float64(RRFK+e.Semantic.Rank)
		}
		if e.Fused != want || h.Score != want {
			t.Errorf("%s: fused %v score %v, want %v", h.MessageID, e.Fused, h.Score, want)
		}
	}
	for i := 1; i < len(r.Hits); i++ {
		if r.Hits[i].Score > r.Hits[i-1].Score {
			t.Errorf("hybrid hits out of order at %d", i)
		}
	}
	if r.Mode != ModeHybrid || !r.ScanComplete || r.Coverage.Semantic == nil || r.Coverage.Fulltext == nil {
		t.Errorf("hybrid result: mode %s complete %v coverage %+v", r.Mode, r.ScanComplete, r.Coverage)
	}
}

// TestFiltersScopeEverySearchMode: conversation, contact (any format),
// handle, day, date-range and from-me filters give the same hits in
// full-text and substring mode, and hybrid mode adds only neighbours in
// scope; an unknown conversation, contact or handle is ErrNotFound and a bad
// query ErrBadQuery, never an empty result.
func TestFiltersScopeEverySearchMode(t *testing.T) {
	ix := searchIndex(t, Options{})
	yes, no := true, false
	for _, c := range []struct {
		name string
		q    Query
		want []string
	}{
		{"conversation id", Query{Text: "dinner", ConversationID: "iMessage;+;chat100"}, []string{"m8"}},
		{"chat identifier", Query{Text: "dinner", ConversationID: "+14155550101"}, []string{"m3"}},
		{"contact phone any format", Query{Text: "dinner", Contact: "(415) 555-0101"}, []string{"m8", "m3"}}, // direct + the group Sam is in
		{"contact email", Query{Text: "dinner", Contact: "ZOE@example.com"}, []string{"m8"}},
		{"handles", Query{Text: "dinner", Handles: []string{"4155550101"}}, []string{"m8", "m3"}},
		{"days", Query{Text: "dinner", Days: 5}, []string{"m8"}},
		{"since/until", Query{Text: "dinner", Since: testNow.AddDate(0, 0, -11), Until: testNow.AddDate(0, 0, -9)}, []string{"m3"}},
		{"from me", Query{Text: "table dinner owe", FromMe: &yes}, []string{"m4", "m6"}},
		{"not from me", Query{Text: "owing owe", FromMe: &no}, []string{"m1"}},
	} {
		for _, mode := range []Mode{ModeFulltext, ModeSubstring, ModeHybrid} {
			q := c.q
			q.Mode = mode
			if mode == ModeSubstring && strings.Contains(q.Text, " ") {
				continue
			}
			r := mustSearch(t, ix, q)
			got := hitIDs(r)
			want := slices.Clone(c.want)
			if mode != ModeSubstring { // ranked: compare as sets
				slices.Sort(want)
			}
			if mode == ModeHybrid {
				// Semantic neighbours may join, but only from the scope, and
				// every lexical hit must be there.
				for _, w := range want {
					if !slices.Contains(got, w) {
						t.Errorf("%s/hybrid: %v lacks %s", c.name, got, w)
					}
				}
				for _, id := range got {
					if !inScope(t, ix, id, q) {
						t.Errorf("%s/hybrid: %s is out of scope", c.name, id)
					}
				}
				continue
			}
			if mode == ModeFulltext {
				slices.Sort(got)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s/%s: %v, want %v", c.name, mode, got, want)
			}
		}
	}
	// An unknown conversation or contact is an error, not an empty result.
	for _, q := range []Query{{Text: "x", ConversationID: "chat999"}, {Text: "x", Contact: "Nobody Known"}, {Text: "x", Handles: []string{"+4930123456"}}} {
		if _, err := ix.Search(context.Background(), q); !errors.Is(err, ErrNotFound) {
			t.Errorf("%+v: err %v, want ErrNotFound", q, err)
		}
	}
	// (A blank query browses: TestSearchWithoutQueryBrowses in mcpserver.)
	for _, q := range []Query{{Text: "x", Mode: "fuzzy"}, {Text: "x", Days: -1}, {Text: "x", Limit: -3}, {Text: strings.Repeat("x", 1001)}} {
		if _, err := ix.Search(context.Background(), q); !errors.Is(err, ErrBadQuery) {
			t.Errorf("%+v: err %v, want ErrBadQuery", q, err)
		}
	}
}

func TestCursorsPageWithoutOverlap(t *testing.T) {
	db := newFakeDB()
	db.addConv(model.Conversation{ID: "c1", Identifier: "+15550100", Kind: model.KindDirect, Participants: []string{"+15550100"}})
	for i := 0; i < 57; i++ {
		db.add(model.Message{ID: fmt.Sprintf("p%02d", i), ConversationIDs: []string{"c1"}, Sender: "+15550100",
			Time: testNow.Add(-time.Duration(i) * time.Hour), Text: fmt.Sprintf("parking ticket number %d %s", i, strings.Repeat("again ", i%5))})
	}
	ix := openTest(t, t.TempDir(), Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	mustSync(t, ix, db.source(nil))
	for _, mode := range []Mode{ModeFulltext, ModeSubstring, ModeSemantic, ModeHybrid} {
		seen := map[string]bool{}
		q := Query{Text: "parking ticket", Mode: mode, Limit: 10}
		pages := 0
		var lastTime time.Time
		for {
			r := mustSearch(t, ix, q)
			pages++
			for _, h := range r.Hits {
				if seen[h.MessageID] {
					t.Fatalf("%s: %s on two pages", mode, h.MessageID)
				}
				seen[h.MessageID] = true
				if mode == ModeSubstring && !lastTime.IsZero() && h.Time.After(lastTime) {
					t.Fatalf("substring not newest first")
				}
				lastTime = h.Time
			}
			if r.NextCursor == "" {
				break
			}
			q.Cursor = r.NextCursor
		}
		if len(seen) != 57 || pages != 6 {
			t.Errorf("%s: %d messages over %d pages, want 57 over 6", mode, len(seen), pages)
		}
	}
	// A cursor from another query is refused.
	r := mustSearch(t, ix, Query{Text: "parking", Mode: ModeFulltext, Limit: 5})
	for _, q := range []Query{
		{Text: "ticket", Mode: ModeFulltext, Cursor: r.NextCursor},
		{Text: "parking", Mode: ModeSubstring, Cursor: r.NextCursor},
		{Text: "parking", Mode: ModeFulltext, Cursor: "garbage!"},
	} {
		if _, err := ix.Search(context.Background(), q); !errors.Is(err, ErrBadCursor) {
			t.Errorf("cursor misuse %+v: %v", q, err)
		}
	}
	// History pages.
	h, err := ix.History(context.Background(), HistoryQuery{Chat: "c1", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	n := len(h.Messages)
	for h.More {
		if h, err = ix.History(context.Background(), HistoryQuery{Chat: "c1", Limit: 20, Cursor: h.NextCursor}); err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(h.Messages); i++ {
			if h.Messages[i].Time.Before(h.Messages[i-1].Time) {
				t.Fatal("history page not chronological")
			}
		}
		n += len(h.Messages)
	}
	if n != 57 {
		t.Errorf("history pages hold %d messages, want 57", n)
	}
	// Before is strict: the message at exactly that time is not returned.
	h, err = ix.History(context.Background(), HistoryQuery{Chat: "c1", Before: testNow.Add(-10 * time.Hour), Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Messages) != 46 || !h.Messages[len(h.Messages)-1].Time.Before(testNow.Add(-10*time.Hour)) {
		t.Errorf("before: %d messages, last at %v", len(h.Messages), h.Messages[len(h.Messages)-1].Time)
	}
}

func TestScanCompleteIsHonest(t *testing.T) {
	db := newFakeDB()
	db.addConv(model.Conversation{ID: "c1", Identifier: "+15550100", Kind: model.KindDirect, Participants: []string{"+15550100"}})
	for i := 0; i < 300; i++ {
		text := fmt.Sprintf("lunch plans %d 🍕", i)
		if i == 5 {
			text = "lunch with the quokka"
		}
		db.add(model.Message{ID: fmt.Sprintf("x%03d", i), ConversationIDs: []string{"c1"}, Sender: "+15550100", Time: testNow.Add(-time.Duration(300-i) * time.Minute), Text: text})
	}
	ix := openTest(t, t.TempDir(), Options{Tuning: Tuning{TermCap: 100, SubstringScan: 50}})
	mustSync(t, ix, db.source(nil))
	r := mustSearch(t, ix, Query{Text: "lunch", Mode: ModeFulltext})
	if r.ScanComplete || !slices.Equal(r.Coverage.Fulltext.Capped, []string{"lunch"}) {
		t.Errorf("capped term: complete=%v coverage %+v", r.ScanComplete, r.Coverage.Fulltext)
	}
	// A rare word is read completely, and the old message that has it is
	// found even though the common word was capped.
	r = mustSearch(t, ix, Query{Text: "lunch quokka", Mode: ModeFulltext})
	if got := hitIDs(r); len(got) == 0 || got[0] != "x005" || r.ScanComplete {
		t.Errorf("rare + capped: %v complete=%v", got, r.ScanComplete)
	}
	if r := mustSearch(t, ix, Query{Text: "quokka", Mode: ModeFulltext}); !r.ScanComplete || len(r.Hits) != 1 {
		t.Errorf("rare term alone: complete=%v hits %d", r.ScanComplete, len(r.Hits))
	}
	// When the page is full of messages with the rare word, the unread
	// postings of the capped common word provably cannot outrank them: the
	// answer is complete, and says why.
	r = mustSearch(t, ix, Query{Text: "lunch quokka", Mode: ModeFulltext, Limit: 1})
	if !r.ScanComplete || len(r.Hits) != 1 || r.Hits[0].MessageID != "x005" || !strings.Contains(r.Coverage.Fulltext.Note, "cannot rank this high") {
		t.Errorf("bounded cap: complete=%v %+v", r.ScanComplete, r.Coverage.Fulltext)
	}
	// Substring: an emoji pattern is checked message by message up to the
	// cap; a pattern nothing matches cannot claim completeness after a cap.
	r = mustSearch(t, ix, Query{Text: "😂", Mode: ModeSubstring})
	if r.ScanComplete || len(r.Hits) != 0 || r.Coverage.Substring.Candidates < 50 {
		t.Errorf("capped substring scan: complete=%v %+v", r.ScanComplete, r.Coverage.Substring)
	}
	r = mustSearch(t, ix, Query{Text: "🍕", Mode: ModeSubstring, Limit: 5})
	if !r.ScanComplete || len(r.Hits) != 5 {
		t.Errorf("substring that fills its page early: complete=%v hits %d", r.ScanComplete, len(r.Hits))
	}
}

func TestVectorsRebuildWhenEmbedderChanges(t *testing.T) {
	dir := t.TempDir()
	db := smallCorpus()
	ix := openTest(t, dir, Options{Embedder: &hashEmbedder{id: "hash/v1", dim: 32}})
	mustSync(t, ix, db.source(nil))
	if st := ix.VectorStatus(); !st.Ready || st.Vectors != 10 {
		t.Fatalf("status %+v", st)
	}
	ix.Close()
	// A new embedder: searches fall back to full text and say so.
	emb2 := &hashEmbedder{id: "hash/v2", dim: 48}
	ix = openTest(t, dir, Options{Embedder: emb2})
	if st := ix.VectorStatus(); st.Ready {
		t.Fatalf("vectors of another embedder reported ready: %+v", st)
	}
	r := mustSearch(t, ix, Query{Text: "dinner", Mode: ModeHybrid})
	if r.Mode != ModeFulltext || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "full-text only") || len(r.Hits) != 2 {
		t.Fatalf("fallback: mode %s notes %v hits %v", r.Mode, r.Notes, hitTexts(r))
	}
	r = mustSearch(t, ix, Query{Text: "dinner", Mode: ModeSemantic})
	if r.Mode != ModeFulltext || r.RequestedMode != ModeSemantic {
		t.Fatalf("semantic fallback: mode %s", r.Mode)
	}
	n, err := ix.Embed(context.Background())
	if err != nil || n != 10 {
		t.Fatalf("re-embed: %d, %v", n, err)
	}
	if st := ix.VectorStatus(); !st.Ready || st.Embedder != "hash/v2" {
		t.Fatalf("after re-embed: %+v", st)
	}
	if r := mustSearch(t, ix, Query{Text: "dinner", Mode: ModeHybrid}); r.Mode != ModeHybrid {
		t.Fatalf("hybrid after re-embed: %s %v", r.Mode, r.Notes)
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestFitterStateIsPersisted(t *testing.T) {
	dir := t.TempDir()
	f1 := &fitEmbedder{hashEmbedder: hashEmbedder{id: "fit/v1", dim: 32}}
	ix := openTest(t, dir, Options{Embedder: f1})
	mustSync(t, ix, smallCorpus().source(nil))
	if f1.fits != 1 || f1.ID() != "fit/v1/fit-10" {
		t.Fatalf("fit: %d fits, id %s", f1.fits, f1.ID())
	}
	ix.Close()
	f2 := &fitEmbedder{hashEmbedder: hashEmbedder{id: "fit/v1", dim: 32}}
	ix = openTest(t, dir, Options{Embedder: f2})
	if f2.fits != 0 || f2.ID() != "fit/v1/fit-10" {
		t.Fatalf("restore: %d fits, id %s", f2.fits, f2.ID())
	}
	if st := ix.VectorStatus(); !st.Ready {
		t.Fatalf("restored embedder's vectors not ready: %+v", st)
	}
	if r := mustSearch(t, ix, Query{Text: "dinner", Mode: ModeSemantic}); r.Mode != ModeSemantic || len(r.Hits) == 0 {
		t.Fatalf("semantic after restore: %s %v", r.Mode, r.Notes)
	}
}

func TestTokenizerMatchesSQLiteOnText(t *testing.T) {
	samples := []string{
		"Café Rouge — naïve façade, Zoë's crème brûlée!",
		"İstanbul ıi Straße ǅemal ﬁsh Ⅻ ①②",
		"e\u0301 a\u0308b x\u200by 🧗‍♀️climb 😂😂",
		"中文字符测试 日本語のテキスト 한국어",
		"ΑΘΗΝΑ Ελληνικά — Ωμέγα; кириллица Ёж",
		"$40.50 for tix@venue.com #hashtag @mention 3:30pm",
		"\u00ad soft\u00adhyphen and\u2019apostrophe O'Brien",
	}
	// Compare Go terms with SQLite's through a scratch FTS5 table.
	ix := openTest(t, t.TempDir(), Options{})
	if _, err := ix.wdb.Exec(`CREATE VIRTUAL TABLE probe USING fts5(x, tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE probe_v USING fts5vocab(probe, instance);`); err != nil {
		t.Fatal(err)
	}
	for i, s := range samples {
		if _, err := ix.wdb.Exec("INSERT INTO probe(rowid, x) VALUES(?, ?)", i+1, s); err != nil {
			t.Fatal(err)
		}
		rows, err := ix.wdb.Query("SELECT term FROM probe_v WHERE doc = ? ORDER BY offset", i+1)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for rows.Next() {
			var term string
			rows.Scan(&term)
			want = append(want, term)
		}
		rows.Close()
		if got := fold.Terms(s); !slices.Equal(got, want) {
			t.Errorf("%q:\n go     %q\n sqlite %q", s, got, want)
		}
	}
}

// inScope checks a hit against a query's filters with plain SQL.
func inScope(t *testing.T, ix *Index, guid string, q Query) bool {
	t.Helper()
	var tms int64
	var fromMe bool
	var convGUID, ident string
	err := ix.rdb.QueryRow(`SELECT m.time, m.from_me, c.guid, c.identifier FROM messages m JOIN conversations c ON c.id = m.conv WHERE m.guid = ?`, guid).Scan(&tms, &fromMe, &convGUID, &ident)
	if err != nil {
		t.Fatal(err)
	}
	tm := time.UnixMilli(tms)
	switch {
	case q.ConversationID != "" && q.ConversationID != convGUID && q.ConversationID != ident,
		q.FromMe != nil && *q.FromMe != fromMe,
		q.Days > 0 && tm.Before(testNow.AddDate(0, 0, -q.Days)),
		!q.Since.IsZero() && tm.Before(q.Since),
		!q.Until.IsZero() && !tm.Before(q.Until):
		return false
	}
	return true
}
