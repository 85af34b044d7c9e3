package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/fold"
	"github.com/tidings-mcp/tidings/internal/model"
)

// convDelta accumulates changes to a conversation's counters.
type convDelta struct {
	count     int64
	last      int64
	recompute bool
}

// docSet is a docmeta record to apply after commit.
type docSet struct {
	id     int64
	time   int64
	conv   uint32
	sender uint32
	flags  uint8
	extra  []uint32
	trec   []byte
}

// delta is what one batch changes besides its SQL rows; it is applied to
// memory and to the counters when the batch commits.
type delta struct {
	df       map[string]int32
	docs     int64
	totalLen int64
	conv     map[uint32]*convDelta
	set      []docSet
	clear    []int64
	vecDrop  []int64
	firstNew int64
	lastNew  int64
	next     int64
	ins      insertBuffer
}

func (d *delta) convAdd(c uint32, n int64, t int64) {
	cd := d.conv[c]
	if cd == nil {
		cd = &convDelta{}
		d.conv[c] = cd
	}
	cd.count += n
	if n > 0 && t > cd.last {
		cd.last = t
	}
	if n < 0 {
		cd.recompute = true
	}
}

func millis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// commitBatch writes one batch in one transaction together with the
// watermark that covers it.
func (ix *Index) commitBatch(ctx context.Context, w *batchWriter, b batch) (err error) {
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin batch: %w", err)
	}
	defer tx.Rollback() // a no-op once committed
	if err := ix.refreshTx(ctx, tx); err != nil {
		return err
	}
	next, err := getMetaInt(ctx, tx, "next_id")
	if err != nil {
		return err
	}
	ix.mem.mu.RLock()
	if m := ix.mem.maxID + 1; m > next {
		next = m
	}
	ix.mem.mu.RUnlock()
	if next < 1 {
		next = 1
	}
	d := &delta{df: map[string]int32{}, conv: map[uint32]*convDelta{}, next: next}
	st := ix.newTxStmts(tx)
	defer st.close()
	for i := range b.ops {
		o := &b.ops[i]
		var err error
		switch o.kind {
		case opUpsert:
			err = ix.applyUpsert(ctx, st, w, o, d)
		case opDelete:
			err = ix.applyDelete(ctx, st, w, o.guid, d)
		case opReaction:
			err = ix.applyReaction(ctx, st, w, o)
		}
		if err != nil {
			return err
		}
	}
	if err := d.ins.flush(ctx, st); err != nil {
		return err
	}
	if d.firstNew > 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO fts(rowid, text)
SELECT id, CASE WHEN search_extra IS NULL THEN text ELSE text || char(10) || search_extra END
FROM messages WHERE id BETWEEN ? AND ? AND searchable = 1`, d.firstNew, d.lastNew); err != nil {
			return fmt.Errorf("index new messages: %w", err)
		}
	}
	if err := writeTerms(ctx, tx, d.df); err != nil {
		return err
	}
	for c, cd := range d.conv {
		if cd.count != 0 || cd.last != 0 {
			if _, err := tx.ExecContext(ctx, "UPDATE conversations SET msg_count = msg_count + ?, last_time = max(last_time, ?) WHERE id = ?", cd.count, cd.last, c); err != nil {
				return fmt.Errorf("update conversation counters: %w", err)
			}
		}
		if cd.recompute {
			if _, err := tx.ExecContext(ctx, `UPDATE conversations SET last_time = coalesce((SELECT max(t) FROM (
	SELECT max(time) AS t FROM messages WHERE conv = ?1
	UNION ALL SELECT max(m.time) FROM message_chats c JOIN messages m ON m.id = c.msg WHERE c.conv = ?1)), 0) WHERE id = ?1`, c); err != nil {
				return fmt.Errorf("update conversation counters: %w", err)
			}
		}
	}

	// Memory and the state that must match it commit together.
	mem := ix.mem
	mem.mu.Lock()
	defer mem.mu.Unlock()
	for _, s := range d.set {
		mem.setDoc(s.id, s.time, s.conv, s.sender, s.flags)
		mem.tupd[s.id] = s.trec
		if len(s.extra) > 0 {
			mem.extra[uint32(s.id)] = s.extra
		} else {
			delete(mem.extra, uint32(s.id))
		}
	}
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
	for k, v := range map[string]any{"gen": gen, "msg_gen": gen, "next_id": d.next, "docs": mem.docs, "total_len": mem.totalLen} {
		if err := setMeta(ctx, tx, k, v); err != nil {
			return ix.failMem(err)
		}
	}
	if b.hasWM {
		if _, err := tx.ExecContext(ctx, "UPDATE sources SET watermark = ? WHERE id = ?", b.watermark, w.sid); err != nil {
			return ix.failMem(fmt.Errorf("store watermark: %w", err))
		}
	}
	if err := tx.Commit(); err != nil {
		return ix.failMem(fmt.Errorf("commit batch: %w", err))
	}
	mem.gen = gen
	for c, cd := range d.conv {
		if ci := mem.convByID[c]; ci != nil {
			ci.msgCount += cd.count
			if cd.last > ci.lastTime {
				ci.lastTime = cd.last
			}
			ci.stale = ci.stale || cd.recompute
		}
	}
	w.seen += len(b.ops)
	w.prog.add(len(b.ops))
	return nil
}

// failMem marks memory as untrustworthy after a failed commit (it already
// holds the batch's changes); the next refresh reloads it from the database.
// Callers hold mem.mu.
func (ix *Index) failMem(err error) error {
	ix.mem.gen = -1
	return err
}

// writeTerms applies document-frequency changes to the terms table.
func writeTerms(ctx context.Context, tx *sql.Tx, df map[string]int32) error {
	if len(df) == 0 {
		return nil
	}
	up, err := tx.PrepareContext(ctx, "INSERT INTO terms(term, df) VALUES(?, ?) ON CONFLICT(term) DO UPDATE SET df = df + excluded.df")
	if err != nil {
		return fmt.Errorf("write terms: %w", err)
	}
	defer up.Close()
	var gone []string
	for t, n := range df {
		if n == 0 {
			continue
		}
		if _, err := up.ExecContext(ctx, t, n); err != nil {
			return fmt.Errorf("write terms: %w", err)
		}
		if n < 0 {
			gone = append(gone, t)
		}
	}
	for _, t := range gone {
		if _, err := tx.ExecContext(ctx, "DELETE FROM terms WHERE term = ? AND df <= 0", t); err != nil {
			return fmt.Errorf("write terms: %w", err)
		}
	}
	return nil
}

// storedMsg is what an update or delete needs of the stored row.
type storedMsg struct {
	id         int64
	guid       string
	hash       int64
	conv       uint32
	searchable bool
	text       string
	extra      sql.NullString
	time       int64
}

// lookupMessage finds a stored message by guid.
func (ix *Index) lookupMessage(ctx context.Context, tx queryer, w *batchWriter, guid string) (*storedMsg, error) {
	var row *sql.Row
	const cols = "SELECT id, guid, hash, conv, searchable, text, search_extra, time FROM messages "
	if w.bulk {
		id, ok := w.bulkIDs.get(guidKey(w.sid, guid))
		if !ok {
			return nil, nil
		}
		row = tx.QueryRowContext(ctx, cols+"WHERE id = ?", id)
	} else {
		row = tx.QueryRowContext(ctx, cols+"WHERE source = ? AND guid = ?", w.sid, guid)
	}
	var s storedMsg
	var conv int64
	err := row.Scan(&s.id, &s.guid, &s.hash, &conv, &s.searchable, &s.text, &s.extra, &s.time)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look up message %s: %w", guid, err)
	}
	if s.guid != guid { // a 64-bit key collision in the bulk map
		return nil, nil
	}
	s.conv = uint32(conv)
	return &s, nil
}

func (ix *Index) messageConvs(ctx context.Context, tx queryer, id int64, primary uint32) ([]uint32, error) {
	out := []uint32{primary}
	rows, err := tx.QueryContext(ctx, "SELECT conv FROM message_chats WHERE msg = ?", id)
	if err != nil {
		return nil, fmt.Errorf("read message conversations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c int64
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, uint32(c))
	}
	return out, rows.Err()
}

const messageCols = `source, guid, row_id, conv, sender, from_me, kind, detail, service, time, time_read,
time_delivered, time_edited, time_unsent, text, search_extra, text_source, subject, flags, error, reply_to,
reply_to_part, app, effect, extra, searchable, hash`

// Message flag bits in the messages.flags column.
const (
	mfSent = 1 << iota
	mfDelivered
	mfRead
	mfEdited
	mfUnsent
	mfRecentlyDeleted
)

func messageFlags(m *model.Message) int64 {
	var f int64
	set := func(bit int64, on bool) {
		if on {
			f |= bit
		}
	}
	set(mfSent, m.IsSent)
	set(mfDelivered, m.IsDelivered)
	set(mfRead, m.IsRead)
	set(mfEdited, m.Edited)
	set(mfUnsent, m.Unsent)
	set(mfRecentlyDeleted, m.RecentlyDeleted)
	return f
}

// messageColCount is the number of columns of an inserted message row.
const messageColCount = 28

func (ix *Index) applyUpsert(ctx context.Context, tx queryer, w *batchWriter, o *op, d *delta) error {
	old, err := ix.lookupMessage(ctx, tx, w, o.guid)
	if err != nil {
		return err
	}
	if old != nil && uint64(old.hash) == o.hash {
		w.rep.Unchanged++
		return nil
	}
	m := &o.m
	sender, err := ix.handleID(ctx, tx, o.sender)
	if err != nil {
		return err
	}
	var replyPart any
	if m.ReplyTo != "" {
		replyPart = m.ReplyToPart
	}
	var extra any
	if o.extra != nil {
		extra = string(o.extra)
	}
	args := []any{w.sid, o.guid, m.RowID, o.convs[0], sender, m.FromMe, string(m.Kind), nullStr(m.Detail), nullStr(m.Service),
		m.Time.UnixMilli(), millis(m.TimeRead), millis(m.TimeDelivered), millis(m.TimeEdited), millis(m.TimeUnsent),
		o.text, nullStr(o.extraText), nullStr(m.TextSource), nullStr(fold.Sanitize(m.Subject)), messageFlags(m), m.Error,
		nullStr(m.ReplyTo), replyPart, nullStr(m.App), nullStr(m.Effect), extra, o.searchable, int64(o.hash)}
	t := m.Time.UnixMilli()
	var id int64
	if old == nil {
		id = d.next
		d.next++
		if err := d.ins.add(ctx, tx, id, args); err != nil {
			return err
		}
		if d.firstNew == 0 {
			d.firstNew = id
		}
		d.lastNew = id
		if o.searchable {
			for _, term := range o.terms {
				d.df[term]++
			}
			d.docs++
			d.totalLen += int64(o.length)
		}
		for _, c := range o.convs {
			d.convAdd(c, 1, t)
		}
		if w.bulk {
			w.bulkIDs.put(guidKey(w.sid, o.guid), id)
		}
		w.rep.Added++
	} else {
		id = old.id
		if _, err := tx.ExecContext(ctx, "UPDATE messages SET ("+messageCols+") = (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) WHERE id = ?",
			append(args, id)...); err != nil {
			return fmt.Errorf("update message %s: %w", o.guid, err)
		}
		oldText := indexText(old.text, old.extra.String)
		newText := indexText(o.text, o.extraText)
		if old.searchable != o.searchable || oldText != newText {
			if old.searchable {
				if _, err := tx.ExecContext(ctx, ftsDelete, id, oldText); err != nil {
					return fmt.Errorf("unindex message %s: %w", o.guid, err)
				}
				oldTerms, n := distinctTerms(old.text, old.extra.String)
				for _, term := range oldTerms {
					d.df[term]--
				}
				d.docs--
				d.totalLen -= int64(n)
			}
			if o.searchable {
				if _, err := tx.ExecContext(ctx, "INSERT INTO fts(rowid, text) VALUES(?, ?)", id, newText); err != nil {
					return fmt.Errorf("index message %s: %w", o.guid, err)
				}
				for _, term := range o.terms {
					d.df[term]++
				}
				d.docs++
				d.totalLen += int64(o.length)
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM vectors WHERE id = ?", id); err != nil {
				return fmt.Errorf("drop stale vector: %w", err)
			}
			d.vecDrop = append(d.vecDrop, id)
			if o.searchable {
				if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO embed_queue(id) VALUES(?)", id); err != nil {
					return fmt.Errorf("queue re-embedding: %w", err)
				}
			}
		}
		oldConvs, err := ix.messageConvs(ctx, tx, id, old.conv)
		if err != nil {
			return err
		}
		if !slices.Equal(oldConvs, o.convs) || old.time != t {
			for _, c := range oldConvs {
				d.convAdd(c, -1, 0)
			}
			for _, c := range o.convs {
				d.convAdd(c, 1, t)
			}
		}
		for _, q := range []string{"DELETE FROM attachments WHERE msg = ?", "DELETE FROM message_chats WHERE msg = ?"} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return fmt.Errorf("update message %s: %w", o.guid, err)
			}
		}
		w.rep.Updated++
	}
	for i, a := range m.Attachments {
		if _, err := tx.ExecContext(ctx, `INSERT INTO attachments(msg, idx, conv, guid, row_id, filename, mime, uti, size, sticker, outgoing, path)
VALUES(?,?,?,?,?,?,?,?,?,?,?,?)`, id, i, o.convs[0], fold.Sanitize(a.ID), a.RowID, fold.Sanitize(a.Filename), a.MimeType, a.UTI, a.Size, a.Sticker, a.Outgoing, a.Path); err != nil {
			return fmt.Errorf("store attachment of %s: %w", o.guid, err)
		}
	}
	for _, c := range o.convs[1:] {
		if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO message_chats(conv, msg) VALUES(?, ?)", c, id); err != nil {
			return fmt.Errorf("store message conversations: %w", err)
		}
	}
	var fl uint8 = fLive
	if o.searchable {
		fl |= fSearchable
	}
	if m.FromMe {
		fl |= fFromMe
	}
	var ex []uint32
	if len(o.convs) > 1 {
		fl |= fMulti
		ex = slices.Clone(o.convs[1:])
	}
	var trec []byte
	if o.searchable {
		trec = o.trec
	}
	d.set = append(d.set, docSet{id: id, time: t, conv: o.convs[0], sender: sender, flags: fl, extra: ex, trec: trec})
	return nil
}

func (ix *Index) applyDelete(ctx context.Context, tx queryer, w *batchWriter, guid string, d *delta) error {
	// A deleted reaction message takes its reaction with it.
	if _, err := tx.ExecContext(ctx, "DELETE FROM reactions WHERE source = ? AND guid = ?", w.sid, guid); err != nil {
		return fmt.Errorf("delete reaction %s: %w", guid, err)
	}
	old, err := ix.lookupMessage(ctx, tx, w, guid)
	if err != nil || old == nil {
		return err
	}
	if err := ix.deleteMessageRow(ctx, tx, old, d); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM reactions WHERE source = ? AND target = ?", w.sid, guid); err != nil {
		return fmt.Errorf("delete reactions of %s: %w", guid, err)
	}
	if w.bulk {
		w.bulkIDs.del(guidKey(w.sid, guid))
	}
	w.rep.Deleted++
	return nil
}

// deleteMessageRow removes a stored message and everything derived from it
// (FTS row, vector, attachments, memberships), recording the counter and
// memory changes in d.
func (ix *Index) deleteMessageRow(ctx context.Context, tx queryer, old *storedMsg, d *delta) error {
	convs, err := ix.messageConvs(ctx, tx, old.id, old.conv)
	if err != nil {
		return err
	}
	for _, q := range []string{
		"DELETE FROM messages WHERE id = ?",
		"DELETE FROM attachments WHERE msg = ?",
		"DELETE FROM message_chats WHERE msg = ?",
		"DELETE FROM vectors WHERE id = ?",
		"DELETE FROM embed_queue WHERE id = ?",
	} {
		if _, err := tx.ExecContext(ctx, q, old.id); err != nil {
			return fmt.Errorf("delete message %s: %w", old.guid, err)
		}
	}
	if old.searchable {
		if _, err := tx.ExecContext(ctx, ftsDelete, old.id, indexText(old.text, old.extra.String)); err != nil {
			return fmt.Errorf("unindex message %s: %w", old.guid, err)
		}
		terms, n := distinctTerms(old.text, old.extra.String)
		for _, t := range terms {
			d.df[t]--
		}
		d.docs--
		d.totalLen -= int64(n)
	}
	for _, c := range convs {
		d.convAdd(c, -1, 0)
	}
	d.clear = append(d.clear, old.id)
	d.vecDrop = append(d.vecDrop, old.id)
	return nil
}

func (ix *Index) applyReaction(ctx context.Context, tx queryer, w *batchWriter, o *op) error {
	r := o.m.Reaction
	target := fold.Sanitize(r.Target)
	t := o.m.Time.UnixMilli()
	sender := o.sender
	if o.m.FromMe {
		sender = ""
	}
	w.rep.Reactions++
	if r.Removed {
		q := "DELETE FROM reactions WHERE source = ? AND target = ? AND part = ? AND sender = ? AND slot = 'tapback' AND type = ? AND time <= ?"
		args := []any{w.sid, target, r.TargetPart, sender, string(r.Type), t}
		if r.Type == model.ReactSticker {
			q = "DELETE FROM reactions WHERE source = ? AND target = ? AND part = ? AND sender = ? AND slot LIKE 'sticker:%' AND time <= ?"
			args = []any{w.sid, target, r.TargetPart, sender, t}
		} else if r.Type == model.ReactEmoji && r.Emoji != "" {
			q += " AND emoji = ?"
			args = append(args, r.Emoji)
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("remove reaction %s: %w", o.guid, err)
		}
		return nil
	}
	slot := "tapback"
	if r.Type == model.ReactSticker {
		slot = "sticker:" + o.guid
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO reactions(source, target, part, sender, slot, from_me, type, emoji, guid, conv, time)
VALUES(?,?,?,?,?,?,?,?,?,?,?)
ON CONFLICT(source, target, part, sender, slot) DO UPDATE SET from_me = excluded.from_me, type = excluded.type,
	emoji = excluded.emoji, guid = excluded.guid, conv = excluded.conv, time = excluded.time
WHERE excluded.time >= reactions.time`,
		w.sid, target, r.TargetPart, sender, slot, o.m.FromMe, string(r.Type), fold.Sanitize(r.Emoji), o.guid, o.convs[0], t); err != nil {
		return fmt.Errorf("store reaction %s: %w", o.guid, err)
	}
	return nil
}

// handleID returns the id of a handle, creating it. "" (the owner) is 0.
func (ix *Index) handleID(ctx context.Context, q queryer, h string) (uint32, error) {
	if h == "" {
		return 0, nil
	}
	ix.mem.mu.RLock()
	id, ok := ix.mem.handleByS[h]
	ix.mem.mu.RUnlock()
	if ok {
		return id, nil
	}
	norm := ix.opts.NormalizeHandle(h)
	var id64 int64
	if err := q.QueryRowContext(ctx, `INSERT INTO handles(handle, norm, last10) VALUES(?, ?, ?)
ON CONFLICT(handle) DO UPDATE SET norm = excluded.norm RETURNING id`, h, norm, last10(h)).Scan(&id64); err != nil {
		return 0, fmt.Errorf("store handle: %w", err)
	}
	id = uint32(id64)
	ix.mem.mu.Lock()
	ix.mem.handleByS[h] = id
	ix.mem.handleStr[id] = h
	ix.mem.handleKey[id] = norm
	ix.mem.mu.Unlock()
	return id, nil
}

// upsertConversation stores a conversation and its participants in its own
// transaction, skipping the write when nothing changed.
func (ix *Index) upsertConversation(ctx context.Context, sid int64, c model.Conversation, known uint32) (uint32, error) {
	c.Identifier = fold.Sanitize(c.Identifier)
	c.DisplayName = fold.Sanitize(c.DisplayName)
	parts := make([]string, 0, len(c.Participants))
	for _, p := range c.Participants {
		if p = fold.Sanitize(p); p != "" && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	c.Participants = parts
	if c.Kind == "" {
		c.Kind = model.KindDirect
	}
	if known != 0 {
		ix.mem.mu.RLock()
		ci := ix.mem.convByID[known]
		same := ci != nil && ci.source == sid && sameConversation(ci.c, c)
		ix.mem.mu.RUnlock()
		if same {
			return known, nil
		}
	}
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store conversation: %w", err)
	}
	defer tx.Rollback()
	var id64 int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO conversations(source, guid, row_id, identifier, kind, display_name, service, archived)
VALUES(?,?,?,?,?,?,?,?)
ON CONFLICT(source, guid) DO UPDATE SET row_id = excluded.row_id, identifier = excluded.identifier, kind = excluded.kind,
	display_name = excluded.display_name, service = excluded.service, archived = excluded.archived
RETURNING id, msg_count, last_time`, sid, c.ID, c.RowID, c.Identifier, string(c.Kind), c.DisplayName, c.Service, c.Archived).Scan(&id64, new(int64), new(int64)); err != nil {
		return 0, fmt.Errorf("store conversation %s: %w", c.ID, err)
	}
	id := uint32(id64)
	if _, err := tx.ExecContext(ctx, "DELETE FROM participants WHERE conv = ?", id); err != nil {
		return 0, fmt.Errorf("store participants: %w", err)
	}
	var hids []uint32
	for i, p := range c.Participants {
		h, err := ix.handleID(ctx, tx, p)
		if err != nil {
			return 0, err
		}
		hids = append(hids, h)
		if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO participants(conv, handle, pos) VALUES(?, ?, ?)", id, h, i); err != nil {
			return 0, fmt.Errorf("store participants: %w", err)
		}
	}
	if err := bumpGen(ctx, tx, ix.mem); err != nil {
		return 0, err
	}
	ix.mem.mu.Lock()
	defer ix.mem.mu.Unlock()
	if err := tx.Commit(); err != nil {
		ix.mem.gen = -1
		return 0, fmt.Errorf("store conversation %s: %w", c.ID, err)
	}
	ix.mem.gen++
	ix.mem.labels = nil
	ci := ix.mem.convByID[id]
	if ci == nil {
		ci = &convInfo{id: id, source: sid}
		ix.mem.convByID[id] = ci
	}
	ci.c, ci.handles = c, hids
	ci.allowed = true
	return id, nil
}

// bumpGen writes gen+1 into meta inside tx; the caller sets mem.gen after
// the commit.
func bumpGen(ctx context.Context, tx *sql.Tx, mem *memState) error {
	mem.mu.RLock()
	g := mem.gen
	mem.mu.RUnlock()
	return setMeta(ctx, tx, "gen", g+1)
}

func sameConversation(a, b model.Conversation) bool {
	return a.ID == b.ID && a.RowID == b.RowID && a.Identifier == b.Identifier && a.Kind == b.Kind &&
		a.DisplayName == b.DisplayName && a.Service == b.Service && a.Archived == b.Archived &&
		slices.Equal(a.Participants, b.Participants)
}
