package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Purge removes every stored conversation whose id (model.Conversation.ID,
// e.g. a chat.db guid) is conversationID, with all derived data: messages
// (also those chat.db joins to another conversation too: they are part of
// the purged thread),
// full-text and vector entries, reactions, attachments, participants,
// handles no other thread uses, and dossier/triage caches. A fitted
// embedder's state learned from the corpus is forgotten too (see
// purgeLocked). The FTS index is then merged and freed pages are zeroed
// (secure_delete), so no trace of the text is left in the database file.
// It returns the number of conversations removed. Whether the thread comes back on the next sync is
// the policy's decision: a thread the Policy blocks never does.
func (ix *Index) Purge(ctx context.Context, conversationID string) (int, error) {
	if ix.wdb == nil {
		return 0, errors.New("purge: index opened read-only")
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	var ids []uint32
	ix.mem.mu.RLock()
	for id, ci := range ix.mem.convByID {
		if ci.c.ID == conversationID {
			ids = append(ids, id)
		}
	}
	ix.mem.mu.RUnlock()
	for _, id := range ids {
		if err := ix.purgeLocked(ctx, id); err != nil {
			return 0, err
		}
	}
	if err := ix.finishPurgeLocked(ctx); err != nil {
		return len(ids), err
	}
	return len(ids), nil
}

// PolicyPinner is implemented by a Policy that is loaded from files and so
// can fail to load or change between two questions (service.Gate). The
// index then never decides against a policy it could not load: Sync and
// ApplyPolicy pin one loaded policy for all their decisions, and refuse —
// changing nothing — when it cannot be loaded. A policy that reads nothing
// would otherwise look like one that blocks everything, and purge the
// index.
type PolicyPinner interface {
	Policy
	// PinPolicy loads the policy and pins it: AllowConversation answers
	// from that load until release is called. It returns the policy's
	// fingerprint (it changes exactly when the policy's decisions may), or
	// an error, pinning nothing, when the policy cannot be loaded.
	PinPolicy() (fingerprint string, release func(), err error)
	// PolicyFingerprint returns the current policy's fingerprint, or an
	// error when it cannot be loaded. It is cheap (the watcher polls it).
	PolicyFingerprint() (string, error)
}

// ErrPolicyUnavailable is wrapped by Sync and ApplyPolicy errors when the
// read policy cannot be loaded: nothing was synced or purged.
var ErrPolicyUnavailable = errors.New("read policy unavailable")

// policyFPKey is the meta key of the fingerprint of the policy the stored
// rows were last checked against.
const policyFPKey = "policy_fp"

// pinPolicy pins the policy for one write operation (see PolicyPinner).
// For a Policy that is not a PolicyPinner it pins nothing and returns "".
func (ix *Index) pinPolicy() (fingerprint string, release func(), err error) {
	pp, ok := ix.opts.Policy.(PolicyPinner)
	if !ok {
		return "", func() {}, nil
	}
	fp, release, err := pp.PinPolicy()
	if err != nil {
		return "", nil, fmt.Errorf("%w (%v): nothing was synced or purged; the index is unchanged until the policy loads again", ErrPolicyUnavailable, err)
	}
	return fp, release, nil
}

// policyFingerprint returns the current policy's fingerprint, "" when the
// policy is not a PolicyPinner or cannot be loaded.
func (ix *Index) policyFingerprint() string {
	pp, ok := ix.opts.Policy.(PolicyPinner)
	if !ok {
		return ""
	}
	fp, err := pp.PolicyFingerprint()
	if err != nil {
		return ""
	}
	return fp
}

// AppliedPolicy returns the fingerprint of the policy the stored rows were
// last checked against ("" before the first check). A caller whose policy
// has another fingerprint knows a purge is due (ApplyPolicy).
func (ix *Index) AppliedPolicy(ctx context.Context) (string, error) {
	return getMetaString(ctx, ix.rdb, policyFPKey)
}

// ApplyPolicy asks the Policy about every stored conversation and purges
// the ones it now blocks (see Purge). The read-policy package calls it after
// the user blocks a thread. When the policy's fingerprint changed since the
// rows were last checked, every source's watermark is also reset, so the
// next Sync reads the sources again in full and imports threads the policy
// now allows (rows already stored are skipped by their content hash). With
// a policy that cannot be loaded it fails with ErrPolicyUnavailable and
// changes nothing.
func (ix *Index) ApplyPolicy(ctx context.Context) (int, error) {
	if ix.wdb == nil {
		return 0, errors.New("apply policy: index opened read-only")
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	fp, release, err := ix.pinPolicy()
	if err != nil {
		return 0, fmt.Errorf("apply policy: %w", err)
	}
	defer release()
	n, err := ix.purgeBlockedLocked(ctx)
	if err != nil {
		return n, err
	}
	// Synced mail follows the same policy (mail.go): its blocked rows go
	// too, and the scrub covers them.
	m, err := ix.mailPurgeBlockedLocked(ctx)
	if err != nil {
		return n, err
	}
	if m > 0 {
		if err := ix.finishPurgeLocked(ctx); err != nil {
			return n, err
		}
	}
	return n, ix.notePolicyLocked(ctx, fp)
}

// purgeBlockedLocked purges every stored conversation the (pinned) policy
// blocks. Callers hold writeMu.
func (ix *Index) purgeBlockedLocked(ctx context.Context) (int, error) {
	var ids []uint32
	ix.mem.mu.RLock()
	for id, ci := range ix.mem.convByID {
		if !ix.allow(ci.c) {
			ids = append(ids, id)
		}
	}
	ix.mem.mu.RUnlock()
	for _, id := range ids {
		if err := ix.purgeLocked(ctx, id); err != nil {
			return 0, err
		}
	}
	if err := ix.finishPurgeLocked(ctx); err != nil {
		return len(ids), err
	}
	return len(ids), nil
}

// notePolicyLocked records fp as the policy the stored rows were checked
// against. When it differs from the one recorded, every source's watermark
// is reset in the same transaction: a thread the new policy allows may
// have been skipped or purged before, and its messages lie behind the
// watermark. Callers hold writeMu and have purged what fp blocks.
func (ix *Index) notePolicyLocked(ctx context.Context, fp string) error {
	if fp == "" {
		return nil
	}
	stored, err := getMetaString(ctx, ix.wdb, policyFPKey)
	if err != nil || stored == fp {
		return err
	}
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record read policy: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, "UPDATE sources SET watermark = NULL WHERE watermark IS NOT NULL")
	if err != nil {
		return fmt.Errorf("record read policy: %w", err)
	}
	if err := setMeta(ctx, tx, policyFPKey, fp); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record read policy: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 && stored != "" {
		ix.log.Info("read policy changed; sources will be read again in full so threads it now allows are imported", "sources", n)
	}
	return nil
}

// purgePendingKey is the meta key set, in the same transaction, by every
// purge that removed messages and cleared once the index was scrubbed, so
// a scrub interrupted by a crash (or a purge during a sync) is finished by
// the next write.
const purgePendingKey = "purge_pending"

// fitEpochKey is the meta key counting purges that invalidated a fitted
// embedder's state: a fit that read the corpus before such a purge is
// discarded (ensureFitted).
const fitEpochKey = "fit_epoch"

// finishPurgeLocked scrubs the index when a purge left it pending, and
// wakes the background embedder (a purge may have discarded the fitted
// state and the vectors made with it). Callers hold writeMu.
func (ix *Index) finishPurgeLocked(ctx context.Context) error {
	pending, err := getMetaInt(ctx, ix.wdb, purgePendingKey)
	if err != nil || pending == 0 {
		return err
	}
	if err := ix.scrub(ctx); err != nil {
		return err
	}
	if err := setMeta(ctx, ix.wdb, purgePendingKey, 0); err != nil {
		return err
	}
	ix.wakeEmbedder()
	return nil
}

// forgetFitTx discards, inside a purge's transaction, everything a Fitter
// learned from the corpus: every stored fitted state (for any embedder
// configuration) and the vectors' claim to be current, so no vector made
// with the old state is used; the next embedding pass fits again on what
// is left and re-embeds. Refitting rather than scrubbing words out of the
// state: the state's ID is a hash of it, so any change re-embeds every
// message anyway, and a refit also drops what the purged messages taught
// the words that remain (co-occurrence context, frequency weights), which
// a scrub would keep. The fit epoch is advanced even when no state is
// stored yet, so a fit running meanwhile is not stored (ensureFitted). It
// reports whether there was a state to forget.
func (ix *Index) forgetFitTx(ctx context.Context, tx *sql.Tx) (bool, error) {
	if _, ok := ix.opts.Embedder.(Fitter); !ok {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, 1)
ON CONFLICT(key) DO UPDATE SET value = value + 1`, fitEpochKey); err != nil {
		return false, fmt.Errorf("purge embedder state: %w", err)
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM embedder_state")
	if err != nil {
		return false, fmt.Errorf("purge embedder state: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	for k, v := range map[string]any{"vec_embedder": "", "vec_ready": 0} {
		if err := setMeta(ctx, tx, k, v); err != nil {
			return false, err
		}
	}
	return true, nil
}

// forgetFitMemLocked is forgetFitTx's counterpart in memory, after the
// commit: the embedder returns to its unfitted state and the vectors in
// memory stop counting as current. Callers hold mem.mu.
func (ix *Index) forgetFitMemLocked() {
	if f, ok := ix.opts.Embedder.(Fitter); ok {
		if err := f.UnmarshalBinary(nil); err != nil {
			ix.log.Warn("reset fitted embedder", "err", err)
		}
	}
	if v := ix.mem.vec; v != nil {
		v.embID, v.ready = "", false
	}
}

// scrub merges the FTS index (contentless deletes leave postings in old
// segments until a merge) and checkpoints the WAL, with secure_delete on so
// freed pages are overwritten with zeros.
func (ix *Index) scrub(ctx context.Context) error {
	conn, err := ix.wdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("scrub index: %w", err)
	}
	defer conn.Close()
	// On for every write (openDB); never switched off here: the write
	// pool's one connection would keep it off for later syncs.
	if _, err := conn.ExecContext(ctx, "PRAGMA secure_delete = ON"); err != nil {
		return fmt.Errorf("scrub index: %w", err)
	}
	for _, q := range []string{
		"INSERT INTO fts(fts) VALUES('optimize')",
		"INSERT INTO mail_fts(mail_fts) VALUES('optimize')",
		"PRAGMA wal_checkpoint(TRUNCATE)",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("scrub index (%s): %w", q, err)
		}
	}
	return nil
}

// purgeLocked removes one conversation in one transaction. Callers hold
// writeMu.
func (ix *Index) purgeLocked(ctx context.Context, conv uint32) error {
	conn, err := ix.wdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	defer conn.Close()
	// On for every write (openDB); never switched off here: the write
	// pool's one connection would keep it off for later syncs.
	if _, err := conn.ExecContext(ctx, "PRAGMA secure_delete = ON"); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	defer tx.Rollback() // a no-op once committed
	if err := ix.refreshTx(ctx, tx); err != nil {
		return err
	}
	d := &delta{df: map[string]int32{}, conv: map[uint32]*convDelta{}}
	st := newTxStmts(tx)
	defer st.close()
	var source int64
	if err := tx.QueryRowContext(ctx, "SELECT source FROM conversations WHERE id = ?", conv).Scan(&source); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return fmt.Errorf("purge: %w", err)
	}
	// Every message in this conversation goes, also one chat.db joins to
	// another conversation too: it is part of the blocked thread, and
	// showing it elsewhere would show the thread's content.
	rows, err := tx.QueryContext(ctx, `SELECT id, guid, hash, conv, searchable, text, search_extra, time FROM messages
WHERE conv = ? OR id IN (SELECT msg FROM message_chats WHERE conv = ?)`, conv, conv)
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	var msgs []storedMsg
	for rows.Next() {
		var s storedMsg
		var c int64
		if err := rows.Scan(&s.id, &s.guid, &s.hash, &c, &s.searchable, &s.text, &s.extra, &s.time); err != nil {
			rows.Close()
			return fmt.Errorf("purge: %w", err)
		}
		s.conv = uint32(c)
		msgs = append(msgs, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	for i := range msgs {
		s := &msgs[i]
		if err := ix.deleteMessageRow(ctx, st, s, d); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM reactions WHERE source = ? AND target = ?", source, s.guid); err != nil {
			return fmt.Errorf("purge: %w", err)
		}
	}
	var handles []int64
	err = eachRow(tx.QueryContext(ctx, "SELECT handle FROM participants WHERE conv = ?", conv))(func(r *sql.Rows) error {
		var h int64
		if err := r.Scan(&h); err != nil {
			return err
		}
		handles = append(handles, h)
		return nil
	})
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	for _, t := range perConversationTables {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t+" WHERE conv = ?", conv); err != nil {
			return fmt.Errorf("purge %s: %w", t, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM conversations WHERE id = ?", conv); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	// Handles nobody else uses go too (senders are checked in memory: the
	// docmeta columns have every message's sender).
	var goneHandles []uint32
	cleared := map[int64]bool{}
	for _, id := range d.clear {
		cleared[id] = true
	}
	ix.mem.mu.RLock()
	used := map[uint32]bool{}
	for id := range ix.mem.senders {
		if ix.mem.flags[id]&fLive != 0 && !cleared[int64(id)] {
			used[ix.mem.senders[id]] = true
		}
	}
	ix.mem.mu.RUnlock()
	for _, h := range handles {
		if used[uint32(h)] {
			continue
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM handles WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM participants WHERE handle = ?1)`, h)
		if err != nil {
			return fmt.Errorf("purge handles: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			goneHandles = append(goneHandles, uint32(h))
		}
	}
	if err := writeTerms(ctx, tx, d.df); err != nil {
		return err
	}
	for c, cd := range d.conv {
		if c == conv {
			continue
		}
		if _, err := tx.ExecContext(ctx, "UPDATE conversations SET msg_count = msg_count + ? WHERE id = ?", cd.count, c); err != nil {
			return fmt.Errorf("purge: %w", err)
		}
	}

	mem := ix.mem
	mem.mu.Lock()
	defer mem.mu.Unlock()
	for _, id := range d.clear {
		mem.clearDoc(id)
	}
	for t, n := range d.df {
		mem.voc.add(t, n)
	}
	mem.docs += d.docs
	mem.totalLen += d.totalLen
	ix.vecDropLocked(d.vecDrop)
	gen := mem.gen + 1
	if err := mem.persistDocmeta(ctx, tx, gen); err != nil {
		return ix.failMem(err)
	}
	if err := ix.vecPersistLocked(ctx, tx, gen); err != nil {
		return ix.failMem(err)
	}
	for k, v := range map[string]any{"gen": gen, "msg_gen": gen, "docs": mem.docs, "total_len": mem.totalLen, purgePendingKey: 1} {
		if err := setMeta(ctx, tx, k, v); err != nil {
			return ix.failMem(err)
		}
	}
	// Messages left the corpus: what a Fitter learned from them goes too.
	forgot := false
	if len(d.clear) > 0 {
		if forgot, err = ix.forgetFitTx(ctx, tx); err != nil {
			return ix.failMem(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return ix.failMem(fmt.Errorf("purge: %w", err))
	}
	mem.gen = gen
	if forgot {
		ix.forgetFitMemLocked()
	}
	for t, n := range d.df {
		if n < 0 && mem.voc.df[t] == 0 {
			// A term left the vocabulary: rebuild the sorted views (they
			// would still hold it) at the next query.
			mem.voc.built = false
			break
		}
	}
	delete(mem.convByID, conv)
	for _, h := range goneHandles {
		delete(mem.handleByS, mem.handleStr[h])
		delete(mem.handleStr, h)
		delete(mem.handleKey, h)
	}
	for c, cd := range d.conv {
		if ci := mem.convByID[c]; ci != nil {
			ci.msgCount += cd.count
			ci.stale = true
		}
	}
	mem.labels = nil
	return nil
}
