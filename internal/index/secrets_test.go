package index

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy/redact"
)

// secretCorpus is smallCorpus plus messages whose secrets only the
// redactor's rules find (no code run): a card number in a body and in a
// subject, a keyword-bound code.
func secretCorpus() *fakeDB {
	db := smallCorpus()
	for _, m := range []model.Message{
		{ID: "card1", Text: "my card is 4111 1111 1111 1111 for the kayak booking"},
		{ID: "code1", Text: "Your kayak club verification code is 482913"},
		{ID: "subj1", Subject: "card 5555 5555 5555 4444", Text: "kayak deposit details"},
	} {
		m.ConversationIDs = []string{"iMessage;-;zoe@example.com"}
		m.Sender = "zoe@example.com"
		m.Time = testNow.Add(-time.Hour)
		db.add(m)
	}
	return db
}

// secretProbes are secrets of secretCorpus with a wrong guess of the same
// shape each.
var secretProbes = []struct{ secret, wrong string }{
	{"4111 1111 1111 1111", "4111 1111 1111 1112"},
	{"4111111111111111", "4111111111111112"},
	{"4111 1111", "4112 1111"},
	{"482913", "482914"},
	{"code is 4829", "code is 4828"},
	{"5555 5555 5555 4444", "5555 5555 5555 4445"},
}

// searchAnswer is what a search says besides its echo.
func searchAnswer(t *testing.T, ix *Index, q string, mode Mode) string {
	t.Helper()
	r := mustSearch(t, ix, Query{Text: q, Mode: mode, Limit: 100})
	var b strings.Builder
	for _, h := range r.Hits {
		b.WriteString(h.MessageID + " " + strings.TrimSpace(strings.ReplaceAll(h.Snippet, q, "")) + ";")
	}
	// The coverage note names the query's words (an echo).
	cov := r.Coverage
	if cov.Fulltext != nil {
		c := *cov.Fulltext
		c.Note = ""
		cov.Fulltext = &c
	}
	cj, _ := json.Marshal(cov)
	return b.String() + string(cj)
}

func checkSecretsNotIndexed(t *testing.T, ix *Index) {
	t.Helper()
	for _, q := range []string{
		"SELECT count(*) FROM terms WHERE term IN ('482913', '4111', '5555', '4444')",
		"SELECT count(*) FROM fts WHERE fts MATCH '482913 OR 4111 OR 5555'",
		"SELECT count(*) FROM messages WHERE text LIKE '%4111%' OR text LIKE '%482913%' OR search_extra LIKE '%5555%'",
	} {
		var n int
		if err := ix.rdb.QueryRow(q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s = %d, %v; want 0", q, n, err)
		}
	}
	for _, mode := range []Mode{ModeFulltext, ModeSubstring, ModeHybrid} {
		for _, p := range secretProbes {
			if mode == ModeHybrid {
				// The test embedder hashes the query's words, so semantic
				// results differ between any two queries (the MCP red-team
				// test checks hybrid with the built-in embedder).
				break
			}
			// Hits, snippets and coverage may not depend on whether the
			// guess is right.
			if got, want := searchAnswer(t, ix, p.secret, mode), searchAnswer(t, ix, p.wrong, mode); got != want {
				t.Errorf("%s: %q answers %s, the wrong %q %s", mode, p.secret, got, p.wrong, want)
			}
		}
		// The messages' other words still find them, with the display text.
		r := mustSearch(t, ix, Query{Text: "kayak", Mode: mode, Limit: 50})
		for _, id := range []string{"card1", "code1", "subj1"} {
			i := slices.IndexFunc(r.Hits, func(h Hit) bool { return h.MessageID == id })
			if i < 0 {
				if mode != ModeHybrid {
					t.Errorf("%s kayak: %s not found (%v)", mode, id, hitIDs(r))
				}
				continue
			}
			if h := r.Hits[i]; id == "card1" && !strings.Contains(h.Text, "4111 1111 1111 1111") {
				t.Errorf("%s: hit text %q is not the display text", mode, h.Text)
			}
		}
	}
	h, err := ix.History(context.Background(), HistoryQuery{Chat: "zoe@example.com", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range h.Messages {
		switch m.ID {
		case "card1", "code1":
			if !strings.ContainsAny(m.Text, "0123456789") {
				t.Errorf("history text of %s = %q, want the display text", m.ID, m.Text)
			}
		case "subj1":
			if m.Subject != "card 5555 5555 5555 4444" {
				t.Errorf("history subject = %q", m.Subject)
			}
		}
	}
}

// TestSecretsAreNotIndexed: what the redactor masks is in no index and
// search answers the same for a secret and a wrong guess of it.
func TestSecretsAreNotIndexed(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	mustSync(t, ix, secretCorpus().source(nil))
	checkSecretsNotIndexed(t, ix)
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestStoredSecretsAreMaskedOnUpgrade: an index written before secrets
// were blanked is rewritten by the next sync.
func TestStoredSecretsAreMaskedOnUpgrade(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := secretCorpus()
	ix := openTest(t, dir, Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	mustSync(t, ix, db.source(nil))
	// Put the rows back the way an older version stored them.
	rows, err := ix.rdb.Query("SELECT id, text, coalesce(search_extra, ''), coalesce(json_extract(extra, '$.text'), text), subject FROM messages WHERE guid IN ('card1', 'code1', 'subj1')")
	if err != nil {
		t.Fatal(err)
	}
	type old struct {
		id                            int64
		stored, search, display, subj string
	}
	var olds []old
	for rows.Next() {
		var o old
		var subj *string
		if err := rows.Scan(&o.id, &o.stored, &o.search, &o.display, &subj); err != nil {
			t.Fatal(err)
		}
		if subj != nil {
			o.subj = *subj
		}
		olds = append(olds, o)
	}
	rows.Close()
	if len(olds) != 3 {
		t.Fatalf("found %d rows", len(olds))
	}
	for _, o := range olds {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{ftsDelete, []any{o.id, indexText(o.stored, o.search)}},
			{"INSERT INTO fts(rowid, text) VALUES(?, ?)", []any{o.id, indexText(o.display, o.subj)}},
			{"UPDATE messages SET text = ?, search_extra = nullif(?, ''), extra = CASE WHEN json_remove(extra, '$.text') = '{}' THEN NULL ELSE json_remove(extra, '$.text') END WHERE id = ?", []any{o.display, o.subj, o.id}},
		} {
			if _, err := ix.wdb.Exec(q.sql, q.args...); err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
		}
	}
	df := map[string]int32{}
	var lenDelta int64
	for _, o := range olds {
		ot, on := distinctTerms(o.stored, o.search)
		nt, nn := distinctTerms(o.display, o.subj)
		for _, x := range ot {
			df[x]--
		}
		for _, x := range nt {
			df[x]++
		}
		lenDelta += int64(nn - on)
	}
	tx, err := ix.wdb.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := writeTerms(ctx, tx, df); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"UPDATE meta SET value = value + ? WHERE key = 'total_len'", []any{lenDelta}},
		{"DELETE FROM meta WHERE key = ?", []any{secretsMaskedKey}},
	} {
		if _, err := tx.Exec(q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	// Term records of the unmasked rows, as an index with records had them
	// before a new class of secret: the upgrade must rewrite them too.
	ix.mem.mu.Lock()
	for _, o := range olds {
		_, _, ix.mem.tupd[o.id] = termRecord(o.display, o.subj)
	}
	err = ix.mem.persistDocmeta(ctx, tx, ix.mem.gen)
	ix.mem.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix = openTest(t, dir, Options{Embedder: &hashEmbedder{id: "h", dim: 32}})
	if err := ix.Verify(ctx); err != nil {
		t.Fatalf("the simulated old index is inconsistent: %v", err)
	}
	if r := mustSearch(t, ix, Query{Text: "4111 1111", Mode: ModeSubstring}); len(r.Hits) != 1 {
		t.Fatalf("the simulated old index does not find the card: %v", hitIDs(r))
	}
	mustSync(t, ix, db.source(nil))
	checkSecretsNotIndexed(t, ix)
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := getMetaInt(ctx, ix.rdb, secretsMaskedKey); err != nil || n != 1 {
		t.Fatalf("%s = %d, %v", secretsMaskedKey, n, err)
	}
}

// TestSecretsNeedDigits: the pre-check that skips the redactor for texts
// without a digit loses nothing — every finding of the redactor's
// evaluation corpus holds a digit.
func TestSecretsNeedDigits(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "policy", "redact", "testdata", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := redact.Default()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var c struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		_, fs := r.Redact(c.Text, redact.Hints{})
		for _, x := range fs {
			n++
			if s := c.Text[x.Start:x.End]; !mayHoldSecret(s) {
				t.Errorf("finding %s %q of %q has no digit", x.Class, s, c.Text)
			}
		}
		if len(fs) > 0 && !mayHoldSecret(c.Text) {
			t.Errorf("%q has findings but fails the pre-check", c.Text)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 200 {
		t.Fatalf("only %d findings in the corpus", n)
	}
}

// TestSecretSpellingsBlanked: the pre-check admits, and the index blanks,
// the real-world spellings the redactor reads through (docs/redaction.md,
// "Separators"): typographic dashes, Unicode spaces, doubled spaces, mixed
// separators, a line break, digit pairs, spaced-out codes.
func TestSecretSpellingsBlanked(t *testing.T) {
	for _, tc := range []struct{ text, secret string }{
		{"card 4111–1111–1111–1111 ok", "4111–1111–1111–1111"},
		{"card 4111—1111—1111—1111 ok", "4111—1111—1111—1111"},
		{"card 4111/1111/1111/1111 ok", "4111/1111/1111/1111"},
		{"card 4539  5260  1815  9083 ok", "4539  5260  1815  9083"},
		{"card 4111-1111 1111.1111 ok", "4111-1111 1111.1111"},
		{"card 4111 1111\n1111 1111 ok", "4111 1111\n1111 1111"},
		{"card 41 11 11 11 11 11 11 11 ok", "41 11 11 11 11 11 11 11"},
		{"card 4539\u20095260\u20091815\u20099083 ok", "4539\u20095260\u20091815\u20099083"},
		{"card 4111−1111−1111−1111 ok", "4111−1111−1111−1111"},
		{"ssn 536–22–1847 ok", "536–22–1847"},
		{"your code is 1 2 3 4 5 6", "1 2 3 4 5 6"},
		// Group boundaries (docs/redaction.md): a card or SSN after
		// another number, underscores, every digit spaced, other scripts.
		{"card number: 1 4111 1111 1111 1111 ok", "4111 1111 1111 1111"},
		{"A3 4111111111111111 ok", "4111111111111111"},
		{"ssn 1 536-22-1847 ok", "536-22-1847"},
		{"card 4111_1111_1111_1111 ok", "4111_1111_1111_1111"},
		{"card 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 ok", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"},
		{"بطاقتي ٤١١١ ١١١١ ١١١١ ١١١١ شكرا", "٤١١١ ١١١١ ١١١١ ١١١١"},
		{"कार्ड ४१११-११११-११११-११११ ok", "४१११-११११-११११-११११"},
	} {
		if !mayHoldSecret(tc.text) {
			t.Errorf("pre-check skips %q", tc.text)
		}
		got := indexedText(tc.text, nil)
		want := strings.Replace(tc.text, tc.secret, strings.Repeat(" ", len(tc.secret)), 1)
		if got != want {
			t.Errorf("indexedText(%q) = %q, want %q", tc.text, got, want)
		}
		if got := blankSecrets(tc.text); got != want {
			t.Errorf("blankSecrets(%q) = %q, want %q", tc.text, got, want)
		}
	}
}
