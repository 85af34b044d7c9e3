package index

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tidings-mcp/tidings/internal/index/fold"
)

// maxTermsPerToken bounds how many vocabulary terms one pattern token may
// expand to before it is dropped from candidate generation (verification
// still checks it).
const maxTermsPerToken = 256

// substringSearch finds messages whose text contains the query text
// (case- and diacritic-insensitive), newest first.
//
// Candidates come from the word index: each word of the pattern must occur
// in the message as a whole term (inner words), a term ending with it (the
// first word, when the pattern starts mid-word), a term starting with it
// (the last word) or containing it (a single word). Those term sets come
// from the in-memory vocabulary; FTS5 intersects their postings. Every
// candidate is then verified against the folded text, so the answer is
// exact. A pattern without letters or digits (emoji, punctuation) is
// verified message by message, newest first, up to SubstringScan.
func (ix *Index) substringSearch(ctx context.Context, q *Query, f *filter, cur cursor, limit int, res *Result) (*Result, error) {
	pattern := strings.TrimSpace(q.Text)
	fp, _ := fold.ForSubstring(pattern, false)
	cov := &SignalCoverage{Complete: true}
	res.Coverage.Substring = cov
	curT, curID := int64(1<<62), int64(1<<62)
	if q.Cursor != "" {
		curT, curID = cur.Time, cur.ID
	}
	type tokInfo struct {
		text   string
		terms  []variant
		df     int64
		usable bool
	}
	var toks []tokInfo
	var spans [][2]int
	fold.Tokenize(fp, nil, func(t []byte, a, b int) {
		toks = append(toks, tokInfo{text: string(t)})
		spans = append(spans, [2]int{a, b})
	})
	ix.mem.mu.RLock()
	empty := false
	for i := range toks {
		t := &toks[i]
		leftOpen := i == 0 && spans[i][0] == 0
		rightOpen := i == len(toks)-1 && spans[i][1] == len(fp)
		add := func(term string) bool {
			t.terms = append(t.terms, variant{term: term})
			t.df += int64(ix.mem.voc.df[term])
			return len(t.terms) <= maxTermsPerToken
		}
		switch {
		case leftOpen && rightOpen:
			ix.mem.voc.containing(t.text, add)
		case leftOpen:
			ix.mem.voc.withSuffix(t.text, add)
		case rightOpen:
			ix.mem.voc.withPrefix(t.text, add)
		default:
			if _, ok := ix.mem.voc.df[t.text]; ok {
				add(t.text)
			}
		}
		if len(t.terms) == 0 {
			empty = true
		}
		t.usable = len(t.terms) > 0 && len(t.terms) <= maxTermsPerToken
	}
	if empty {
		ix.mem.mu.RUnlock()
		res.ScanComplete = true
		return res, nil // some word of the pattern occurs in no message
	}
	var groups []string
	for _, t := range toks {
		if t.usable {
			groups = append(groups, "("+matchExpr(t.terms, "OR")+")")
		}
	}
	var found []substrHit
	var err error
	want := limit + 1
	if len(groups) > 0 {
		// Candidates arrive newest id first; they are verified in batches,
		// and the scan stops once want matches are in hand that no older id
		// can beat (the time envelope bounds the times of smaller ids).
		var batch []int64
		var ferr error
		bounded := false
		verify := func() {
			if len(batch) == 0 || ferr != nil {
				return
			}
			got, err := ix.fetchTexts(ctx, batch)
			if err != nil {
				ferr = err
				return
			}
			for _, id := range batch {
				cov.Candidates++
				if it, ok := got[id]; ok {
					if sp := matchSubstring(it.text, fp); len(sp) > 0 {
						found = append(found, substrHit{id: id, time: it.time, text: it.text, spans: sp})
					}
				}
			}
			batch = batch[:0]
			sortHits(found)
		}
		var complete bool
		_, complete, err = ix.postings(ctx, strings.Join(groups, " AND "), f, ix.tune.SubstringScan, 0, func(id int64) bool {
			t := ix.mem.times[id]
			if !(t < curT || (t == curT && id < curID)) {
				return true
			}
			batch = append(batch, id)
			if len(batch) < 256 {
				return true
			}
			verify()
			if ferr != nil {
				return false
			}
			if len(found) >= want && ix.mem.maxTimeUpTo(id-1) < found[want-1].time {
				bounded = true
				return false
			}
			return true
		})
		if err == nil {
			verify()
			err = ferr
		}
		if !complete && !bounded {
			cov.Complete = false
			cov.Note = fmt.Sprintf("more than %d messages contain the words of the pattern; the newest were checked", ix.tune.SubstringScan)
		}
		if len(found) > want {
			found = found[:want]
		}
	}
	ix.mem.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		found, err = ix.verifyScan(ctx, f, fp, curT, curID, want, cov)
		if err != nil {
			return nil, err
		}
	}
	res.ScanComplete = cov.Complete
	if len(found) > limit {
		found = found[:limit]
		last := found[len(found)-1]
		res.NextCursor = encodeCursor(cursor{Mode: ModeSubstring, Time: last.time, ID: last.id, Print: q.fingerprint()})
	}
	page := make([]rankedHit, len(found))
	for i, h := range found {
		page[i] = rankedHit{id: h.id, spans: h.spans, text: h.text}
	}
	hits, err := ix.hydrateHits(ctx, page, nil, f, q.Explain)
	if err != nil {
		return nil, err
	}
	res.Hits = hits
	return res, nil
}

func sortHits(h []substrHit) {
	sort.Slice(h, func(i, j int) bool {
		if h[i].time != h[j].time {
			return h[i].time > h[j].time
		}
		return h[i].id > h[j].id
	})
}

type substrHit struct {
	id    int64
	time  int64
	text  string
	spans [][2]int
}

// matchSubstring returns the byte spans in text of every occurrence of the
// folded pattern fp.
func matchSubstring(text, fp string) [][2]int {
	if fp != "" && isASCII(text) {
		return matchASCII(text, fp)
	}
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

// matchASCII is matchSubstring for a text of ASCII only, which folds to
// its lower case byte for byte (so the spans need no mapping), without
// building the folded copy: most candidates do not match.
func matchASCII(text, fp string) [][2]int {
	var spans [][2]int
	for pos := 0; pos+len(fp) <= len(text); {
		i := indexFoldASCII(text[pos:], fp)
		if i < 0 {
			break
		}
		a := pos + i
		spans = append(spans, [2]int{a, a + len(fp)})
		pos = a + len(fp)
	}
	return spans
}

// indexFoldASCII is the first index of fp (folded: lower case) in the
// lower case of the ASCII text s, or -1. A folded pattern with a
// non-ASCII byte never occurs.
func indexFoldASCII(s, fp string) int {
	first := fp[0]
	for i := 0; i+len(fp) <= len(s); i++ {
		if lowerASCII(s[i]) != first {
			continue
		}
		j := 1
		for j < len(fp) && lowerASCII(s[i+j]) == fp[j] {
			j++
		}
		if j == len(fp) {
			return i
		}
	}
	return -1
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// endOffset maps an end position in folded text to the original text: the
// end of the original character that produced the last folded byte.
func endOffset(text string, m []int, b int) int {
	if b >= len(m)-1 {
		return len(text)
	}
	return m[b]
}

type textRow struct {
	text string
	time int64
}

func (ix *Index) fetchTexts(ctx context.Context, ids []int64) (map[int64]textRow, error) {
	out := make(map[int64]textRow, len(ids))
	err := ix.readTexts(ctx, ids, func(r storedText) {
		out[r.id] = textRow{text: r.text, time: r.time}
	})
	return out, err
}

// verifyScan walks messages in scope from the newest id down, verifying
// each, until it has want matches that no older id can beat (the chunk time
// envelope bounds the times below) or SubstringScan messages were read.
func (ix *Index) verifyScan(ctx context.Context, f *filter, fp string, curT, curID int64, want int, cov *SignalCoverage) ([]substrHit, error) {
	var out []substrHit
	const batch = 512
	id := f.hi
	for {
		ix.mem.mu.RLock()
		m := ix.mem
		if id >= int64(len(m.times)) {
			id = int64(len(m.times)) - 1
		}
		lo := max(f.lo, 1)
		var part []int64
		n := min(batch, ix.tune.SubstringScan-cov.Candidates)
		for ; id >= lo && len(part) < n; id-- {
			if !f.pass(m, id) {
				continue
			}
			t := m.times[id]
			if t < curT || (t == curT && id < curID) {
				part = append(part, id)
			}
		}
		// The newest time any remaining id can have.
		bound := int64(-1 << 62)
		if id >= lo {
			bound = m.maxTimeUpTo(id)
		}
		ix.mem.mu.RUnlock()
		if len(part) > 0 {
			// part holds ids in scope, descending; their range is read
			// along the table and the ids out of scope are skipped.
			inPart := make(map[int64]bool, len(part))
			for _, pid := range part {
				inPart[pid] = true
			}
			cov.Candidates += len(part)
			err := ix.readTextRange(ctx, part[len(part)-1], part[0], func(it storedText) {
				if !inPart[it.id] {
					return
				}
				if sp := matchSubstring(it.text, fp); len(sp) > 0 {
					out = append(out, substrHit{id: it.id, time: it.time, text: it.text, spans: sp})
				}
			})
			if err != nil {
				return nil, err
			}
		}
		sortHits(out)
		if len(out) >= want && (id < lo || bound < out[want-1].time) {
			return out[:want], nil
		}
		if id < lo {
			return out, nil
		}
		if cov.Candidates >= ix.tune.SubstringScan {
			cov.Complete = false
			cov.Note = fmt.Sprintf("the pattern has no letters or digits to look up; the newest %d messages in scope were checked", cov.Candidates)
			return out[:min(len(out), want)], nil
		}
	}
}
