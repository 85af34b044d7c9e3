package index

import (
	"sort"
)

// rankedHit is a hit before hydration.
type rankedHit struct {
	id      int64
	score   float64
	ft, sem *Signal
	fused   float64
	matched []string
	spans   [][2]int // highlight byte ranges in text (fulltext/substring)
	text    string
	det     *ftDetail // fulltext details still to read (fulltextDetail)
	boosted bool      // in a soft date window (score raised)
}

func fromFulltext(ft []ftHit) []rankedHit {
	out := make([]rankedHit, len(ft))
	for i, h := range ft {
		out[i] = rankedHit{id: h.id, score: h.score, ft: &Signal{Rank: i + 1, Score: h.score}, matched: h.matched, spans: h.spans, text: h.text, det: h.det}
	}
	return out
}

func fromSemantic(sem []scored) []rankedHit {
	out := make([]rankedHit, len(sem))
	for i, h := range sem {
		out[i] = rankedHit{id: h.id, score: float64(h.score), sem: &Signal{Rank: i + 1, Score: float64(h.score)}}
	}
	return out
}

// fuse combines fulltext and semantic ranks by reciprocal rank fusion.
func fuse(ft []ftHit, sem []scored) []rankedHit {
	byID := map[int64]*rankedHit{}
	var order []*rankedHit
	get := func(id int64) *rankedHit {
		if h := byID[id]; h != nil {
			return h
		}
		h := &rankedHit{id: id}
		byID[id] = h
		order = append(order, h)
		return h
	}
	for i, x := range ft {
		h := get(x.id)
		h.ft = &Signal{Rank: i + 1, Score: x.score}
		h.fused += 1 / float64(RRFK+i+1)
		h.matched, h.spans, h.text, h.det = x.matched, x.spans, x.text, x.det
	}
	for i, x := range sem {
		h := get(x.id)
		h.sem = &Signal{Rank: i + 1, Score: float64(x.score)}
		h.fused += 1 / float64(RRFK+i+1)
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].fused != order[j].fused {
			return order[i].fused > order[j].fused
		}
		return order[i].id > order[j].id
	})
	out := make([]rankedHit, len(order))
	for i, h := range order {
		h.score = h.fused
		out[i] = *h
	}
	return out
}
