package index

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Mode selects how Search matches.
type Mode string

// Search modes.
const (
	// ModeHybrid fuses fulltext and semantic ranks (reciprocal rank
	// fusion, k = 60). It is the default. Without ready vectors it runs
	// fulltext alone and says so.
	ModeHybrid Mode = "hybrid"
	// ModeFulltext ranks by BM25 over words: stop-words dropped, words
	// matched with their inflections, unknown words matched to close
	// spellings, any word may match (more matching words rank higher),
	// "quoted phrases" must appear, relative dates become filters.
	ModeFulltext Mode = "fulltext"
	// ModeSubstring finds messages containing the query text (case- and
	// diacritic-insensitive), newest first: the bridge's search.
	ModeSubstring Mode = "substring"
	// ModeSemantic ranks by embedding similarity alone.
	ModeSemantic Mode = "semantic"
)

// RRFK is the reciprocal rank fusion constant.
const RRFK = 60

// MaxLimit bounds Query.Limit; MaxDepth bounds how deep ranked results can
// be paged (Cursor).
const (
	DefaultLimit = 10
	MaxLimit     = 100
	MaxDepth     = 500
)

// Query is a search request. Filters combine with AND.
type Query struct {
	// Text is the query: a natural question, words, "a quoted phrase", or
	// for substring mode the exact text to find.
	Text string `json:"text"`
	Mode Mode   `json:"mode,omitempty"`
	// ConversationID restricts to one conversation: its id, its chat
	// identifier, or anything ResolveConversations accepts.
	ConversationID string `json:"conversation_id,omitempty"`
	// Contact restricts to conversations with a person: a name, a phone
	// number in any format, or an email address.
	Contact string `json:"contact,omitempty"`
	// Handles restricts to conversations with any of these handles.
	Handles []string `json:"handles,omitempty"`
	// Days restricts to the last N days; Since and Until to a range
	// (Until exclusive). Relative dates in Text ("last week") narrow
	// further unless LiteralDates is set.
	Days  int       `json:"days,omitempty"`
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// FromMe keeps only messages sent by the owner (true) or by others
	// (false).
	FromMe *bool `json:"from_me,omitempty"`
	// Limit is the page size (default 10, at most 100).
	Limit int `json:"limit,omitempty"`
	// Cursor continues a previous Result (Result.NextCursor).
	Cursor string `json:"cursor,omitempty"`
	// Explain adds each signal's rank and score to every hit.
	Explain bool `json:"explain,omitempty"`
	// LiteralDates keeps date words in Text as ordinary words.
	LiteralDates bool `json:"literal_dates,omitempty"`
}

// Signal is one ranking signal's view of a hit.
type Signal struct {
	// Rank is 1-based within the signal's own ranking.
	Rank  int     `json:"rank"`
	Score float64 `json:"score"`
}

// Explanation tells how a hit was ranked.
type Explanation struct {
	Fulltext *Signal `json:"fulltext,omitempty"`
	Semantic *Signal `json:"semantic,omitempty"`
	// Fused is the hybrid score: the sum of 1/(RRFK+rank) over signals.
	Fused float64 `json:"fused,omitempty"`
	// Matched lists the index terms that matched (fulltext).
	Matched []string `json:"matched,omitempty"`
}

// Hit is one search result.
type Hit struct {
	MessageID    string          `json:"message_id"`
	Source       string          `json:"source"`
	Conversation ConversationRef `json:"conversation"`
	Sender       string          `json:"sender,omitempty"`
	SenderName   string          `json:"sender_name,omitempty"`
	FromMe       bool            `json:"from_me"`
	Time         time.Time       `json:"time"`
	// Text is the message's full text, as Message.Text; Runs are its
	// attribute runs (as Message.Runs), so output masks one-time codes in
	// search results exactly as in history. The code ranges themselves are
	// never searched, matched or highlighted (see codes.go).
	Text string      `json:"text"`
	Runs []model.Run `json:"runs,omitempty"`
	// Snippet is an excerpt of Text around the matches with each match
	// wrapped in SnippetOpen/SnippetClose and one-time codes blanked;
	// Highlights are the matches' byte ranges in Text.
	Snippet    string   `json:"snippet"`
	Highlights [][2]int `json:"highlights,omitempty"`
	// Score is the mode's score (BM25, cosine similarity, fused RRF; 0 in
	// substring mode, where order is by time).
	Score   float64      `json:"score"`
	Explain *Explanation `json:"explain,omitempty"`
}

// Snippet highlight markers.
const (
	SnippetOpen  = "**"
	SnippetClose = "**"
)

// SignalCoverage says how much of the scope a signal examined.
type SignalCoverage struct {
	// Complete is true when every message in scope was examined (for
	// semantic: every one has a vector and all were scored).
	Complete bool `json:"complete"`
	// Candidates is how many messages the signal considered.
	Candidates int `json:"candidates"`
	// Capped lists query terms whose postings were cut at the per-term cap
	// (fulltext): older matches of those words alone were not seen.
	Capped []string `json:"capped,omitempty"`
	// Unembedded counts messages in scope without a vector yet (semantic).
	Unembedded int `json:"unembedded,omitempty"`
	// Approximate is true when vectors were pre-filtered by 1-bit codes
	// and only the best candidates re-ranked exactly (semantic).
	Approximate bool   `json:"approximate,omitempty"`
	Note        string `json:"note,omitempty"`
}

// Coverage holds the coverage of each signal used.
type Coverage struct {
	Fulltext  *SignalCoverage `json:"fulltext,omitempty"`
	Semantic  *SignalCoverage `json:"semantic,omitempty"`
	Substring *SignalCoverage `json:"substring,omitempty"`
	// Searchable is the number of searchable messages in the index.
	Searchable int64 `json:"searchable"`
}

// TermMatch shows how one query word was matched.
type TermMatch struct {
	Word string `json:"word"`
	// Matches are the index terms searched for it, each with how it
	// relates ("exact", "stem", "prefix", "typo").
	Matches []string `json:"matches"`
	// DocFreq is the number of messages containing any match.
	DocFreq int64 `json:"doc_freq"`
}

// Interpretation is what Search understood of a natural query.
type Interpretation struct {
	Terms   []TermMatch `json:"terms,omitempty"`
	Phrases []string    `json:"phrases,omitempty"`
	// DateText is the date phrase applied as a filter (Since, Until): only
	// when the query asks for messages of a time window ("messages from
	// last week", "what did Sam say yesterday"). A named date that
	// describes the topic ("conference in January") is searched as words.
	DateText string    `json:"date_text,omitempty"`
	Since    time.Time `json:"since,omitzero"`
	Until    time.Time `json:"until,omitzero"`
	// SoftDate is a relative date that describes the topic ("dinner last
	// week"): not a filter; messages sent then rank higher.
	SoftDate *SoftDate `json:"soft_date,omitempty"`
	// People are the contacts that query words named (words no message
	// contains, such as "Lukas" in "when is Lukas in town"): results are
	// limited to conversations with them.
	People []string `json:"people,omitempty"`
}

// SoftDate is a date range that ranks, not filters.
type SoftDate struct {
	Text  string    `json:"text"`
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
}

// Result is Search's answer.
type Result struct {
	Query string `json:"query"`
	// Mode is the mode that ran; RequestedMode differs when hybrid or
	// semantic fell back to fulltext (see Notes).
	Mode          Mode  `json:"mode"`
	RequestedMode Mode  `json:"requested_mode"`
	Hits          []Hit `json:"hits"`
	// ScanComplete is true only when every signal examined everything in
	// scope. When false, Coverage says what was left out: a missing hit
	// may exist.
	ScanComplete   bool            `json:"scan_complete"`
	Coverage       Coverage        `json:"coverage"`
	Interpretation *Interpretation `json:"interpretation,omitempty"`
	// NextCursor fetches the next page; empty when there is none.
	NextCursor string   `json:"next_cursor,omitempty"`
	Notes      []string `json:"notes,omitempty"`
}

// ErrBadQuery is wrapped by errors about invalid search input.
var ErrBadQuery = errors.New("invalid query")

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

// cursor is the decoded form of Result.NextCursor.
type cursor struct {
	Mode   Mode   `json:"m"`
	Offset int    `json:"o,omitempty"`
	Time   int64  `json:"t,omitempty"`
	ID     int64  `json:"i,omitempty"`
	Print  string `json:"p"`
}

func (q *Query) fingerprint() string {
	h := sha256.New()
	b, _ := json.Marshal([]any{q.Text, q.Mode, q.ConversationID, q.Contact, q.Handles, q.Days, q.Since, q.Until, q.FromMe, q.LiteralDates})
	h.Write(b)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, q *Query) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil {
		return c, fmt.Errorf("cursor: %w", ErrBadCursor)
	}
	if c.Print != q.fingerprint() || c.Mode != q.Mode {
		return c, fmt.Errorf("cursor belongs to another query: %w", ErrBadCursor)
	}
	if c.Offset < 0 || c.Offset > MaxDepth {
		return c, fmt.Errorf("cursor offset: %w", ErrBadCursor)
	}
	return c, nil
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
	if strings.TrimSpace(q.Text) == "" {
		return nil, fmt.Errorf("empty query text: %w", ErrBadQuery)
	}
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
	if err == nil && q.Mode != ModeSubstring {
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

// rankedHit is a hit before hydration.
type rankedHit struct {
	id      int64
	score   float64
	ft, sem *Signal
	fused   float64
	matched []string
	spans   [][2]int // highlight byte ranges in text (fulltext/substring)
	text    string
	boosted bool // in a soft date window (score raised)
}

func fromFulltext(ft []ftHit) []rankedHit {
	out := make([]rankedHit, len(ft))
	for i, h := range ft {
		out[i] = rankedHit{id: h.id, score: h.score, ft: &Signal{Rank: i + 1, Score: h.score}, matched: h.matched, spans: h.spans, text: h.text}
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
		h.matched, h.spans, h.text = x.matched, x.spans, x.text
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

// hydrateHits loads the page's messages and builds snippets.
func (ix *Index) hydrateHits(ctx context.Context, page []rankedHit, pq *parsedQuery, f *filter, explain bool) ([]Hit, error) {
	ids := make([]int64, len(page))
	for i, h := range page {
		ids[i] = h.id
	}
	var prefer map[uint32]bool
	if f.convOK != nil {
		prefer = map[uint32]bool{}
		for c, ok := range f.convOK {
			if ok {
				prefer[uint32(c)] = true
			}
		}
	}
	msgs, err := ix.loadMessages(ctx, ids, prefer)
	if err != nil {
		return nil, err
	}
	byID := map[int64]*Message{}
	for i := range msgs {
		byID[msgs[i].id] = &msgs[i]
	}
	hits := make([]Hit, 0, len(page))
	for _, r := range page {
		m := byID[r.id]
		if m == nil {
			continue // deleted since it was ranked
		}
		// Spans were found in the stored text, which has secrets blanked
		// (same length as Text); matching again works on it too.
		stored := indexedText(m.Text, m.Runs)
		spans := r.spans
		if spans == nil || r.text != stored {
			spans = matchSpans(stored, pq)
		}
		h := Hit{MessageID: m.ID, Source: m.Source, Conversation: m.Conversation, Sender: m.Sender, SenderName: m.SenderName,
			FromMe: m.FromMe, Time: m.Time, Text: m.Text, Runs: m.Runs, Score: r.score, Highlights: spans}
		h.Snippet = snippet(stored, spans)
		if explain {
			h.Explain = &Explanation{Fulltext: r.ft, Semantic: r.sem, Fused: r.fused, Matched: r.matched}
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// matchSpans finds the byte ranges of text's tokens that match a query term
// variant or phrase word.
func matchSpans(text string, pq *parsedQuery) [][2]int {
	if pq == nil {
		return nil
	}
	want := map[string]bool{}
	for _, t := range pq.terms {
		for _, v := range t.variants {
			want[v.term] = true
		}
	}
	var spans [][2]int
	tokenize(text, nil, func(t []byte, s, e int) {
		if want[string(t)] {
			spans = append(spans, [2]int{s, e})
		}
	})
	return spans
}

// snippetWidth is the target snippet length in bytes.
const snippetWidth = 200

// snippet returns an excerpt of text around its first highlighted span,
// with spans wrapped in the markers and "…" where text was cut.
func snippet(text string, spans [][2]int) string {
	start, end := 0, len(text)
	if len(text) > snippetWidth {
		center := 0
		if len(spans) > 0 {
			center = spans[0][0]
		}
		start = max(0, center-snippetWidth/4)
		end = min(len(text), start+snippetWidth)
		if end == len(text) {
			start = max(0, end-snippetWidth)
		}
		// Align to word boundaries.
		if start > 0 {
			if i := strings.IndexAny(text[start:], " \n\t"); i >= 0 && i < 30 {
				start += i + 1
			}
		}
		if end < len(text) {
			if i := strings.LastIndexAny(text[start:end], " \n\t"); i > 0 && end-(start+i) < 30 {
				end = start + i
			}
		}
		for start > 0 && start < len(text) && !isRuneStart(text[start]) {
			start++
		}
		for end < len(text) && !isRuneStart(text[end]) {
			end--
		}
	}
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	pos := start
	for _, sp := range spans {
		if sp[1] <= start || sp[0] >= end {
			continue
		}
		s, e := max(sp[0], start), min(sp[1], end)
		if s < pos {
			continue
		}
		b.WriteString(text[pos:s])
		b.WriteString(SnippetOpen)
		b.WriteString(text[s:e])
		b.WriteString(SnippetClose)
		pos = e
	}
	b.WriteString(text[pos:end])
	if end < len(text) {
		b.WriteString("…")
	}
	return b.String()
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// errNoVectors means semantic search cannot run (no embedder, or vectors
// not ready for the current one).
var errNoVectors = errors.New("no vectors")

// semantic ranks messages in scope by similarity to the query.
func (ix *Index) semantic(ctx context.Context, pq *parsedQuery, f *filter, k int) ([]scored, *SignalCoverage, error) {
	cov := &SignalCoverage{}
	emb := ix.opts.Embedder
	if emb == nil {
		cov.Note = "no embedder is configured"
		return nil, cov, errNoVectors
	}
	st := ix.VectorStatus()
	if !st.Ready {
		pct := 0.0
		if st.Searchable > 0 && st.Vectors > 0 {
			pct = min(100, 100*float64(st.Vectors)/float64(st.Searchable))
		}
		cov.Note = fmt.Sprintf("vectors for embedder %s are not ready (%.0f%% embedded)", st.Embedder, pct)
		return nil, cov, errNoVectors
	}
	text := pq.semantic
	if strings.TrimSpace(text) == "" {
		text = pq.raw
	}
	vecs, err := emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, cov, fmt.Errorf("embed query: %w", err)
	}
	if len(vecs) != 1 || len(vecs[0]) != emb.Dim() {
		return nil, cov, fmt.Errorf("embed query: unexpected vector shape")
	}
	qv := vecs[0]
	if isZeroVec(qv) {
		cov.Complete = true
		cov.Note = "the query has no words the embedder knows"
		return nil, cov, nil
	}
	if err := ix.ensureSlab(ctx); err != nil {
		return nil, cov, err
	}
	return ix.vectorScan(ctx, qv, f, k, cov)
}

// vectorScan ranks the vectors in scope by cosine similarity with qv: a
// pass over the 1-bit codes keeps the VectorCandidates nearest by Hamming
// distance, which are then re-ranked exactly (from memory, or from the
// database when the vectors do not fit in Options.VectorMemory). When the
// scope holds no more vectors than that, every one is re-ranked and the
// ranking is exact.
func (ix *Index) vectorScan(ctx context.Context, qv []float32, f *filter, k int, cov *SignalCoverage) ([]scored, *SignalCoverage, error) {
	m := ix.mem
	m.mu.RLock()
	v := m.vec
	if v == nil || v.dim != len(qv) {
		m.mu.RUnlock()
		cov.Note = "vector dimension mismatch"
		return nil, cov, errNoVectors
	}
	hi := min(f.hi+1, int64(len(m.times)), int64(v.slots()))
	lo := max(f.lo, 1)
	depth := max(ix.tune.VectorCandidates, k)
	qc := make([]uint64, v.words)
	v.code(qv, qc)
	// Without time, conversation or sender filters a message is in scope
	// exactly when it is live and searchable, and a vector exists only for
	// such messages: the scan then walks the vector bitmap 64 ids at a time.
	plain := f.convOK == nil && f.fromMe < 0 && f.since == math.MinInt64 && f.until == math.MaxInt64
	// Candidates are the depth nearest codes by Hamming distance, ties at
	// the cut going to the newest messages. One pass over the codes counts
	// every distance (a histogram: distances have few distinct values) and
	// keeps the ids within an estimated cut; when the histogram shows the
	// true cut is larger, a second pass collects up to it.
	est := v.estimateCut(m, f, qc, lo, hi, depth, plain)
	parts := scanParallelParts(lo, hi, func(a, b int64) hamPart {
		return v.hamming(m, f, qc, a, b, est, plain, true)
	})
	hist := make([]int, v.dim+1)
	for _, p := range parts {
		cov.Candidates += p.considered
		cov.Unembedded += p.missing
		for d, c := range p.hist {
			hist[d] += c
		}
	}
	cov.Complete = cov.Unembedded == 0
	if cov.Unembedded > 0 {
		cov.Note = fmt.Sprintf("%d messages in scope are not embedded yet", cov.Unembedded)
	}
	cov.Approximate = cov.Candidates > depth
	// The distance threshold that admits depth candidates; ties at the
	// threshold go to the newest messages.
	threshold, below := v.dim, 0
	for d, c := range hist {
		if below+c >= depth {
			threshold = d
			break
		}
		below += c
	}
	if threshold > est {
		parts = scanParallelParts(lo, hi, func(a, b int64) hamPart {
			return v.hamming(m, f, qc, a, b, threshold, plain, false)
		})
	}
	atThreshold := depth - below
	var best []scored
	for i := len(parts) - 1; i >= 0; i-- {
		c := parts[i].cands
		for j := len(c) - 1; j >= 0; j-- {
			d := int(c[j].d)
			if d > threshold {
				continue
			}
			if d == threshold {
				if atThreshold <= 0 {
					continue
				}
				atThreshold--
			}
			best = append(best, scored{int64(c[j].id), -float32(d)})
		}
	}
	if v.pool != nil {
		top := &topK{k: k}
		for _, b := range best {
			if s := v.slotOf[b.id]; s != 0 {
				top.offer(b.id, v.pool.mult[s]*dotQ8(qv, v.pool.vec(s)))
			}
		}
		m.mu.RUnlock()
		return positive(top.sorted()), cov, nil
	}
	m.mu.RUnlock()
	// Re-rank the candidates with their stored vectors.
	ids := make([]int64, len(best))
	for i, b := range best {
		ids[i] = b.id
	}
	rows, err := ix.rquery(ctx, "SELECT id, q FROM vectors WHERE id IN (SELECT value FROM json_each(?))", idsJSON(ids))
	if err != nil {
		return nil, cov, fmt.Errorf("re-rank vectors: %w", err)
	}
	defer rows.Close()
	top := &topK{k: k}
	buf := make([]float32, len(qv))
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return nil, cov, fmt.Errorf("re-rank vectors: %w", err)
		}
		if dequantize(b, buf) {
			top.offer(id, dot(qv, buf))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, cov, fmt.Errorf("re-rank vectors: %w", err)
	}
	return positive(top.sorted()), cov, nil
}

// positive drops hits with no similarity at all (orthogonal or opposite
// vectors, e.g. messages without any word the embedder knows).
func positive(s []scored) []scored {
	out := s[:0]
	for _, x := range s {
		if x.score > 0 {
			out = append(out, x)
		}
	}
	return out
}

// scanParallelParts splits [lo, hi) across goroutines.
func scanParallelParts[T any](lo, hi int64, fn func(a, b int64) T) []T {
	n := hi - lo
	if n <= 0 {
		return nil
	}
	parts := 2
	if n < 50000 {
		parts = 1
	}
	out := make([]T, parts)
	step := (n + int64(parts) - 1) / int64(parts)
	done := make(chan struct{}, parts)
	for p := 0; p < parts; p++ {
		a, b := lo+int64(p)*step, min(lo+int64(p+1)*step, hi)
		go func() {
			out[p] = fn(a, b)
			done <- struct{}{}
		}()
	}
	for range parts {
		<-done
	}
	return out
}

// hamCand is a candidate id with its Hamming distance.
type hamCand struct {
	id uint32
	d  uint16
}

// hamPart is one goroutine's share of a Hamming pass.
type hamPart struct {
	hist       []int     // distances of every vector in scope (when counting)
	considered int       // vectors in scope
	missing    int       // messages in scope without a vector
	cands      []hamCand // ids within the cut, ascending
}

// hamming scans ids [a, b): with count it fills the histogram and the
// counters, and it keeps the ids at distance ≤ cut. Callers hold mem.mu.
func (v *vecState) hamming(m *memState, f *filter, qc []uint64, a, b int64, cut int, plain, count bool) hamPart {
	p := hamPart{}
	if count {
		p.hist = make([]int, v.dim+1)
	}
	w := v.words
	if plain && w == 2 && count {
		return v.hammingDense(m, qc, a, b, cut)
	}
	for id := a; id < b; id++ {
		if !f.pass(m, id) {
			continue
		}
		if !v.hasVec(id) {
			if count {
				p.missing++
			}
			continue
		}
		c := v.codes[int(id)*w : int(id+1)*w]
		d := 0
		for i, x := range c {
			d += bits.OnesCount64(x ^ qc[i])
		}
		if count {
			p.hist[d]++
			p.considered++
		}
		if d <= cut {
			p.cands = append(p.cands, hamCand{uint32(id), uint16(d)})
		}
	}
	return p
}

// estimateCut guesses, from a sample of the ids in [lo, hi), a Hamming
// distance that admits about four times depth candidates, so that one pass
// usually collects every candidate. A guess that is too small costs a
// second pass, never a wrong answer. Callers hold mem.mu.
func (v *vecState) estimateCut(m *memState, f *filter, qc []uint64, lo, hi int64, depth int, plain bool) int {
	n := hi - lo
	if n <= 0 || int64(depth)*4 >= n {
		return v.dim // everything is (nearly) a candidate
	}
	const samples = 4096
	step := max(n/samples, 1)
	hist := make([]int, v.dim+1)
	for id := lo; id < hi; id += step {
		if !v.hasVec(id) {
			continue
		}
		if plain {
			if m.flags[id]&(fLive|fSearchable) != fLive|fSearchable {
				continue
			}
		} else if !f.pass(m, id) {
			continue
		}
		d := 0
		for i, x := range v.codes[int(id)*v.words : int(id+1)*v.words] {
			d += bits.OnesCount64(x ^ qc[i])
		}
		hist[d]++
	}
	// Each sampled id stands for step ids.
	want := int((4*int64(depth) + step - 1) / step)
	seen := 0
	for d, c := range hist {
		seen += c
		if seen >= want {
			return min(d+1, v.dim)
		}
	}
	return v.dim
}

// hammingDense is hamming over every id of [a, b) without filters, kept
// tight: codes are read in order, four ids per step, into four histograms
// used in turn (consecutive equal distances, from duplicate messages,
// would otherwise chain every increment through one memory word). An id
// without a vector has an all-zero code (see vecState), so its distance
// is the query's own popcount: those are taken back out of the histogram
// afterwards, and candidates are checked against the vector bitmap and
// the message flags as they are kept. Callers hold mem.mu.
func (v *vecState) hammingDense(m *memState, qc []uint64, a, b int64, cut int) hamPart {
	p := hamPart{hist: make([]int, v.dim+1)}
	q0, q1 := qc[0], qc[1]
	var h [4][129]int32
	keep := func(id int64, d int) {
		if v.hasVec(id) && m.flags[id]&(fLive|fSearchable) == fLive|fSearchable {
			p.cands = append(p.cands, hamCand{uint32(id), uint16(d)})
		}
	}
	cs := v.codes[2*a : 2*b]
	id := a
	for ; len(cs) >= 8; cs, id = cs[8:], id+4 {
		d0 := bits.OnesCount64(cs[0]^q0) + bits.OnesCount64(cs[1]^q1)
		d1 := bits.OnesCount64(cs[2]^q0) + bits.OnesCount64(cs[3]^q1)
		d2 := bits.OnesCount64(cs[4]^q0) + bits.OnesCount64(cs[5]^q1)
		d3 := bits.OnesCount64(cs[6]^q0) + bits.OnesCount64(cs[7]^q1)
		h[0][d0]++
		h[1][d1]++
		h[2][d2]++
		h[3][d3]++
		if min(d0, d1, d2, d3) <= cut {
			for k, d := range [4]int{d0, d1, d2, d3} {
				if d <= cut {
					keep(id+int64(k), d)
				}
			}
		}
	}
	for ; len(cs) >= 2; cs, id = cs[2:], id+1 {
		d := bits.OnesCount64(cs[0]^q0) + bits.OnesCount64(cs[1]^q1)
		h[0][d]++
		if d <= cut {
			keep(id, d)
		}
	}
	vectors := 0
	for wi := a >> 6; wi<<6 < b; wi++ {
		word := v.has[wi]
		if base := wi << 6; base < a {
			word &= ^uint64(0) << uint(a-base)
		}
		if end := (wi + 1) << 6; end > b {
			word &= ^uint64(0) >> uint(end-b)
		}
		vectors += bits.OnesCount64(word)
	}
	for d := range p.hist {
		p.hist[d] = int(h[0][d] + h[1][d] + h[2][d] + h[3][d])
	}
	p.hist[bits.OnesCount64(q0)+bits.OnesCount64(q1)] -= int(b-a) - vectors
	p.considered = vectors
	return p
}
