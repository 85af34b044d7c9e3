package index

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

// hiddenTerms is what the messages of threads the policy hides but the
// index still stores (blocked since the last purge) add to the corpus
// statistics: per-term document frequencies, documents and total length.
//
// A search answers from the vocabulary and its statistics: whether a word
// is known ("no message contains" otherwise), its variants, its IDF, the
// number of searchable messages. Until a blocked thread is purged its
// words are still in them, so a word found only there would answer
// differently from a word no message ever had — an oracle that it exists.
// Subtracting these counts makes every search answer as it will after the
// purge (docs/security.md, "Red-team tests"; docs/index.md).
type hiddenTerms struct {
	key      string // mem.gen and the hidden conversations it was computed for
	df       map[string]int32
	docs     int64
	totalLen int64
}

// dfOf returns a term's document frequency in the messages a search may
// show: v.df minus hidden's share (h may be nil).
func (h *hiddenTerms) dfOf(v *vocab, t string) (int32, bool) {
	df, ok := v.df[t]
	if !ok {
		return 0, false
	}
	if h != nil {
		df -= h.df[t]
	}
	return df, df > 0
}

// docsOf returns the searchable documents and their total length a search
// may show.
func (h *hiddenTerms) docsOf(m *memState) (docs, totalLen int64) {
	if h == nil {
		return m.docs, m.totalLen
	}
	return m.docs - h.docs, m.totalLen - h.totalLen
}

// hiddenTermsLocked returns the statistics of the stored messages no
// search may show (every conversation they belong to is hidden by the
// policy), or nil when there are none — the usual case, since a policy
// change purges at once. It reads their text from the database once per
// index generation and set of hidden conversations. A read error gives a
// view that hides nothing and is not cached. Callers hold mem.mu.
func (ix *Index) hiddenTermsLocked(ctx context.Context) *hiddenTerms {
	m := ix.mem
	var hidden []uint32
	for id, ci := range m.convByID {
		if !ix.visible(ci) {
			hidden = append(hidden, id)
		}
	}
	if len(hidden) == 0 {
		return nil
	}
	slices.Sort(hidden)
	var kb strings.Builder
	kb.WriteString(strconv.FormatInt(m.gen, 10))
	for _, id := range hidden {
		kb.WriteByte(',')
		kb.WriteString(strconv.FormatUint(uint64(id), 10))
	}
	key := kb.String()
	ix.hiddenMu.Lock()
	defer ix.hiddenMu.Unlock()
	if ix.hidden != nil && ix.hidden.key == key {
		return ix.hidden
	}
	h := &hiddenTerms{key: key, df: map[string]int32{}}
	shown := func(id int64) bool {
		if m.flags[id]&fMulti == 0 {
			return false
		}
		for _, c := range m.extra[uint32(id)] {
			if ix.visible(m.convByID[c]) {
				return true
			}
		}
		return false
	}
	for _, conv := range hidden {
		rows, err := ix.rquery(ctx, "SELECT id, text, search_extra FROM messages WHERE conv = ? AND searchable", conv)
		if err != nil {
			ix.log.Warn("read hidden messages", "err", err)
			return nil
		}
		for rows.Next() {
			var id int64
			var text string
			var extra *string
			if err := rows.Scan(&id, &text, &extra); err != nil {
				rows.Close()
				ix.log.Warn("read hidden messages", "err", err)
				return nil
			}
			if id < 0 || id >= int64(len(m.flags)) || m.flags[id]&(fLive|fSearchable) != fLive|fSearchable || shown(id) {
				continue
			}
			ex := ""
			if extra != nil {
				ex = *extra
			}
			terms, n := distinctTerms(text, ex)
			for _, t := range terms {
				h.df[t]++
			}
			h.docs++
			h.totalLen += int64(n)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			ix.log.Warn("read hidden messages", "err", err)
			return nil
		}
	}
	ix.hidden = h
	return h
}
