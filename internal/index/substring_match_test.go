package index

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/index/fold"
)

// matchFolded is matchSubstring's general path (fold, then search).
func matchFolded(text, fp string) [][2]int {
	ft, m := fold.ForSubstring(text, true)
	var spans [][2]int
	for pos := 0; pos <= len(ft); {
		i := strings.Index(ft[pos:], fp)
		if i < 0 {
			break
		}
		a := pos + i
		b := a + len(fp)
		spans = append(spans, [2]int{m[a], endOffset(text, m, b)})
		pos = b
	}
	return spans
}

// TestMatchASCIIAgreesWithFolding checks the ASCII fast path against the
// general one on generated texts and patterns (case, punctuation, digits,
// repeats, overlaps, patterns longer than the text, non-ASCII patterns).
func TestMatchASCIIAgreesWithFolding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := "aAbB $4,.-'!?xyzZ09\t\n"
	gen := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	cases := [][2]string{{"Café at 4", "caf"}, {"aaaa", "aa"}, {"$40 or $4", "$4"}, {"ab", "abc"}, {"late, be there", "late, be"}, {"naïve", "naï"}, {"NAIVE", "naïve"}}
	for range 3000 {
		text := gen(r.IntN(40))
		fp, _ := fold.ForSubstring(gen(1+r.IntN(4)), false)
		cases = append(cases, [2]string{text, fp})
	}
	for _, c := range cases {
		text, pat := c[0], c[1]
		fp, _ := fold.ForSubstring(pat, false)
		if fp == "" {
			continue
		}
		got, want := matchSubstring(text, fp), matchFolded(text, fp)
		if !slices.Equal(got, want) {
			t.Errorf("text %q pattern %q: got %v, want %v", text, fp, got, want)
		}
	}
}
