package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/tidings-mcp/tidings/internal/model"
)

// One-time codes are never searchable. Apple marks them with an attribute
// run (model.Run.OneTimeCode), often in text that does not look like a code
// to a pattern ("Blue Heron Dental: 4K9QZ7"). If the code were indexed, a
// search could reveal it even though every output masks it: a substring or
// word search for "4K9", then "4K9Q", … tells which guesses a message
// contains, a prefix or typo expansion lists the indexed term itself, and a
// highlight or snippet boundary could cut it. So the stored text — the one
// the full-text index, the vocabulary, substring search and the embedder
// read — has every code byte replaced by a space, and the unmasked text is
// kept in the message's extra record for display (history and search hits
// return it with its runs, and the output boundary masks the code, or shows
// it when the person turned that redaction off).

// maskCodes returns text with every byte of its one-time-code ranges
// replaced by a space (a token separator for every tokenizer here), so the
// result has the same length and the same offsets as text. Text without a
// code run is returned as is.
func maskCodes(text string, runs []model.Run) string {
	rs := model.OneTimeCodeRanges(text, runs)
	if len(rs) == 0 {
		return text
	}
	b := []byte(text)
	for _, r := range rs {
		for i := r[0]; i < r[1]; i++ {
			b[i] = ' '
		}
	}
	return string(b)
}

// codesMaskedKey is the meta key recording that rows stored before codes
// were masked have been rewritten.
const codesMaskedKey = "codes_masked"

// maskStoredCodes brings rows stored by earlier versions up to date: one
// pass for one-time codes (maskStoredCodeRuns), then one for every other
// secret (maskStoredSecrets, secrets.go). Each runs once per index.
func (ix *Index) maskStoredCodes(ctx context.Context) error {
	if err := ix.maskStoredCodeRuns(ctx); err != nil {
		return err
	}
	return ix.maskStoredSecrets(ctx)
}

// maskStoredCodeRuns rewrites, once per index, the messages stored before
// one-time codes were masked: their stored text is masked, the unmasked
// text moves to the extra record, their full-text rows, document
// frequencies and lengths are replaced, and their vectors are queued for
// re-embedding. It runs in one transaction and scrubs the FTS index
// afterwards (old segments still hold the codes' postings). Callers hold
// writeMu.
func (ix *Index) maskStoredCodeRuns(ctx context.Context) error {
	done, err := getMetaInt(ctx, ix.wdb, codesMaskedKey)
	if err != nil || done == 1 {
		return err
	}
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("mask stored codes: %w", err)
	}
	defer tx.Rollback() // a no-op once committed
	if err := ix.refreshTx(ctx, tx); err != nil {
		return err
	}
	type row struct {
		id         int64
		text       string
		extra      string
		search     string
		searchable bool
	}
	var todo []row
	rows, err := tx.QueryContext(ctx, `SELECT id, text, extra, coalesce(search_extra, ''), searchable FROM messages
WHERE extra LIKE '%"one_time_code":true%'`)
	if err != nil {
		return fmt.Errorf("mask stored codes: %w", err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.text, &r.extra, &r.search, &r.searchable); err != nil {
			rows.Close()
			return fmt.Errorf("mask stored codes: %w", err)
		}
		todo = append(todo, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mask stored codes: %w", err)
	}
	w := storedRewrite{df: map[string]int32{}}
	for _, r := range todo {
		var x messageExtra
		if err := json.Unmarshal([]byte(r.extra), &x); err != nil || x.Text != "" {
			continue // unreadable, or already masked
		}
		masked := maskCodes(r.text, x.Runs)
		if masked == r.text {
			continue
		}
		x.Text = r.text
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Errorf("mask stored codes: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE messages SET text = ?, extra = ? WHERE id = ?", masked, string(b), r.id); err != nil {
			return fmt.Errorf("mask stored codes: %w", err)
		}
		if !r.searchable {
			continue
		}
		if err := w.reindex(ctx, tx, r.id, r.text, r.search, masked, r.search); err != nil {
			return fmt.Errorf("mask stored codes: %w", err)
		}
	}
	return ix.finishRewrite(ctx, tx, &w, codesMaskedKey, "one-time codes removed from the search index")
}

// storedRewrite accumulates what one upgrade pass over stored rows
// (maskStoredCodeRuns, maskStoredSecrets) changes in the full-text index,
// the document frequencies, the total length and the vectors.
type storedRewrite struct {
	df       map[string]int32
	lenDelta int64
	vecDrop  []int64
	recs     map[int64][]byte // new term records (termrec.go)
}

// reindex replaces a searchable row's full-text entry and term counts,
// from (oldText, oldSearch) to (newText, newSearch), and queues its vector
// for re-embedding.
func (w *storedRewrite) reindex(ctx context.Context, tx *sql.Tx, id int64, oldText, oldSearch, newText, newSearch string) error {
	if _, err := tx.ExecContext(ctx, ftsDelete, id, indexText(oldText, oldSearch)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO fts(rowid, text) VALUES(?, ?)", id, indexText(newText, newSearch)); err != nil {
		return err
	}
	oldTerms, oldN := distinctTerms(oldText, oldSearch)
	newTerms, newN, rec := termRecord(newText, newSearch)
	if w.recs == nil {
		w.recs = map[int64][]byte{}
	}
	w.recs[id] = rec
	for _, t := range oldTerms {
		w.df[t]--
	}
	for _, t := range newTerms {
		w.df[t]++
	}
	w.lenDelta += int64(newN - oldN)
	for _, q := range []string{"DELETE FROM vectors WHERE id = ?", "INSERT OR IGNORE INTO embed_queue(id) VALUES(?)"} {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return err
		}
	}
	w.vecDrop = append(w.vecDrop, id)
	return nil
}

// finishRewrite writes an upgrade pass's term counts and its done key,
// commits tx with memory updated, and scrubs the FTS index (old segments
// still hold the rewritten rows' postings) when any row changed.
func (ix *Index) finishRewrite(ctx context.Context, tx *sql.Tx, w *storedRewrite, doneKey, logMsg string) error {
	for t, n := range w.df {
		if n == 0 {
			delete(w.df, t)
		}
	}
	if err := writeTerms(ctx, tx, w.df); err != nil {
		return err
	}
	if err := setMeta(ctx, tx, doneKey, 1); err != nil {
		return err
	}
	if err := ix.commitMemDelta(ctx, tx, w.df, w.lenDelta, w.vecDrop, w.recs); err != nil {
		return err
	}
	if len(w.vecDrop) == 0 {
		return nil
	}
	ix.log.Info(logMsg, "messages", len(w.vecDrop))
	return ix.scrub(ctx)
}

// commitMemDelta applies document-frequency, length and vector changes to
// memory and commits tx with the next generation. On a failed commit
// memory is marked for reload.
func (ix *Index) commitMemDelta(ctx context.Context, tx *sql.Tx, df map[string]int32, lenDelta int64, vecDrop []int64, recs map[int64][]byte) error {
	mem := ix.mem
	mem.mu.Lock()
	defer mem.mu.Unlock()
	for t, n := range df {
		mem.voc.add(t, n)
		if _, ok := mem.voc.df[t]; n < 0 && !ok {
			// The term left the vocabulary: the sorted views (prefix,
			// suffix, typo lookups) would still offer it.
			mem.voc.built = false
		}
	}
	mem.totalLen += lenDelta
	ix.vecDropLocked(vecDrop)
	gen := mem.gen + 1
	for id, r := range recs {
		mem.tupd[id] = r
	}
	if err := mem.persistDocmeta(ctx, tx, gen); err != nil {
		return ix.failMem(err)
	}
	if err := ix.vecPersistLocked(ctx, tx, gen); err != nil {
		return ix.failMem(err)
	}
	for k, v := range map[string]any{"gen": gen, "msg_gen": gen, "total_len": mem.totalLen} {
		if err := setMeta(ctx, tx, k, v); err != nil {
			return ix.failMem(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return ix.failMem(fmt.Errorf("commit: %w", err))
	}
	mem.gen = gen
	return nil
}
