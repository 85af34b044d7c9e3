package searcheval

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/tidings-mcp/tidings/internal/embed"
)

// Reference is a small in-memory search engine used to develop and
// measure embedders before (and independently of) the real index: Okapi
// BM25 over stemmed, stop-word-free terms with OR semantics (a stronger
// full-text baseline than all-terms-must-match), brute-force cosine over
// the embedder's vectors, and reciprocal rank fusion (k = 60) of the two
// rankings, each cut at RRFDepth.
type Reference struct {
	ids   []string
	terms [][]string // stemmed terms per document
	df    map[string]int
	avgDL float64
	post  map[string][]int
	emb   embed.Embedder
	vecs  [][]float32
}

// RRFK is the reciprocal rank fusion constant.
const RRFK = 60

// RRFDepth is how many results of each ranking enter the fusion.
const RRFDepth = 100

// NewReference indexes msgs. If emb is an embed.Fitter it is first fitted
// on the message texts.
func NewReference(ctx context.Context, emb embed.Embedder, msgs []Message) (*Reference, error) {
	r := &Reference{df: map[string]int{}, post: map[string][]int{}, emb: emb}
	texts := make([]string, len(msgs))
	total := 0
	for i, m := range msgs {
		r.ids = append(r.ids, m.ID)
		texts[i] = m.Text
		ts := Terms(m.Text)
		r.terms = append(r.terms, ts)
		total += len(ts)
		seen := map[string]bool{}
		for _, t := range ts {
			if !seen[t] {
				seen[t] = true
				r.df[t]++
				r.post[t] = append(r.post[t], i)
			}
		}
	}
	r.avgDL = float64(total) / float64(max(1, len(msgs)))
	if emb == nil {
		return r, nil
	}
	if f, ok := emb.(embed.Fitter); ok {
		err := f.Fit(ctx, func(yield func(string) bool) {
			for _, t := range texts {
				if !yield(t) {
					return
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("fit embedder: %w", err)
		}
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed corpus: %w", err)
	}
	r.vecs = vecs
	return r, nil
}

type scored struct {
	doc   int
	score float64
}

func topK(s []scored, k int) []scored {
	sort.Slice(s, func(i, j int) bool {
		if s[i].score != s[j].score {
			return s[i].score > s[j].score
		}
		return s[i].doc < s[j].doc
	})
	if len(s) > k {
		s = s[:k]
	}
	return s
}

func (r *Reference) bm25(q string, k int) []scored {
	const k1, b = 1.2, 0.75
	n := float64(len(r.ids))
	acc := map[int]float64{}
	seen := map[string]bool{}
	for _, t := range Terms(q) {
		if seen[t] {
			continue
		}
		seen[t] = true
		df := float64(r.df[t])
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, d := range r.post[t] {
			tf := 0.0
			for _, x := range r.terms[d] {
				if x == t {
					tf++
				}
			}
			dl := float64(len(r.terms[d]))
			acc[d] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/r.avgDL))
		}
	}
	out := make([]scored, 0, len(acc))
	for d, s := range acc {
		out = append(out, scored{d, s})
	}
	return topK(out, k)
}

func (r *Reference) vector(ctx context.Context, q string, k int) ([]scored, error) {
	if r.emb == nil {
		return nil, fmt.Errorf("semantic search: no embedder")
	}
	qv, err := r.emb.Embed(ctx, []string{q})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	out := make([]scored, len(r.vecs))
	for i, v := range r.vecs {
		s := float32(0)
		for j, x := range v {
			s += x * qv[0][j]
		}
		out[i] = scored{i, float64(s)}
	}
	return topK(out, k), nil
}

// Search implements Searcher.
func (r *Reference) Search(ctx context.Context, q, mode string, k int) ([]string, error) {
	var res []scored
	switch mode {
	case ModeFulltext:
		res = r.bm25(q, k)
	case ModeSemantic:
		v, err := r.vector(ctx, q, k)
		if err != nil {
			return nil, err
		}
		res = v
	case ModeHybrid:
		v, err := r.vector(ctx, q, RRFDepth)
		if err != nil {
			return nil, err
		}
		fused := map[int]float64{}
		for rank, s := range r.bm25(q, RRFDepth) {
			fused[s.doc] += 1 / float64(RRFK+rank+1)
		}
		for rank, s := range v {
			fused[s.doc] += 1 / float64(RRFK+rank+1)
		}
		for d, s := range fused {
			res = append(res, scored{d, s})
		}
		res = topK(res, k)
	default:
		return nil, fmt.Errorf("unknown mode %q", mode)
	}
	ids := make([]string, len(res))
	for i, s := range res {
		ids[i] = r.ids[s.doc]
	}
	return ids, nil
}

// Terms splits text into lower-case words, drops stop-words and stems each
// with a light English suffix stripper. It is the reference engine's
// analyser and the yardstick of the paraphrase rule (a paraphrase query
// shares no term with the messages it must find).
func Terms(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	}) {
		w = strings.Trim(w, "'’")
		w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
		w = strings.NewReplacer("'", "", "’", "").Replace(w)
		if w == "" || stop[w] {
			continue
		}
		out = append(out, Stem(w))
	}
	return out
}

// Stem strips common English inflectional suffixes ("owes" → "owe",
// "tickets" → "ticket", "running" → "run", "parties" → "party").
func Stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "ied"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		return undouble(w[:n-3])
	case n > 3 && strings.HasSuffix(w, "ed"):
		s := w[:n-2]
		if strings.HasSuffix(s, "e") {
			return s
		}
		return undouble(s) + maybeE(s)
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

func undouble(s string) string {
	n := len(s)
	if n > 2 && s[n-1] == s[n-2] && !strings.ContainsRune("aeiouls", rune(s[n-1])) {
		return s[:n-1]
	}
	return s
}

// maybeE restores the e of "owed" → "owe": a consonant-vowel-consonant
// ending of a short stem usually had one. It errs toward no change.
func maybeE(s string) string {
	n := len(s)
	if n == 3 && !isVowel(s[0]) && isVowel(s[1]) && !isVowel(s[2]) {
		return "e"
	}
	if n == 2 && isVowel(s[0]) && s[1] == 'w' { // "owed"
		return "e"
	}
	return ""
}

func isVowel(c byte) bool { return strings.IndexByte("aeiou", c) >= 0 }

var stop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about after again all am an and any are as at be because been before being
both but by can could did do does doing down during each few for from had has have having he her here hers him his
how i if in into is it its itself just me more most my no nor not now of off on once only or other our ours out over
own same she should so some such than that the their theirs them then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you your yours im ive ill
id youre dont doesnt didnt cant wont isnt thats whats u ur`) {
		m[w] = true
	}
	return m
}()
