package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// filter is a query's scope, checked against docmeta.
type filter struct {
	since, until int64  // inclusive, unix ms
	convOK       []bool // nil: every conversation
	fromMe       int8   // -1 any, 0 others', 1 mine
	lo, hi       int64  // id range that can hold a match
}

// pass reports whether id is a searchable message in scope. Callers hold
// mem.mu.
func (f *filter) pass(m *memState, id int64) bool {
	fl := m.flags[id]
	if fl&(fLive|fSearchable) != fLive|fSearchable {
		return false
	}
	// The time column is read only under a time bound (a cache miss per
	// id otherwise, for each posting of a common word).
	if f.since != math.MinInt64 || f.until != math.MaxInt64 {
		if t := m.times[id]; t < f.since || t > f.until {
			return false
		}
	}
	if f.fromMe >= 0 && (fl&fFromMe != 0) != (f.fromMe == 1) {
		return false
	}
	if f.convOK != nil {
		c := m.convs[id]
		if int(c) < len(f.convOK) && f.convOK[c] {
			return true
		}
		if fl&fMulti != 0 {
			for _, x := range m.extra[uint32(id)] {
				if int(x) < len(f.convOK) && f.convOK[x] {
					return true
				}
			}
		}
		return false
	}
	return true
}

// Search runs a query. It never silently caps: Result.ScanComplete and
// Coverage say how much was examined, and an unknown conversation or
// contact is an error wrapping ErrNotFound rather than an empty result.
func (ix *Index) Search(ctx context.Context, q Query) (*Result, error) {
	if q.Mode == "" {
		q.Mode = ModeHybrid
	}
	switch q.Mode {
	case ModeHybrid, ModeFulltext, ModeSubstring, ModeSemantic:
	default:
		return nil, fmt.Errorf("mode %q: want hybrid, fulltext, substring or semantic: %w", q.Mode, ErrBadQuery)
	}
	// No text: browse — every message the filters allow, newest first
	// (docs/tools.md, search_messages without a query).
	browse := strings.TrimSpace(q.Text) == ""
	if len(q.Text) > 1000 {
		return nil, fmt.Errorf("query text longer than 1000 bytes: %w", ErrBadQuery)
	}
	if q.Days < 0 || q.Days > 36500 {
		return nil, fmt.Errorf("days %d: want 0 to 36500: %w", q.Days, ErrBadQuery)
	}
	if q.Limit < 0 {
		return nil, fmt.Errorf("limit %d: want 1 to %d: %w", q.Limit, MaxLimit, ErrBadQuery)
	}
	limit := clampInt(q.Limit, DefaultLimit, MaxLimit)
	var cur cursor
	if q.Cursor != "" {
		var err error
		if cur, err = decodeCursor(q.Cursor, &q); err != nil {
			return nil, err
		}
	}
	if err := ix.refresh(ctx); err != nil {
		return nil, err
	}
	ix.prepare()

	res := &Result{Query: q.Text, Mode: q.Mode, RequestedMode: q.Mode, Hits: []Hit{}}
	ix.mem.mu.RLock()
	f, err := ix.buildFilterLocked(&q)
	var pq parsedQuery
	hid := ix.hiddenTermsLocked(ctx)
	if err == nil && q.Mode != ModeSubstring && !browse {
		pq = ix.parseQueryLocked(q.Text, !q.LiteralDates, hid)
		if pq.since != 0 && pq.since > f.since {
			f.since = pq.since
		}
		if pq.until != 0 && pq.until < f.until {
			f.until = pq.until
		}
		if pq.peopleHandles != nil {
			ix.restrictToPeopleLocked(f, pq.peopleHandles)
			res.Notes = append(res.Notes, "a word of the query that no message contains names a contact: results are limited to conversations with them (see interpretation)")
		}
		res.Interpretation = interpretation(&pq)
	}
	if err == nil {
		f.lo, f.hi = ix.mem.idRangeRO(f.since, f.until)
	}
	res.Coverage.Searchable, _ = hid.docsOf(ix.mem)
	ix.mem.mu.RUnlock()
	if err != nil {
		return nil, err
	}

	var ranked []rankedHit
	switch {
	case browse:
		ranked = ix.listScope(f, min(cur.Offset+limit+1, MaxDepth+1))
		res.ScanComplete = true
		res.Notes = append(res.Notes, "no query: these are the messages the filters allow, newest first")
	case q.Mode == ModeSubstring:
		return ix.substringSearch(ctx, &q, f, cur, limit, res)
	case pq.listOnly:
		// Only a time window or a person: every message in scope
		// qualifies; newest first.
		ranked = ix.listScope(f, min(cur.Offset+limit+1, MaxDepth+1))
		res.Mode = q.Mode
		res.ScanComplete = true
		var unknown []string
		for _, t := range pq.terms {
			unknown = append(unknown, t.word)
		}
		note := "the query names only a time window or a person: these are the messages in scope, newest first"
		if len(unknown) > 0 {
			note = "no message contains " + strings.Join(unknown, ", ") + ": these are the messages in scope (the people and dates the query names), newest first"
		}
		res.Notes = append(res.Notes, note)
	default:
		var err error
		if ranked, err = ix.rank(ctx, &q, &pq, f, cur, limit, res); err != nil {
			return nil, err
		}
	}
	if pq.boostText != "" {
		ix.boostDates(ranked, &pq)
		res.Notes = append(res.Notes, fmt.Sprintf("%q is not read as a date filter (the query is about something else): messages from then rank higher, others still match", pq.boostText))
	}
	if cur.Offset > len(ranked) {
		cur.Offset = len(ranked)
	}
	page := ranked[cur.Offset:min(len(ranked), cur.Offset+limit)]
	if next := cur.Offset + len(page); next < len(ranked) && next < MaxDepth {
		res.NextCursor = encodeCursor(cursor{Mode: q.Mode, Offset: next, Print: q.fingerprint()})
	} else if next >= MaxDepth && len(ranked) > next {
		res.Notes = append(res.Notes, fmt.Sprintf("ranked results stop at %d; narrow the query to see more", MaxDepth))
	}
	if err := ix.fulltextDetail(ctx, page); err != nil {
		return nil, err
	}
	hits, err := ix.hydrateHits(ctx, page, &pq, f, q.Explain)
	if err != nil {
		return nil, err
	}
	res.Hits = hits
	return res, nil
}

// rank runs the ranked modes (fulltext, semantic, hybrid) and fills res's
// mode, coverage and completeness.
func (ix *Index) rank(ctx context.Context, q *Query, pq *parsedQuery, f *filter, cur cursor, limit int, res *Result) ([]rankedHit, error) {
	var ranked []rankedHit
	switch q.Mode {
	case ModeFulltext:
		depth := cur.Offset + limit
		if pq.boostText != "" {
			depth = max(depth, ix.tune.FuseDepth) // room for the boost to reorder
		}
		ft, cov, err := ix.fulltext(ctx, pq, f, depth)
		if err != nil {
			return nil, err
		}
		res.Coverage.Fulltext = cov
		res.ScanComplete = cov.Complete
		ranked = fromFulltext(ft)
	case ModeSemantic, ModeHybrid:
		// Hybrid runs both signals at once (one core each).
		type ftOut struct {
			hits []ftHit
			cov  *SignalCoverage
			err  error
		}
		ftc := make(chan ftOut, 1)
		depth := max(cur.Offset+limit, ix.tune.FuseDepth)
		if q.Mode == ModeHybrid {
			go func() {
				h, c, err := ix.fulltext(ctx, pq, f, depth)
				ftc <- ftOut{h, c, err}
			}()
		}
		sem, scov, serr := ix.semantic(ctx, pq, f, depth)
		if serr != nil && !errors.Is(serr, errNoVectors) {
			if q.Mode == ModeHybrid {
				<-ftc
			}
			return nil, serr
		}
		if serr != nil {
			res.Notes = append(res.Notes, "semantic search unavailable: "+scov.Note+"; results are full-text only")
			res.Mode = ModeFulltext
		}
		if q.Mode == ModeSemantic && serr == nil {
			res.Coverage.Semantic = scov
			res.ScanComplete = scov.Complete
			ranked = fromSemantic(sem)
			break
		}
		var fo ftOut
		if q.Mode == ModeHybrid {
			fo = <-ftc
		} else { // semantic without vectors falls back to full text
			fo.hits, fo.cov, fo.err = ix.fulltext(ctx, pq, f, depth)
		}
		ft, fcov, err := fo.hits, fo.cov, fo.err
		if err != nil {
			return nil, err
		}
		res.Coverage.Fulltext = fcov
		if serr != nil {
			res.ScanComplete = fcov.Complete
			ranked = fromFulltext(ft)
			break
		}
		res.Coverage.Semantic = scov
		res.ScanComplete = fcov.Complete && scov.Complete
		ranked = fuse(ft, sem)
	}
	return ranked, nil
}

// prepare builds lazily maintained read structures (sorted vocabulary,
// time envelope) so queries can run under the read lock.
func (ix *Index) prepare() {
	m := ix.mem
	m.mu.RLock()
	ok := m.voc.built && !m.envDirty
	m.mu.RUnlock()
	if ok {
		return
	}
	m.mu.Lock()
	m.voc.ensureSorted()
	m.envelope()
	m.mu.Unlock()
}

// idRangeRO is idRange for callers holding the read lock after prepare.
func (m *memState) idRangeRO(since, until int64) (int64, int64) {
	if m.envDirty {
		return 1, int64(len(m.times)) - 1
	}
	nc := len(m.chunkMax)
	if nc == 0 {
		return 1, 0
	}
	c0 := sort.Search(nc, func(i int) bool { return m.chunkMax[i] >= since })
	c1 := sort.Search(nc, func(i int) bool { return m.chunkMin[i] > until }) - 1
	if c0 >= nc || c1 < 0 || c0 > c1 {
		return 1, 0
	}
	return max(int64(c0*chunkSize), 1), int64((c1+1)*chunkSize - 1)
}

// buildFilterLocked turns the query's filters into a filter. Callers hold
// mem.mu.
func (ix *Index) buildFilterLocked(q *Query) (*filter, error) {
	f := &filter{since: math.MinInt64, until: math.MaxInt64, fromMe: -1}
	if q.FromMe != nil {
		f.fromMe = 0
		if *q.FromMe {
			f.fromMe = 1
		}
	}
	if q.Days > 0 {
		f.since = ix.now().Add(-time.Duration(q.Days) * 24 * time.Hour).UnixMilli()
	}
	if !q.Since.IsZero() && q.Since.UnixMilli() > f.since {
		f.since = q.Since.UnixMilli()
	}
	if !q.Until.IsZero() && q.Until.UnixMilli()-1 < f.until {
		f.until = q.Until.UnixMilli() - 1
	}
	var sets []map[uint32]bool
	if q.ConversationID != "" {
		s, err := ix.resolveLocked(q.ConversationID, false)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	if q.Contact != "" {
		s, err := ix.resolveLocked(q.Contact, false)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	if len(q.Handles) > 0 {
		s := map[uint32]bool{}
		for _, h := range q.Handles {
			hs := ix.handlesMatchingLocked(h)
			for id, ci := range ix.mem.convByID {
				for _, x := range ci.handles {
					if hs[x] {
						s[id] = true
					}
				}
			}
		}
		if len(s) == 0 {
			return nil, fmt.Errorf("no conversation with %s: %w", strings.Join(q.Handles, ", "), ErrNotFound)
		}
		sets = append(sets, s)
	}
	// Policy (defence in depth) and the intersection of the sets.
	var maxID uint32
	blocked := false
	for id, ci := range ix.mem.convByID {
		maxID = max(maxID, id)
		if !ix.visible(ci) {
			blocked = true
		}
	}
	if len(sets) == 0 && !blocked {
		return f, nil
	}
	f.convOK = make([]bool, maxID+1)
	for id, ci := range ix.mem.convByID {
		ok := ix.visible(ci)
		for _, s := range sets {
			ok = ok && s[id]
		}
		f.convOK[id] = ok
	}
	return f, nil
}

// softDateBoost multiplies the score of a hit sent in the window of a
// relative date that describes the topic ("dinner last week"). It reorders
// near neighbours; it does not hide anything.
const softDateBoost = 1.25

// boostDates raises the hits sent in pq's boost window and re-sorts.
func (ix *Index) boostDates(ranked []rankedHit, pq *parsedQuery) {
	lo, hi := pq.boostFrom, pq.boostUntil
	if hi == 0 {
		hi = math.MaxInt64
	}
	ix.mem.mu.RLock()
	for i := range ranked {
		if id := ranked[i].id; id < int64(len(ix.mem.times)) {
			if t := ix.mem.times[id]; t >= lo && t <= hi {
				ranked[i].score *= softDateBoost
				ranked[i].boosted = true
			}
		}
	}
	ix.mem.mu.RUnlock()
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].score > ranked[j].score })
}

// listScope returns up to n messages in f's scope, newest first (by time,
// then id), for a query that names only a time window or a person. Every
// message in the id range the filter's time bounds allow is examined.
func (ix *Index) listScope(f *filter, n int) []rankedHit {
	m := ix.mem
	m.mu.RLock()
	defer m.mu.RUnlock()
	newer := func(a, b int64) bool {
		if m.times[a] != m.times[b] {
			return m.times[a] > m.times[b]
		}
		return a > b
	}
	// A min-heap (by recency) of the n newest seen so far.
	var h []int64
	down := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && newer(h[c], h[c+1]) {
				c++
			}
			if !newer(h[i], h[c]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	hi := min(f.hi, int64(len(m.times))-1)
	for id := max(f.lo, 1); id <= hi; id++ {
		if !f.pass(m, id) {
			continue
		}
		if len(h) < n {
			h = append(h, id)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !newer(h[p], h[i]) {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
			continue
		}
		if n > 0 && newer(id, h[0]) {
			h[0] = id
			down(0)
		}
	}
	sort.Slice(h, func(i, j int) bool { return newer(h[i], h[j]) })
	out := make([]rankedHit, len(h))
	for i, id := range h {
		out[i] = rankedHit{id: id}
	}
	return out
}

// restrictToPeopleLocked limits f to visible conversations with any of
// handles. Callers hold mem.mu.
func (ix *Index) restrictToPeopleLocked(f *filter, handles map[uint32]bool) {
	var maxID uint32
	for id := range ix.mem.convByID {
		maxID = max(maxID, id)
	}
	ok := make([]bool, maxID+1)
	for id, ci := range ix.mem.convByID {
		if f.convOK != nil && (int(id) >= len(f.convOK) || !f.convOK[id]) {
			continue
		}
		if !ix.visible(ci) {
			continue
		}
		for _, h := range ci.handles {
			if handles[h] {
				ok[id] = true
				break
			}
		}
	}
	f.convOK = ok
}

func interpretation(pq *parsedQuery) *Interpretation {
	in := &Interpretation{DateText: pq.dateText, People: pq.people}
	if pq.boostText != "" {
		sd := &SoftDate{Text: pq.boostText}
		if pq.boostFrom != 0 {
			sd.Since = time.UnixMilli(pq.boostFrom).UTC()
		}
		if pq.boostUntil != 0 {
			sd.Until = time.UnixMilli(pq.boostUntil + 1).UTC()
		}
		in.SoftDate = sd
	}
	if pq.since != 0 {
		in.Since = time.UnixMilli(pq.since).UTC()
	}
	if pq.until != 0 {
		in.Until = time.UnixMilli(pq.until + 1).UTC()
	}
	for _, p := range pq.phrases {
		in.Phrases = append(in.Phrases, strings.Join(p, " "))
	}
	for _, t := range pq.terms {
		tm := TermMatch{Word: t.word, DocFreq: t.df, Matches: []string{}}
		for _, v := range t.variants {
			tm.Matches = append(tm.Matches, v.term+" ("+v.kind.String()+")")
		}
		in.Terms = append(in.Terms, tm)
	}
	return in
}
