package index

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Verify checks the index's invariants against its own rows and returns
// every violation found: the per-message columns (docmeta) and their stored
// chunks, document frequencies against the text (recomputed with the same
// tokenizer), the FTS postings of every term, counters, duplicates and
// vectors. It reads everything, so it takes seconds on a large index; the
// crash-safety tests and `tidings index --verify` use it.
func (ix *Index) Verify(ctx context.Context) error {
	var problems []string
	bad := func(format string, args ...any) {
		if len(problems) < 50 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	tx, err := ix.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer tx.Rollback()
	// A fresh load of the persisted state.
	saved := ix.mem
	fresh := &Index{opts: ix.opts, mem: newMemState(), log: ix.log}
	fresh.mem.gen = -1
	if err := fresh.loadLocked(ctx, tx, true); err != nil {
		return fmt.Errorf("verify: load: %w", err)
	}
	m := fresh.mem
	rows, err := tx.QueryContext(ctx, "SELECT id, time, conv, sender, from_me, searchable, text, search_extra FROM messages ORDER BY id")
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	recsFrom, err := getMetaInt(ctx, tx, "docterms_from")
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	df := map[string]int32{}
	var docs, total int64
	seen := map[int64]bool{}
	counts := map[uint32]int64{}
	for rows.Next() {
		var id, t, conv, sender int64
		var fromMe, searchable bool
		var text string
		var extra sql.NullString
		if err := rows.Scan(&id, &t, &conv, &sender, &fromMe, &searchable, &text, &extra); err != nil {
			rows.Close()
			return fmt.Errorf("verify: %w", err)
		}
		seen[id] = true
		counts[uint32(conv)]++
		if !m.live(id) {
			bad("message %d missing from docmeta", id)
			continue
		}
		var fl uint8 = fLive
		if searchable {
			fl |= fSearchable
		}
		if fromMe {
			fl |= fFromMe
		}
		if m.times[id] != t || m.convs[id] != uint32(conv) || m.senders[id] != uint32(sender) || m.flags[id]&^fMulti != fl {
			bad("docmeta of %d: time %d conv %d sender %d flags %b; row: %d %d %d %b", id, m.times[id], m.convs[id], m.senders[id], m.flags[id], t, conv, sender, fl)
		}
		// Term records (termrec.go) equal a recount; only messages stored
		// before they existed (ids below docterms_from) may lack one.
		rec := m.termRec(id)
		var want []byte
		if searchable {
			_, _, want = termRecord(text, extra.String)
		}
		if !bytes.Equal(rec, want) && (len(rec) > 0 || id >= recsFrom) {
			bad("term record of %d: %x, recounted %x", id, rec, want)
		}
		if searchable {
			ts, n := distinctTerms(text, extra.String)
			for _, x := range ts {
				df[x]++
			}
			docs++
			total += int64(n)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	for id := range m.flags {
		if m.flags[id]&fLive != 0 && !seen[int64(id)] {
			bad("docmeta has %d, the messages table does not", id)
		}
	}
	for c, ch := range m.trecs {
		for i := range chunkSize {
			if id := int64(c*chunkSize + i); len(ch.get(i)) > 0 && !seen[id] {
				bad("docterms has a record for %d, the messages table does not", id)
			}
		}
	}
	if docs != m.docs || total != m.totalLen {
		bad("meta docs/total_len = %d/%d, recomputed %d/%d", m.docs, m.totalLen, docs, total)
	}
	if len(df) != len(m.voc.df) {
		bad("terms table has %d terms, the text has %d", len(m.voc.df), len(df))
	}
	for t, n := range df {
		if m.voc.df[t] != n {
			bad("df(%q) = %d, recomputed %d", t, m.voc.df[t], n)
		}
	}
	// FTS postings agree with the document frequencies.
	st, err := tx.PrepareContext(ctx, "SELECT count(*) FROM fts WHERE fts MATCH ?")
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	defer st.Close()
	for t, n := range df {
		var c int32
		if err := st.QueryRowContext(ctx, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`).Scan(&c); err != nil {
			return fmt.Errorf("verify fts %q: %w", t, err)
		}
		if c != n {
			bad("fts has %d postings for %q, want %d", c, t, n)
		}
	}
	// Duplicates.
	var dups int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM (SELECT 1 FROM messages GROUP BY source, guid HAVING count(*) > 1)").Scan(&dups); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if dups > 0 {
		bad("%d duplicated message guids", dups)
	}
	// Conversation counters.
	err = eachRow(tx.QueryContext(ctx, "SELECT conv, count(*) FROM message_chats GROUP BY conv"))(func(r *sql.Rows) error {
		var c, n int64
		if err := r.Scan(&c, &n); err != nil {
			return err
		}
		counts[uint32(c)] += n
		return nil
	})
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	for id, ci := range m.convByID {
		if ci.msgCount != counts[id] {
			bad("conversation %s: msg_count %d, counted %d", ci.c.ID, ci.msgCount, counts[id])
		}
	}
	// Vectors belong to searchable messages and match the codes.
	if v := m.vec; v != nil && v.dim > 0 {
		n := 0
		err = eachRow(tx.QueryContext(ctx, "SELECT id FROM vectors"))(func(r *sql.Rows) error {
			var id int64
			if err := r.Scan(&id); err != nil {
				return err
			}
			n++
			if !m.live(id) || m.flags[id]&fSearchable == 0 {
				bad("vector %d has no searchable message", id)
			}
			if !v.hasVec(id) {
				bad("vector %d missing from the codes", id)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		if n != v.count {
			bad("%d vectors stored, codes say %d", n, v.count)
		}
	}
	_ = saved
	if len(problems) > 0 {
		return errors.New("index verification failed:\n  " + strings.Join(problems, "\n  "))
	}
	return nil
}
