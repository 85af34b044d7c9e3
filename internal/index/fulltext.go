package index

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/tidings-mcp/tidings/internal/index/fold"
)

// BM25 parameters.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
	// maxQueryTerms bounds the words of one query that take part (the
	// rarest are kept).
	maxQueryTerms = 32
)

// ftHit is a fulltext result before hydration.
type ftHit struct {
	id      int64
	score   float64
	matched []string
	spans   [][2]int
	text    string
	det     *ftDetail // ranked from a term record: details come later
}

// matchExpr is an FTS5 expression matching any of the variants. Terms come
// from the vocabulary (folded letters and digits), quoting keeps FTS5 from
// reading them as operators.
func matchExpr(vs []variant, op string) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = `"` + strings.ReplaceAll(v.term, `"`, `""`) + `"`
	}
	return strings.Join(parts, " "+op+" ")
}

// postings streams the ids matching expr within the filter's id range,
// newest id first, keeping those that pass the filter. It stops after cap
// postings and reports whether it saw them all. df, when known (> 0), is
// the number of messages matching expr in the whole index. Callers hold
// mem.mu (read).
//
// The ids arrive in chunks, each one row holding a chunk's ids as text
// (group_concat): a row per posting cost the driver a locked call per
// column and per step, two to three times the whole chunk's cost. Chunks
// grow (postingsChunk, ×4 each time) because each one restarts the FTS
// query, which reads the term's postings from the start; a caller that
// stops early (substring search) rarely needs more than the first.
//
// FTS5 reads a term's postings in full to return them newest first; when
// df says the cap will cut a common word, each query is limited to a
// window of the newest ids expected to hold its chunk (half as much again,
// from the word's density), so only that part is read. Windows grow like
// chunks; the ids returned are the same.
func (ix *Index) postings(ctx context.Context, expr string, f *filter, limit int, df int64, keep func(id int64) bool) (scanned int, complete bool, err error) {
	m := ix.mem
	hi := f.hi
	chunk := postingsChunk
	// The window's top is the newest id in memory (a row committed since
	// by another process is still read: the first window reaches f.hi).
	top := min(hi, m.maxID)
	span := int64(0) // 0: the whole range below hi
	if df > 2*int64(limit) && top > 0 {
		span = max(int64(1.5*float64(min(chunk, limit+1))*float64(top)/float64(df))+1, minPostingsWindow)
	}
	var buf []int64
	for hi >= f.lo {
		// One row more than may be scanned tells whether the scan is
		// complete.
		n := min(chunk, limit-scanned+1)
		lo := f.lo
		if span > 0 && min(hi, top)-span+1 > lo {
			lo = min(hi, top) - span + 1
		}
		var list sql.RawBytes
		rows, err := ix.rquery(ctx, `SELECT group_concat(rowid) FROM (SELECT rowid FROM fts WHERE fts MATCH ? AND rowid BETWEEN ? AND ? ORDER BY rowid DESC LIMIT ?)`, expr, lo, hi, n)
		if err != nil {
			return scanned, false, fmt.Errorf("full-text query: %w", err)
		}
		if rows.Next() {
			err = rows.Scan(&list)
		}
		if err == nil {
			buf, err = appendIDs(buf[:0], list)
		}
		rows.Close()
		if err == nil {
			err = rows.Err()
		}
		if err != nil {
			return scanned, false, fmt.Errorf("full-text query: %w", err)
		}
		// The aggregate takes the rows in the subquery's order; sorting
		// keeps newest-first independent of that.
		if !slices.IsSortedFunc(buf, func(a, b int64) int { return cmp.Compare(b, a) }) {
			slices.SortFunc(buf, func(a, b int64) int { return cmp.Compare(b, a) })
		}
		for _, id := range buf {
			if scanned == limit {
				return scanned, false, nil
			}
			scanned++
			if id < int64(len(m.flags)) && f.pass(m, id) && !keep(id) {
				return scanned, false, nil
			}
		}
		if len(buf) == n {
			hi = buf[len(buf)-1] - 1 // the chunk is full: more may follow
			chunk *= 4
		} else {
			hi = lo - 1 // the window is exhausted
		}
		span *= 4
	}
	return scanned, true, nil
}

// minPostingsWindow is the smallest id window postings queries (see
// postings): below it a query's fixed cost dominates.
const minPostingsWindow = 4096

// postingsChunk is the first chunk of ids postings reads.
const postingsChunk = 1024

// appendIDs parses a comma-separated list of decimal ids (group_concat of
// rowids) onto dst.
func appendIDs(dst []int64, b []byte) ([]int64, error) {
	var v int64
	digits := 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v*10 + int64(c-'0')
			digits++
		case c == ',' && digits > 0:
			dst = append(dst, v)
			v, digits = 0, 0
		default:
			return dst, fmt.Errorf("unexpected %q in an id list", c)
		}
	}
	if digits > 0 {
		dst = append(dst, v)
	} else if len(b) > 0 {
		return dst, fmt.Errorf("id list ends with a comma")
	}
	return dst, nil
}

// fulltext ranks messages in scope by BM25. Candidates come from the FTS
// index term by term (each term's postings newest first, up to TermCap);
// the best by summed IDF are re-scored with exact BM25 from their text.
func (ix *Index) fulltext(ctx context.Context, pq *parsedQuery, f *filter, want int) ([]ftHit, *SignalCoverage, error) {
	cov := &SignalCoverage{Complete: true}
	var terms []qterm
	var unknown []string
	for _, t := range pq.terms {
		if len(t.variants) > 0 {
			terms = append(terms, t)
		} else {
			unknown = append(unknown, t.word)
		}
	}
	if len(unknown) > 0 {
		cov.Note = "no message contains: " + strings.Join(unknown, ", ")
	}
	if len(terms) > maxQueryTerms {
		sort.SliceStable(terms, func(i, j int) bool { return terms[i].idf > terms[j].idf })
		terms = terms[:maxQueryTerms]
	}
	for _, p := range pq.phrases {
		for _, w := range p {
			if !containsTerm(terms, w) {
				return nil, cov, nil // a required phrase word occurs nowhere
			}
		}
	}
	if len(terms) == 0 {
		return nil, cov, nil
	}
	depth := max(ix.tune.RerankDepth, want)
	match := map[string]termRef{}
	for qi, t := range terms {
		for _, v := range t.variants {
			if _, dup := match[v.term]; !dup {
				match[v.term] = termRef{qi, variantWeight[v.kind]}
			}
		}
	}
	ix.mem.mu.RLock()
	docs, totalLen := pq.hid.docsOf(ix.mem)
	avgdl := float64(totalLen) / float64(max(docs, 1))
	var cands []ftCand
	var err error
	var capped []int
	if len(pq.phrases) > 0 {
		cands, err = ix.phraseCandidates(ctx, pq, f, cov)
	} else {
		cands, err = ix.orCandidates(ctx, terms, f, cov, &capped)
	}
	ix.mem.mu.RUnlock()
	if err != nil {
		return nil, cov, err
	}
	cov.Candidates = len(cands)
	// Stage 1: summed IDF of the terms present, newest first on ties.
	for i := range cands {
		s := 0.0
		for qi := range terms {
			if cands[i].mask&(1<<qi) != 0 {
				s += terms[qi].idf
			}
		}
		cands[i].s1 = s
	}
	if len(pq.phrases) == 0 && len(cands) > depth {
		sort.Slice(cands, func(i, j int) bool {
			if cands[i].s1 != cands[j].s1 {
				return cands[i].s1 > cands[j].s1
			}
			return cands[i].id > cands[j].id
		})
		cands = cands[:depth]
	}
	// Stage 2: exact BM25 from the text.
	hits, err := ix.bm25(ctx, cands, terms, match, pq.phrases, avgdl)
	if err != nil {
		return nil, cov, err
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].id > hits[j].id
	})
	// Capped terms: the unread (older) postings belong to messages with
	// none of the fully read words, so their score is at most the sum of
	// the capped terms' largest possible BM25 contributions. If the last
	// result the caller asked for already beats that, nothing unread can
	// enter the page and the scan is complete for this answer.
	if len(capped) > 0 {
		bound := 0.0
		var words []string
		for _, qi := range capped {
			bound += terms[qi].idf * (bm25K1 + 1)
			words = append(words, terms[qi].word)
		}
		if len(hits) >= want && hits[want-1].score > bound {
			cov.Note = joinSentences(cov.Note, "older messages containing only "+strings.Join(words, ", ")+" were not read: they cannot rank this high")
		} else {
			cov.Complete = false
			cov.Capped = append(cov.Capped, words...)
		}
	}
	return hits, cov, nil
}

// commonCap is how many postings of a common word are read once a rarer
// query word has been read completely.
const commonCap = 2000

func joinSentences(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

type termRef struct {
	qi int
	w  float64
}

type ftCand struct {
	id   int64
	mask uint64
	s1   float64
}

// orCandidates merges each term's postings into candidates with a bit per
// term present. Callers hold mem.mu (read).
func (ix *Index) orCandidates(ctx context.Context, terms []qterm, f *filter, cov *SignalCoverage, capped *[]int) ([]ftCand, error) {
	lists := make([][]int64, len(terms))
	// Rarest first. Once a rare term has been read completely, a common
	// term is read only up to commonCap postings (newest first): messages
	// with only common words rarely make the top, and fulltext() proves
	// with a score bound when they cannot.
	order := make([]int, len(terms))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return terms[order[a]].df < terms[order[b]].df })
	rareSeen := false
	for _, qi := range order {
		t := terms[qi]
		limit := ix.tune.TermCap
		if rareSeen && t.df > int64(commonCap) {
			limit = commonCap
		}
		var ids []int64
		_, complete, err := ix.postings(ctx, matchExpr(t.variants, "OR"), f, limit, t.df, func(id int64) bool {
			ids = append(ids, id)
			return true
		})
		if err != nil {
			return nil, err
		}
		if complete {
			rareSeen = true
		} else {
			*capped = append(*capped, qi)
		}
		// postings yields newest first; merging needs descending ids.
		lists[qi] = ids
	}
	// k-way merge of descending lists.
	pos := make([]int, len(lists))
	var out []ftCand
	for {
		best := int64(-1)
		for qi, l := range lists {
			if pos[qi] < len(l) && l[pos[qi]] > best {
				best = l[pos[qi]]
			}
		}
		if best < 0 {
			break
		}
		c := ftCand{id: best}
		for qi, l := range lists {
			if pos[qi] < len(l) && l[pos[qi]] == best {
				c.mask |= 1 << qi
				pos[qi]++
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// phraseCandidates returns messages containing every phrase word (the
// phrases themselves are checked against the text by bm25). Callers hold
// mem.mu (read).
func (ix *Index) phraseCandidates(ctx context.Context, pq *parsedQuery, f *filter, cov *SignalCoverage) ([]ftCand, error) {
	var vs []variant
	seen := map[string]bool{}
	for _, p := range pq.phrases {
		for _, w := range p {
			if !seen[w] {
				seen[w] = true
				vs = append(vs, variant{term: w})
			}
		}
	}
	var out []ftCand
	_, complete, err := ix.postings(ctx, matchExpr(vs, "AND"), f, ix.tune.TermCap, 0, func(id int64) bool {
		out = append(out, ftCand{id: id})
		return true
	})
	if err != nil {
		return nil, err
	}
	if !complete {
		cov.Complete = false
		cov.Capped = append(cov.Capped, `"`+strings.Join(pq.phrases[0], " ")+`"`)
	}
	// Term bits for stage-1 ordering are not needed: every candidate
	// is re-scored.
	return out, nil
}

// bm25 scores candidates. Without phrases a candidate is scored from its
// term record (termrec.go: the same BM25 from the stored length and term
// frequencies) and its text is not read; the hits a page shows get their
// highlights from the text later (fulltextDetail). A candidate without a
// record, a phrase query, and a query term whose hash another vocabulary
// term shares are scored from the text as before.
func (ix *Index) bm25(ctx context.Context, cands []ftCand, terms []qterm, match map[string]termRef, phrases [][]string, avgdl float64) ([]ftHit, error) {
	var hits []ftHit
	if len(phrases) == 0 && !ix.textScoring {
		det := &ftDetail{terms: terms, match: match, avgdl: avgdl}
		hits, cands = ix.scoreRecords(cands, det)
	}
	const batch = 500
	for start := 0; start < len(cands); start += batch {
		part := cands[start:min(len(cands), start+batch)]
		ids := make([]int64, len(part))
		for i, c := range part {
			ids[i] = c.id
		}
		err := ix.readTexts(ctx, ids, func(r storedText) {
			if h, ok := scoreText(r.id, r.text, r.extra, terms, match, phrases, avgdl); ok {
				hits = append(hits, h)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("read candidates: %w", err)
		}
		if len(phrases) > 0 && len(hits) >= ix.tune.RerankDepth*4 {
			break
		}
	}
	return hits, nil
}

// ftDetail is what scoreText needs to find a hit's highlights and matched
// terms once it is on the page (fulltextDetail).
type ftDetail struct {
	terms []qterm
	match map[string]termRef
	avgdl float64
}

// hashVariant is a query term variant as term records know it.
type hashVariant struct {
	h  uint32
	qi int
	w  float64
}

// scoreRecords scores the candidates that have a term record and returns
// the rest, to be scored from their text. Scores equal scoreText's: the
// same length, the same weighted frequencies (each occurrence adds its
// variant's weight), the same formula.
func (ix *Index) scoreRecords(cands []ftCand, det *ftDetail) (hits []ftHit, rest []ftCand) {
	m := ix.mem
	m.mu.RLock()
	defer m.mu.RUnlock()
	hvs := make([]hashVariant, 0, len(det.match))
	for term, r := range det.match {
		if !m.voc.termHashUnique(term) {
			return nil, cands
		}
		hvs = append(hvs, hashVariant{termHash([]byte(term)), r.qi, r.w})
	}
	// A fixed order of additions: the same query scores the same.
	sort.Slice(hvs, func(i, j int) bool { return hvs[i].h < hvs[j].h })
	tf := make([]float64, len(det.terms))
	for _, c := range cands {
		score, ok := scoreRecord(m.termRec(c.id), hvs, tf, det.terms, det.avgdl)
		if !ok {
			rest = append(rest, c)
			continue
		}
		if score > 0 {
			hits = append(hits, ftHit{id: c.id, score: score, det: det})
		}
	}
	return hits, rest
}

// scoreRecord is scoreText's BM25 over a term record; false when the
// record is empty (not known) or malformed. tf is scratch space, one
// entry per query term.
func scoreRecord(rec []byte, hvs []hashVariant, tf []float64, terms []qterm, avgdl float64) (float64, bool) {
	if len(rec) == 0 {
		return 0, false
	}
	n, ents, ok := recordLen(rec)
	if !ok {
		return 0, false
	}
	clear(tf)
	for _, v := range hvs {
		c, ok := recordTF(ents, v.h)
		if !ok {
			return 0, false
		}
		for range c {
			tf[v.qi] += v.w
		}
	}
	score := 0.0
	norm := bm25K1 * (1 - bm25B + bm25B*float64(n)/math.Max(avgdl, 1))
	for qi, f := range tf {
		if f > 0 {
			score += terms[qi].idf * f * (bm25K1 + 1) / (f + norm)
		}
	}
	return score, true
}

// fulltextDetail fills the highlights, matched terms and text of the page's
// hits that were ranked from term records, from their text (one read for
// the page).
func (ix *Index) fulltextDetail(ctx context.Context, page []rankedHit) error {
	var ids []int64
	at := map[int64]int{}
	for i, h := range page {
		if h.det != nil && h.text == "" {
			ids = append(ids, h.id)
			at[h.id] = i
		}
	}
	return ix.readTexts(ctx, ids, func(r storedText) {
		h := &page[at[r.id]]
		if x, ok := scoreText(r.id, r.text, r.extra, h.det.terms, h.det.match, nil, h.det.avgdl); ok {
			h.matched, h.spans, h.text = x.matched, x.spans, x.text
		}
	})
}

// scoreText computes BM25 for one message and the byte spans of its
// matches in text. It fails when a required phrase is missing.
func scoreText(id int64, text, extra string, terms []qterm, match map[string]termRef, phrases [][]string, avgdl float64) (ftHit, bool) {
	tf := make([]float64, len(terms))
	var spans [][2]int
	var matched []string
	var seq []string
	n := 0
	var buf []byte
	for part, s := range [2]string{text, extra} {
		buf = fold.Tokenize(s, buf, func(t []byte, a, b int) {
			n++
			if len(phrases) > 0 {
				seq = append(seq, string(t))
			}
			if r, ok := match[string(t)]; ok {
				tf[r.qi] += r.w
				if part == 0 {
					spans = append(spans, [2]int{a, b})
				}
				if !containsString(matched, string(t)) {
					matched = append(matched, string(t))
				}
			}
		})
		if len(phrases) > 0 {
			seq = append(seq, "\x00") // phrases do not span the body and the subject
		}
	}
	for _, p := range phrases {
		if !containsSeq(seq, p) {
			return ftHit{}, false
		}
	}
	if len(phrases) > 0 {
		spans = phraseSpans(text, phrases, spans)
	}
	score := 0.0
	norm := bm25K1 * (1 - bm25B + bm25B*float64(n)/math.Max(avgdl, 1))
	for qi, f := range tf {
		if f > 0 {
			score += terms[qi].idf * f * (bm25K1 + 1) / (f + norm)
		}
	}
	if score == 0 && len(phrases) == 0 {
		return ftHit{}, false
	}
	return ftHit{id: id, score: score, matched: matched, spans: spans, text: text}, true
}

func containsTerm(terms []qterm, w string) bool {
	for _, t := range terms {
		for _, v := range t.variants {
			if v.term == w {
				return true
			}
		}
	}
	return false
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func containsSeq(seq, p []string) bool {
outer:
	for i := 0; i+len(p) <= len(seq); i++ {
		for j := range p {
			if seq[i+j] != p[j] {
				continue outer
			}
		}
		return true
	}
	return false
}

// phraseSpans adds the spans of each phrase occurrence in text (merged
// with the word spans already found).
func phraseSpans(text string, phrases [][]string, spans [][2]int) [][2]int {
	type tok struct {
		t    string
		a, b int
	}
	var toks []tok
	fold.Tokenize(text, nil, func(t []byte, a, b int) { toks = append(toks, tok{string(t), a, b}) })
	for _, p := range phrases {
	next:
		for i := 0; i+len(p) <= len(toks); i++ {
			for j := range p {
				if toks[i+j].t != p[j] {
					continue next
				}
			}
			spans = append(spans, [2]int{toks[i].a, toks[i+len(p)-1].b})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	// Merge overlaps.
	var out [][2]int
	for _, s := range spans {
		if n := len(out); n > 0 && s[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}
