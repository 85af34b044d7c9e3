package index

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/fold"
	"github.com/tidings-mcp/tidings/internal/index/querytext"
	"github.com/tidings-mcp/tidings/internal/index/vecscan"
)

// MailQuery is a mail_search query (docs/tools.md, "mail_search").
type MailQuery struct {
	// Text is the query; empty lists the mail the filters allow, newest
	// first.
	Text string
	// Mode is hybrid (default), fulltext or semantic.
	Mode Mode
	// Mailboxes limits the search to these synced mailboxes (MailMailbox
	// IDs); nil searches every one, an empty non-nil slice none.
	Mailboxes []int64
	// From keeps mail whose From name or address contains it (case
	// insensitive).
	From string
	// Since (inclusive) and Until (exclusive) bound the Date header.
	Since, Until time.Time
	// Unread keeps unread (true) or read (false) mail only.
	Unread *bool
	// Limit (default DefaultLimit, at most MaxLimit) and Offset page the
	// ranked list.
	Limit, Offset int
}

// MailHit is one mail_search result. Subject and From are third-party
// text: the caller applies output.Name; Snippet is cut from the indexed
// body (secrets already blanked) and still goes through the output
// boundary and the untrusted-content wrapper.
type MailHit struct {
	Account     string
	Mailbox     string
	UIDValidity uint32
	UID         uint32
	MessageID   string
	Subject     string
	From        MailAddress
	Date        time.Time
	Unread      bool
	Flags       []string
	Snippet     string
	Score       float64
	Explain     *Explanation
}

// MailResult is a mail_search answer.
type MailResult struct {
	Mode         Mode
	Hits         []MailHit
	More         bool // ranked hits beyond Offset+Limit exist
	ScanComplete bool
	// Hidden counts hits left out because the read policy blocks one of
	// their correspondents (mail stored before the person was blocked).
	Hidden int
	Notes  []string
}

// mailFilterSQL returns the WHERE clause (on alias m) and its arguments.
func mailFilterSQL(q *MailQuery) (string, []any, error) {
	var w []string
	var args []any
	w = append(w, "1") // (rows of an old UIDVALIDITY never outlive the reset that voids them)
	if q.Mailboxes != nil {
		js, err := json.Marshal(q.Mailboxes)
		if err != nil {
			return "", nil, err
		}
		w = append(w, "m.mailbox IN (SELECT value FROM json_each(?))")
		args = append(args, string(js))
	}
	if f := strings.ToLower(strings.TrimSpace(q.From)); f != "" {
		w = append(w, "instr(m.from_key, ?) > 0")
		args = append(args, f)
	}
	if !q.Since.IsZero() {
		w = append(w, "m.date >= ?")
		args = append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		w = append(w, "m.date < ?")
		args = append(args, q.Until.UnixMilli())
	}
	if q.Unread != nil {
		w = append(w, "m.unread = ?")
		args = append(args, *q.Unread)
	}
	return strings.Join(w, " AND "), args, nil
}

// mailQueryTerms returns the query's folded words, stop words dropped
// (all kept when nothing else is left), without repeats.
func mailQueryTerms(text string) []string {
	var all, content []string
	for _, t := range fold.Terms(text) {
		if slices.Contains(all, t) {
			continue
		}
		all = append(all, t)
		if !querytext.IsStopWord(t) {
			content = append(content, t)
		}
	}
	if len(content) == 0 {
		content = all
	}
	if len(content) > maxQueryTerms {
		content = content[:maxQueryTerms]
	}
	return content
}

// mailFTSWeights weighs a match in the subject over one in the names
// over one in the body (bm25 column weights).
const mailFTSWeights = "8.0, 3.0, 1.0"

// mailFulltext ranks mail by BM25 over the FTS5 index (porter stemming,
// the same unicode61 folding as messages).
func (ix *Index) mailFulltext(ctx context.Context, terms []string, where string, args []any, k int) ([]ftHit, *SignalCoverage, error) {
	cov := &SignalCoverage{Complete: true}
	if len(terms) == 0 {
		return nil, cov, nil
	}
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	expr := strings.Join(parts, " OR ")
	qargs := append([]any{expr}, args...)
	qargs = append(qargs, k)
	rows, err := ix.rquery(ctx, `SELECT m.id, bm25(mail_fts, `+mailFTSWeights+`) AS s FROM mail_fts JOIN mail_messages m ON m.id = mail_fts.rowid
		WHERE mail_fts MATCH ? AND `+where+` ORDER BY s, m.date DESC LIMIT ?`, qargs...)
	if err != nil {
		return nil, cov, fmt.Errorf("search mail: %w", err)
	}
	defer rows.Close()
	var out []ftHit
	for rows.Next() {
		var h ftHit
		if err := rows.Scan(&h.id, &h.score); err != nil {
			return nil, cov, fmt.Errorf("search mail: %w", err)
		}
		h.score = -h.score // bm25() is lower-is-better
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, cov, fmt.Errorf("search mail: %w", err)
	}
	cov.Candidates = len(out)
	return out, cov, nil
}

// mailSemantic ranks mail in scope by similarity with the query. Mail
// vectors are read from the database and scored exactly (no binary
// prefilter: a mailbox is small next to a message history).
func (ix *Index) mailSemantic(ctx context.Context, text, where string, args []any, k int) ([]scored, *SignalCoverage, error) {
	cov := &SignalCoverage{}
	emb := ix.opts.Embedder
	if emb == nil {
		cov.Note = "no embedder is configured"
		return nil, cov, errNoVectors
	}
	id := emb.ID()
	vecs, err := emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, cov, fmt.Errorf("embed query: %w", err)
	}
	if len(vecs) != 1 || len(vecs[0]) != emb.Dim() {
		return nil, cov, fmt.Errorf("embed query: unexpected vector shape")
	}
	qv := vecs[0]
	zero := isZeroVec(qv)
	// One pass over the mail in scope: its vector, or NULL when it has
	// none from this embedder yet (counted, so coverage is exact).
	rows, err := ix.rquery(ctx, `SELECT m.id, v.q FROM mail_messages m LEFT JOIN mail_vectors v ON v.id = m.id AND v.embedder = ?
		WHERE `+where, append([]any{id}, args...)...)
	if err != nil {
		return nil, cov, fmt.Errorf("search mail: %w", err)
	}
	defer rows.Close()
	top := &topK{k: k}
	buf := make([]float32, len(qv))
	for rows.Next() {
		var i int64
		var b []byte
		if err := rows.Scan(&i, &b); err != nil {
			return nil, cov, fmt.Errorf("search mail: %w", err)
		}
		if b == nil {
			cov.Unembedded++
			continue
		}
		cov.Candidates++
		if !zero && len(b) > 0 && vecscan.Dequantize(b, buf) {
			top.offer(i, vecscan.Dot(qv, buf))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, cov, fmt.Errorf("search mail: %w", err)
	}
	cov.Complete = cov.Unembedded == 0
	switch {
	case zero:
		cov.Note = "the query has no words the embedder knows"
		return nil, cov, nil
	case cov.Unembedded > 0:
		cov.Note = fmt.Sprintf("%d mails in scope are not embedded yet", cov.Unembedded)
	}
	return positive(top.sorted()), cov, nil
}

// MailSearch runs a mail_search query: hybrid (reciprocal rank fusion of
// BM25 and vector similarity, fusion.go), fulltext or semantic, over the
// synced mail the filters allow. Hits whose correspondents the read
// policy blocks are left out and counted in Hidden.
func (ix *Index) MailSearch(ctx context.Context, q MailQuery) (*MailResult, error) {
	if q.Mode == "" {
		q.Mode = ModeHybrid
	}
	switch q.Mode {
	case ModeHybrid, ModeFulltext, ModeSemantic:
	default:
		return nil, fmt.Errorf("mode %q: want hybrid, fulltext or semantic: %w", q.Mode, ErrBadQuery)
	}
	if len(q.Text) > 1000 {
		return nil, fmt.Errorf("query text longer than 1000 bytes: %w", ErrBadQuery)
	}
	if q.Limit < 0 || q.Offset < 0 {
		return nil, fmt.Errorf("limit and offset must not be negative: %w", ErrBadQuery)
	}
	limit := clampInt(q.Limit, DefaultLimit, MaxLimit)
	if q.Offset+limit > MaxDepth {
		return nil, fmt.Errorf("ranked results stop at %d; narrow the query to see more: %w", MaxDepth, ErrBadQuery)
	}
	where, args, err := mailFilterSQL(&q)
	if err != nil {
		return nil, err
	}
	res := &MailResult{Mode: q.Mode, Hits: []MailHit{}}
	want := q.Offset + limit + 1
	var ranked []rankedHit
	terms := mailQueryTerms(q.Text)
	switch {
	case strings.TrimSpace(q.Text) == "":
		ranked, err = ix.mailBrowse(ctx, where, args, want)
		if err != nil {
			return nil, err
		}
		res.ScanComplete = true
		res.Notes = append(res.Notes, "no query: these are the mails the filters allow, newest first")
	default:
		depth := max(want, ix.tune.FuseDepth)
		var ft []ftHit
		var fcov *SignalCoverage
		if q.Mode != ModeSemantic {
			if ft, fcov, err = ix.mailFulltext(ctx, terms, where, args, depth); err != nil {
				return nil, err
			}
		}
		var sem []scored
		var scov *SignalCoverage
		serr := errNoVectors
		if q.Mode != ModeFulltext {
			sem, scov, serr = ix.mailSemantic(ctx, q.Text, where, args, depth)
			if serr != nil && serr != errNoVectors {
				return nil, serr
			}
		}
		switch {
		case q.Mode == ModeFulltext:
			ranked, res.ScanComplete = fromFulltext(ft), fcov.Complete
		case serr != nil:
			res.Notes = append(res.Notes, "semantic search unavailable: "+scov.Note+"; results are full-text only")
			res.Mode = ModeFulltext
			if ft == nil && fcov == nil {
				if ft, fcov, err = ix.mailFulltext(ctx, terms, where, args, depth); err != nil {
					return nil, err
				}
			}
			ranked, res.ScanComplete = fromFulltext(ft), fcov.Complete
		case q.Mode == ModeSemantic:
			ranked, res.ScanComplete = fromSemantic(sem), scov.Complete
		default:
			ranked, res.ScanComplete = fuse(ft, sem), fcov.Complete && scov.Complete
		}
		if scov != nil && serr == nil && scov.Note != "" {
			res.Notes = append(res.Notes, scov.Note)
		}
	}
	hits, hidden, err := ix.mailHydrate(ctx, ranked, terms)
	if err != nil {
		return nil, err
	}
	res.Hidden = hidden
	if q.Offset < len(hits) {
		hits = hits[q.Offset:]
	} else {
		hits = nil
	}
	if len(hits) > limit {
		hits, res.More = hits[:limit], true
	}
	res.Hits = append(res.Hits, hits...)
	return res, nil
}

// mailBrowse lists mail in scope newest first.
func (ix *Index) mailBrowse(ctx context.Context, where string, args []any, n int) ([]rankedHit, error) {
	rows, err := ix.rquery(ctx, "SELECT m.id FROM mail_messages m WHERE "+where+" ORDER BY m.date DESC, m.id DESC LIMIT ?", append(slices.Clone(args), n)...)
	if err != nil {
		return nil, fmt.Errorf("list mail: %w", err)
	}
	defer rows.Close()
	var out []rankedHit
	for rows.Next() {
		var h rankedHit
		if err := rows.Scan(&h.id); err != nil {
			return nil, fmt.Errorf("list mail: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// mailHydrate loads ranked rows, in order, dropping the ones the read
// policy blocks (counted) and ones deleted since they were ranked.
func (ix *Index) mailHydrate(ctx context.Context, ranked []rankedHit, terms []string) ([]MailHit, int, error) {
	if len(ranked) == 0 {
		return nil, 0, nil
	}
	ids := make([]int64, len(ranked))
	for i, r := range ranked {
		ids[i] = r.id
	}
	rows, err := ix.rquery(ctx, `SELECT m.id, b.account, b.path, m.uidvalidity, m.uid, m.message_id, m.subject, m.from_name, m.from_addr,
		m.date, m.unread, m.flags, m.ibody, m.people FROM mail_messages m JOIN mail_mailboxes b ON b.id = m.mailbox
		WHERE m.id IN (SELECT value FROM json_each(?))`, idsJSON(ids))
	if err != nil {
		return nil, 0, fmt.Errorf("load mail hits: %w", err)
	}
	defer rows.Close()
	type row struct {
		h      MailHit
		body   string
		people string
	}
	byID := map[int64]*row{}
	for rows.Next() {
		var r row
		var id, date int64
		var flags string
		if err := rows.Scan(&id, &r.h.Account, &r.h.Mailbox, &r.h.UIDValidity, &r.h.UID, &r.h.MessageID, &r.h.Subject, &r.h.From.Name, &r.h.From.Addr,
			&date, &r.h.Unread, &flags, &r.body, &r.people); err != nil {
			return nil, 0, fmt.Errorf("load mail hits: %w", err)
		}
		r.h.Date = time.UnixMilli(date).UTC()
		r.h.Flags = strings.Fields(flags)
		byID[id] = &r
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("load mail hits: %w", err)
	}
	stems := map[string]bool{}
	for _, t := range terms {
		stems[querytext.Stem(t)] = true
	}
	var out []MailHit
	hidden := 0
	for _, rk := range ranked {
		r := byID[rk.id]
		if r == nil {
			continue
		}
		if !ix.mailPeopleAllowed(r.people) {
			hidden++
			continue
		}
		var spans [][2]int
		fold.Tokenize(r.body, nil, func(t []byte, s, e int) {
			if stems[querytext.Stem(string(t))] {
				spans = append(spans, [2]int{s, e})
			}
		})
		h := r.h
		h.Snippet = snippet(r.body, spans)
		h.Score = rk.score
		if rk.ft != nil || rk.sem != nil {
			h.Explain = &Explanation{Fulltext: rk.ft, Semantic: rk.sem, Fused: rk.fused}
		}
		out = append(out, h)
	}
	return out, hidden, nil
}
