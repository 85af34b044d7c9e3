package searcheval

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
)

var writeDoc = flag.Bool("write-doc", false, "rewrite the measured table in docs/search-quality.md")

func TestDatasetRules(t *testing.T) {
	d, err := Load(DefaultDistractors)
	if err != nil {
		t.Fatal(err)
	}
	msgs := map[string]Message{}
	for _, m := range d.Messages() {
		msgs[m.ID] = m
	}
	hand := len(msgs) - len(d.Distractors)
	if len(d.Conversations) < 15 || hand < 250 || len(d.Distractors) != DefaultDistractors {
		t.Fatalf("%d conversations, %d hand-written and %d distractor messages", len(d.Conversations), hand, len(d.Distractors))
	}
	n := map[string]int{}
	for _, q := range d.Queries {
		n[q.Type]++
		t.Run(q.ID, func(t *testing.T) {
			qt := Terms(q.Text)
			if len(qt) == 0 {
				t.Fatalf("%q has no content words", q.Text)
			}
			shared := 0
			for id := range q.Relevant {
				for _, w := range Terms(msgs[id].Text) {
					if slices.Contains(qt, w) {
						shared++
						if q.Type == TypeParaphrase {
							t.Errorf("paraphrase %q shares %q with %s %q", q.Text, w, id, msgs[id].Text)
						}
					}
				}
			}
			if q.Type == TypeLexical && shared == 0 {
				t.Errorf("lexical query %q shares no word with its relevant messages", q.Text)
			}
		})
	}
	if len(d.Queries) < 40 || 2*n[TypeParaphrase] < len(d.Queries) {
		t.Fatalf("%d queries, %d paraphrases: want ≥ 40 and at least half paraphrases", len(d.Queries), n[TypeParaphrase])
	}
	if again := Distractors(50); again[7] != d.Distractors[7] {
		t.Fatal("distractors are not deterministic")
	}
}

// TestNDCGAndRecallMatchHandComputedValues: NDCG (gain 2^rel−1, log2
// discount) and Recall at a cutoff equal hand-computed values, and a
// repeated id earns nothing after its first rank.
func TestNDCGAndRecallMatchHandComputedValues(t *testing.T) {
	rel := map[string]int{"a": 3, "b": 1}
	ideal := (7 + 1/math.Log2(3)) // 2^3−1 at rank 1, 2^1−1 at rank 2
	tests := []struct {
		ranked    []string
		ndcg, rec float64
	}{
		{[]string{"a", "b"}, 1, 1},
		{[]string{"b", "a"}, (1 + 7/math.Log2(3)) / ideal, 1},
		{[]string{"x", "a"}, (7 / math.Log2(3)) / ideal, 0.5},
		{[]string{"a", "a", "a"}, 7 / ideal, 0.5}, // duplicates earn nothing
		{nil, 0, 0},
	}
	for _, tt := range tests {
		if got := NDCG(tt.ranked, rel, 10); math.Abs(got-tt.ndcg) > 1e-12 {
			t.Errorf("NDCG(%v) = %v, want %v", tt.ranked, got, tt.ndcg)
		}
		if got := Recall(tt.ranked, rel, 10); math.Abs(got-tt.rec) > 1e-12 {
			t.Errorf("Recall(%v) = %v, want %v", tt.ranked, got, tt.rec)
		}
	}
	if got := NDCG([]string{"b", "a"}, rel, 1); math.Abs(got-1/7.0) > 1e-12 {
		t.Errorf("NDCG@1 = %v, want 1/7", got)
	}
}

// TestStemStripsSuffixesAndTermsDropStopWords: Stem strips inflection
// suffixes and leaves words that only end like one (bus, class, tix); Terms
// lower-cases, drops stop words and clitics, and stems.
func TestStemStripsSuffixesAndTermsDropStopWords(t *testing.T) {
	for in, want := range map[string]string{"owes": "owe", "owed": "owe", "tickets": "ticket", "parties": "party",
		"running": "run", "boxes": "box", "bus": "bus", "class": "class", "tix": "tix"} {
		if got := Stem(in); got != want {
			t.Errorf("Stem(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Terms("Sam's the money I'm OWED!"); !slices.Equal(got, []string{"sam", "money", "owe"}) {
		t.Errorf("Terms = %q", got)
	}
}

// Regression floors of the built-in embedder through the reference engine
// (measured values in docs/search-quality.md; floors sit a little below).
const (
	floorParaphraseGain = 0.10 // hybrid − fulltext nDCG@10 on paraphrases (the acceptance target)
	floorHybridAll      = 0.38
)

func TestBuiltinRetrievalQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("retrieval evaluation skipped in -short mode")
	}
	ctx := context.Background()
	d, err := Load(DefaultDistractors)
	if err != nil {
		t.Fatal(err)
	}
	e, err := embed.NewBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ref, err := NewReference(ctx, e, d.Messages())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fitted and indexed %d messages in %v", len(d.Messages()), time.Since(start))
	r, err := Evaluate(ctx, ref, d, Modes)
	if err != nil {
		t.Fatal(err)
	}
	table := r.Table(Modes)
	t.Logf("embedder %s\n%s", e.ID(), table)
	logPerQuery(t, r, d)

	ft, hy := r.ByType[ModeFulltext], r.ByType[ModeHybrid]
	if gain := hy[TypeParaphrase].NDCG - ft[TypeParaphrase].NDCG; gain < floorParaphraseGain {
		t.Errorf("hybrid gains %.3f nDCG@10 over full text on paraphrases, floor %.2f", gain, floorParaphraseGain)
	}
	if hy[TypeLexical].NDCG < ft[TypeLexical].NDCG {
		t.Errorf("hybrid loses on lexical queries: %.3f < full text %.3f", hy[TypeLexical].NDCG, ft[TypeLexical].NDCG)
	}
	if hy[""].NDCG < floorHybridAll {
		t.Errorf("hybrid nDCG@10 over all queries %.3f, floor %.2f", hy[""].NDCG, floorHybridAll)
	}
	if *writeDoc {
		writeQualityDoc(t, e.ID(), table, len(d.Messages()))
	}
}

func logPerQuery(t *testing.T, r *Result, d *Dataset) {
	ids := make([]string, 0, len(d.Queries))
	text := map[string]string{}
	for _, q := range d.Queries {
		ids = append(ids, q.ID)
		text[q.ID] = q.Text
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s  fulltext %.2f  semantic %.2f  hybrid %.2f  %q\n", id,
			r.PerQuery[ModeFulltext][id].NDCG, r.PerQuery[ModeSemantic][id].NDCG, r.PerQuery[ModeHybrid][id].NDCG, text[id])
	}
	t.Logf("nDCG@10 per query:\n%s", b.String())
}

const (
	docBegin = "<!-- searcheval:begin -->"
	docEnd   = "<!-- searcheval:end -->"
)

// writeQualityDoc replaces the generated section of docs/search-quality.md.
func writeQualityDoc(t *testing.T, embedderID, table string, n int) {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "docs", "search-quality.md")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(old)
	i, j := strings.Index(s, docBegin), strings.Index(s, docEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %s … %s markers", path, docBegin, docEnd)
	}
	gen := fmt.Sprintf("%s\nMeasured %s on the 2-core VM (Go %s, %s/%s) with\n`go test ./internal/searcheval -run TestBuiltinRetrievalQuality -args -write-doc`;\nreference engine (BM25 + embedder + RRF k=60) over %d messages, embedder `%s`.\n\n%s",
		docBegin, time.Now().UTC().Format("2006-01-02"), strings.TrimPrefix(runtime.Version(), "go"), runtime.GOOS, runtime.GOARCH, n, embedderID, table)
	s = s[:i] + gen + s[j:]
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

var variants = flag.Bool("variants", false, "also measure embedder variants (and a Model2Vec model from TIDINGS_EVAL_MODEL2VEC, an HTTP endpoint from TIDINGS_EVAL_HTTP_URL + TIDINGS_EVAL_HTTP_MODEL)")

// TestEmbedderVariants measures the alternatives the built-in design was
// chosen against. Run: go test ./internal/searcheval -run Variants -variants -v
func TestEmbedderVariants(t *testing.T) {
	if !*variants {
		t.Skip("run with -variants")
	}
	ctx := context.Background()
	d, err := Load(DefaultDistractors)
	if err != nil {
		t.Fatal(err)
	}
	type variant struct {
		name string
		make func() (embed.Embedder, error)
	}
	builtin := func(o embed.BuiltinOptions) func() (embed.Embedder, error) {
		return func() (embed.Embedder, error) { return embed.NewBuiltinWithOptions(o) }
	}
	vs := []variant{
		{"lexicon only (unfitted)", func() (embed.Embedder, error) {
			b, err := embed.NewBuiltin()
			return struct{ embed.Embedder }{b}, err // hides Fit
		}},
		{"corpus only (PPMI + randomized SVD, no lexicon)", builtin(embed.BuiltinOptions{NoLexicon: true})},
		{"lexicon + corpus (default)", builtin(embed.BuiltinOptions{})},
		{"default, context weight 1.0", builtin(embed.BuiltinOptions{ContextWeight: 1})},
		{"default, no prior floor", builtin(embed.BuiltinOptions{PriorFloor: -1})},
		{"default + common-direction removal", builtin(embed.BuiltinOptions{RemovePC: true})},
	}
	if dir := os.Getenv("TIDINGS_EVAL_MODEL2VEC"); dir != "" {
		vs = append(vs, variant{"model2vec " + dir, func() (embed.Embedder, error) { return embed.LoadModel2Vec(dir) }})
	}
	if u := os.Getenv("TIDINGS_EVAL_HTTP_URL"); u != "" {
		vs = append(vs, variant{"http " + u, func() (embed.Embedder, error) {
			return embed.NewHTTP(embed.Config{URL: u, Model: os.Getenv("TIDINGS_EVAL_HTTP_MODEL")})
		}})
	}
	var b strings.Builder
	b.WriteString("| embedder | lexical nDCG sem / hyb | paraphrase nDCG sem / hyb | paraphrase R@10 sem / hyb |\n|---|---:|---:|---:|\n")
	for _, v := range vs {
		e, err := v.make()
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		ref, err := NewReference(ctx, e, d.Messages())
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		r, err := Evaluate(ctx, ref, d, Modes)
		if err != nil {
			t.Fatal(err)
		}
		s, h := r.ByType[ModeSemantic], r.ByType[ModeHybrid]
		fmt.Fprintf(&b, "| %s | %.3f / %.3f | %.3f / %.3f | %.3f / %.3f |\n", v.name, s[TypeLexical].NDCG, h[TypeLexical].NDCG,
			s[TypeParaphrase].NDCG, h[TypeParaphrase].NDCG, s[TypeParaphrase].Recall, h[TypeParaphrase].Recall)
	}
	t.Log("\n" + b.String())
}
