package searcheval

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Searcher is what the evaluation needs from a search engine: the ids of
// the top k messages for query under mode, best first.
type Searcher interface {
	Search(ctx context.Context, query string, mode string, k int) ([]string, error)
}

// Search modes the evaluation scores.
const (
	ModeFulltext = "fulltext"
	ModeSemantic = "semantic"
	ModeHybrid   = "hybrid"
)

// Modes is the default list of modes, in report order.
var Modes = []string{ModeFulltext, ModeSemantic, ModeHybrid}

// Cutoff is the rank depth of every metric (nDCG@10, Recall@10).
const Cutoff = 10

// Score is a mean over a set of queries.
type Score struct {
	NDCG    float64 // mean nDCG@10, gains 2^grade − 1
	Recall  float64 // mean fraction of relevant messages in the top 10
	Queries int
}

// Result holds per-query and aggregated scores.
type Result struct {
	// PerQuery[mode][queryID] is that query's score (Queries = 1).
	PerQuery map[string]map[string]Score
	// ByType[mode][type] aggregates over the queries of one type; type ""
	// is all queries.
	ByType map[string]map[string]Score
}

// Evaluate runs every query of d through s in each mode.
func Evaluate(ctx context.Context, s Searcher, d *Dataset, modes []string) (*Result, error) {
	r := &Result{PerQuery: map[string]map[string]Score{}, ByType: map[string]map[string]Score{}}
	for _, mode := range modes {
		r.PerQuery[mode] = map[string]Score{}
		sums := map[string]*Score{"": {}, TypeLexical: {}, TypeParaphrase: {}}
		for _, q := range d.Queries {
			ids, err := s.Search(ctx, q.Text, mode, Cutoff)
			if err != nil {
				return nil, fmt.Errorf("query %s (%s): %w", q.ID, mode, err)
			}
			sc := Score{NDCG: NDCG(ids, q.Relevant, Cutoff), Recall: Recall(ids, q.Relevant, Cutoff), Queries: 1}
			r.PerQuery[mode][q.ID] = sc
			for _, t := range []string{"", q.Type} {
				sums[t].NDCG += sc.NDCG
				sums[t].Recall += sc.Recall
				sums[t].Queries++
			}
		}
		r.ByType[mode] = map[string]Score{}
		for t, s := range sums {
			if s.Queries > 0 {
				r.ByType[mode][t] = Score{NDCG: s.NDCG / float64(s.Queries), Recall: s.Recall / float64(s.Queries), Queries: s.Queries}
			}
		}
	}
	return r, nil
}

// NDCG is the normalised discounted cumulative gain of ranked at depth k,
// with gain 2^grade − 1 and discount log2(rank + 1).
func NDCG(ranked []string, rel map[string]int, k int) float64 {
	dcg := 0.0
	seen := map[string]bool{}
	for i, id := range ranked {
		if i >= k {
			break
		}
		if seen[id] {
			continue // a duplicate result earns nothing
		}
		seen[id] = true
		dcg += (math.Pow(2, float64(rel[id])) - 1) / math.Log2(float64(i+2))
	}
	grades := make([]int, 0, len(rel))
	for _, g := range rel {
		grades = append(grades, g)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(grades)))
	ideal := 0.0
	for i, g := range grades {
		if i >= k {
			break
		}
		ideal += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// Recall is the fraction of messages with grade ≥ 1 found in ranked[:k]
// (out of at most k of them).
func Recall(ranked []string, rel map[string]int, k int) float64 {
	n := 0
	for _, g := range rel {
		if g > 0 {
			n++
		}
	}
	if n == 0 {
		return 0
	}
	found := 0
	seen := map[string]bool{}
	for i, id := range ranked {
		if i >= k {
			break
		}
		if rel[id] > 0 && !seen[id] {
			found++
		}
		seen[id] = true
	}
	return float64(found) / float64(min(n, k))
}

// Table renders r as a Markdown table: one row per query type, one nDCG and
// one Recall column per mode.
func (r *Result) Table(modes []string) string {
	var b strings.Builder
	b.WriteString("| queries |")
	for _, m := range modes {
		fmt.Fprintf(&b, " %s nDCG@10 | %s R@10 |", m, m)
	}
	b.WriteString("\n|---|")
	for range modes {
		b.WriteString("---:|---:|")
	}
	b.WriteString("\n")
	for _, t := range []string{TypeLexical, TypeParaphrase, ""} {
		name := t
		if t == "" {
			name = "all"
		}
		n := r.ByType[modes[0]][t].Queries
		fmt.Fprintf(&b, "| %s (%d) |", name, n)
		for _, m := range modes {
			s := r.ByType[m][t]
			fmt.Fprintf(&b, " %.3f | %.3f |", s.NDCG, s.Recall)
		}
		b.WriteString("\n")
	}
	return b.String()
}
