package embed

import (
	"slices"
	"sort"
	"testing"
)

// neighbours returns the n lexicon words closest to w (w included).
func neighbours(t *testing.T, lx *lexicon, w string, n int) []string {
	t.Helper()
	i := lx.lookup(w)
	if i < 0 {
		t.Fatalf("%q is not in the lexicon", w)
	}
	type p struct {
		w string
		s float32
	}
	ps := make([]p, len(lx.words))
	for j := range lx.words {
		ps[j] = p{lx.words[j], dot(lexVec(lx, i), lexVec(lx, int32(j)))}
	}
	sort.Slice(ps, func(a, b int) bool { return ps[a].s > ps[b].s })
	out := make([]string, n)
	for k := range out {
		out[k] = ps[k].w
	}
	return out
}

// TestLexiconNeighbours pins the relatedness the built-in embedder relies
// on: each word's 15 nearest lexicon words include the listed ones.
func TestLexiconNeighbours(t *testing.T) {
	lx, err := builtinLexicon()
	if err != nil {
		t.Fatal(err)
	}
	if len(lx.words) < 25000 || lx.dim < 64 {
		t.Fatalf("lexicon has %d words × %d dims", len(lx.words), lx.dim)
	}
	for w, want := range map[string][]string{
		"owe":         {"debt"},
		"passport":    {"visa"},
		"burglary":    {"housebreaking"},
		"tooth":       {"incisor"},
		"grandmother": {"grandma"},
		"salary":      {"wage"},
		"owes":        {"debt"}, // inflected forms resolve to the lemma
		"teeth":       {"tooth"},
	} {
		got := neighbours(t, lx, w, 15)
		for _, x := range want {
			if !slices.Contains(got, x) {
				t.Errorf("neighbours of %q = %v, want %q among them", w, got, x)
			}
		}
	}
}

// BenchmarkParseLexicon measures decoding the embedded lexicon, which every
// process that embeds pays once.
func BenchmarkParseLexicon(b *testing.B) {
	for b.Loop() {
		if _, err := parseLexicon(lexiconData); err != nil {
			b.Fatal(err)
		}
	}
}

// lexVec returns word i's unit vector as float32.
func lexVec(lx *lexicon, i int32) []float32 {
	v := make([]float32, lx.dim)
	lx.addTo(i, 1, v)
	return v
}
