package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/fold"
	"github.com/tidings-mcp/tidings/internal/model"
)

// SyncOptions controls Sync.
type SyncOptions struct {
	// Progress receives a one-line progress display, rewritten in place with
	// carriage returns. The CLI passes stderr only when it is a terminal, so
	// scripts and logs stay quiet.
	Progress io.Writer
	// NewOnly is passed to sources (see SyncRequest.NewOnly).
	NewOnly bool
	// Embed embeds new and changed messages before Sync returns. Without
	// it, embedding is left to the background worker (Watch starts one) or
	// a later Embed call.
	Embed bool
}

// SyncReport summarises a Sync.
type SyncReport struct {
	Sources  []SourceReport `json:"sources"`
	Duration time.Duration  `json:"duration_ns"`
	// Bulk is true when this sync loaded an empty index (rows first,
	// secondary indexes built once at the end).
	Bulk bool `json:"bulk"`
	// Embedded counts messages embedded when SyncOptions.Embed was set.
	Embedded int `json:"embedded"`
}

// SourceReport counts what one source delivered.
type SourceReport struct {
	Key       string `json:"key"`
	Added     int    `json:"added"`
	Updated   int    `json:"updated"`
	Unchanged int    `json:"unchanged"`
	Deleted   int    `json:"deleted"`
	Reactions int    `json:"reactions"`
	// SkippedPolicy counts messages of threads the read policy blocks.
	SkippedPolicy int `json:"skipped_policy"`
	// SkippedOrphan counts messages that belong to no conversation (chat
	// deleted on the device); they are not stored.
	SkippedOrphan int `json:"skipped_orphan"`
	// Purged counts stored threads that the policy now blocks; they were
	// removed with all derived data.
	Purged int `json:"purged"`
}

// Batch sizes: rows per write transaction. Bulk loads use large batches
// (fewer FTS segments, fewer term upserts); incremental syncs commit small
// batches so a new message is searchable quickly.
const (
	bulkBatch        = 5000
	incrementalBatch = 2000
)

// Sync brings the index up to date with each source in turn. It is
// crash-safe: rows and the source's watermark are committed together, so a
// sync killed at any point is completed by the next one without duplicates
// or loss. Sync holds the index's write lock; queries keep running.
func (ix *Index) Sync(ctx context.Context, opts SyncOptions, sources ...Source) (SyncReport, error) {
	if ix.wdb == nil {
		return SyncReport{}, errors.New("sync: index opened read-only")
	}
	if ix.isClosed() {
		return SyncReport{}, ErrClosed
	}
	start := time.Now()
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	release, err := ix.prepareSync(ctx) // syncprep.go
	if err != nil {
		return SyncReport{}, err
	}
	defer release()
	var rep SyncReport
	built, err := getMetaInt(ctx, ix.wdb, "indexes_built")
	if err != nil {
		return rep, err
	}
	rep.Bulk = built == 0
	var ck *bgCheckpointer
	if rep.Bulk {
		ck = ix.backgroundCheckpoints(ctx)
		defer ck.stop(ctx)
	}
	prog := newProgress(opts.Progress)
	for _, src := range sources {
		sr, err := ix.syncSource(ctx, src, opts, rep.Bulk, ck, prog)
		rep.Sources = append(rep.Sources, sr)
		if err != nil {
			prog.done()
			return rep, fmt.Errorf("sync %s: %w", src.Key(), err)
		}
	}
	if rep.Bulk {
		// The embedder's fit reads every stored text and runs meanwhile
		// on the other core.
		ix.startPrefit(ctx)
		prog.phase("building indexes")
		// The bulk load's garbage and its guid map are gone: give the
		// memory back before the index build (a one-off full collection).
		debug.FreeOSMemory()
		if err := ix.buildSecondaryIndexes(ctx); err != nil {
			prog.done()
			return rep, err
		}
	}
	if opts.Embed && ix.opts.Embedder != nil {
		n, err := ix.embedLocked(ctx, prog)
		rep.Embedded = n
		if err != nil {
			prog.done()
			return rep, err
		}
	}
	prog.done()
	ix.wakeEmbedder()
	rep.Duration = time.Since(start)
	return rep, nil
}

func (ix *Index) buildSecondaryIndexes(ctx context.Context) error {
	conn, err := ix.wdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("build indexes: %w", err)
	}
	defer conn.Close()
	// Sort in temporary files with a small cache rather than in memory: at
	// 1M messages SQLite's in-memory sort runs take ~100 MB more and twice
	// the CPU (measured). SQLite creates the files with mode 0600 and
	// unlinks them at once; they hold index keys (guids, conversation ids,
	// times), not text. The page cache is emptied afterwards: the sort
	// leaves it full of pages nothing reads again.
	for _, q := range []string{"PRAGMA temp_store = FILE", "PRAGMA cache_size = -2048"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("build indexes: %w", err)
		}
	}
	defer func() {
		c := context.WithoutCancel(ctx)
		conn.ExecContext(c, "PRAGMA temp_store = MEMORY")
		conn.ExecContext(c, fmt.Sprintf("PRAGMA cache_size = -%d", writeCacheKiB))
		conn.ExecContext(c, "PRAGMA shrink_memory")
	}()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("build indexes: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, secondaryIndexes); err != nil {
		return fmt.Errorf("build indexes: %w", err)
	}
	// One full-text segment: a bulk load leaves one per few batches, and
	// every query term seeks into each (6 segments at 200k messages cost a
	// hybrid search 17 % more CPU; the merge of the 1M demo took 0.2 CPU-s in the sqlite3 shell;
	// docs/benchmarks.md). Later syncs add small segments that FTS5's
	// automerge folds in.
	if _, err := tx.ExecContext(ctx, "INSERT INTO fts(fts) VALUES('optimize')"); err != nil {
		return fmt.Errorf("merge full-text index: %w", err)
	}
	if err := setMeta(ctx, tx, "indexes_built", 1); err != nil {
		return err
	}
	// No ANALYZE: its stat4 samples are copies of index keys (guids,
	// terms) that would outlive a purge, and the queries here are plain
	// index lookups the planner gets right without statistics.
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("build indexes: %w", err)
	}
	return nil
}

// sourceID returns the sources row for src, creating it.
func (ix *Index) sourceRow(ctx context.Context, src Source) (id int64, wm []byte, err error) {
	err = ix.wdb.QueryRowContext(ctx, "SELECT id, watermark FROM sources WHERE key = ?", src.Key()).Scan(&id, &wm)
	if errors.Is(err, sql.ErrNoRows) {
		res, err := ix.wdb.ExecContext(ctx, "INSERT INTO sources(key, kind) VALUES(?, ?)", src.Key(), src.Kind())
		if err != nil {
			return 0, nil, fmt.Errorf("register source: %w", err)
		}
		id, err = res.LastInsertId()
		return id, nil, err
	}
	if err != nil {
		return 0, nil, fmt.Errorf("read source: %w", err)
	}
	return id, wm, nil
}

func (ix *Index) syncSource(ctx context.Context, src Source, opts SyncOptions, bulk bool, ck *bgCheckpointer, prog *progress) (SourceReport, error) {
	rep := SourceReport{Key: src.Key()}
	sid, wm, err := ix.sourceRow(ctx, src)
	if err != nil {
		return rep, err
	}
	ix.mem.mu.Lock()
	ix.mem.sourceKind[sid] = src.Kind()
	ix.mem.mu.Unlock()
	w := &batchWriter{
		ix: ix, ctx: ctx, sid: sid, kind: src.Kind(), bulk: bulk, ck: ck, rep: &rep, prog: prog,
		convIDs: map[string]uint32{}, blocked: map[string]bool{}, pending: map[string]int{},
		watermark: wm,
	}
	w.batchSize = incrementalBatch
	if bulk {
		w.batchSize = bulkBatch
	}
	w.cur.ops = make([]op, 0, w.batchSize)
	if err := w.start(); err != nil {
		return rep, err
	}
	err = src.Sync(ctx, SyncRequest{Watermark: wm, NewOnly: opts.NewOnly}, w)
	if ferr := w.finish(err == nil); err == nil {
		err = ferr
	}
	if err == nil {
		_, err = ix.wdb.ExecContext(ctx, "UPDATE sources SET synced_at = ? WHERE id = ?", ix.now().UnixMilli(), sid)
	}
	return rep, err
}

// opKind is what a batched operation does.
type opKind uint8

const (
	opUpsert opKind = iota
	opDelete
	opReaction
)

// op is one prepared change. Preparation (hashing, tokenizing, encoding)
// happens on the source's goroutine; the flusher only writes.
type op struct {
	kind opKind
	guid string
	m    model.Message
	// Resolved at preparation.
	convs      []uint32
	sender     string
	hash       uint64
	searchable bool
	text       string // sanitised display text
	extraText  string // subject, transcriptions (indexed, not displayed)
	terms      []string
	length     int
	trec       []byte // term record (termrec.go); nil when not searchable
	extra      []byte
}

// batch is a unit of work for the flusher: ops committed in one
// transaction with the watermark that covers them.
type batch struct {
	ops       []op
	watermark []byte
	hasWM     bool
}

// batchWriter implements Writer. Ops accumulate on the source's goroutine;
// full batches go to a flusher goroutine so reading and writing overlap.
type batchWriter struct {
	ix   *Index
	ctx  context.Context
	sid  int64
	kind string
	bulk bool
	ck   *bgCheckpointer // nil: the writer checkpoints
	rep  *SourceReport
	prog *progress

	convIDs map[string]uint32 // conversation guid → id (allowed ones)
	blocked map[string]bool   // conversation guid → blocked by policy

	cur       batch
	pending   map[string]int // guid → index of its upsert in cur.ops
	batchSize int
	watermark []byte

	// queue feeds the flusher; nil once the flusher has stopped for good
	// (after an error), so nothing sends to it or closes it again.
	queue    chan batch
	flushErr chan error
	// spare returns committed batches' op slices for reuse (a bulk load
	// would otherwise allocate a few MB per batch).
	spare  chan []op
	failed error

	// flusher state
	bulkIDs *keyTable
	seen    int
}

func (w *batchWriter) start() error {
	if w.bulk {
		// Resuming a bulk load that was interrupted: the guid index does
		// not exist yet, so remember stored guids in memory.
		w.bulkIDs = newKeyTable()
		rows, err := w.ix.wdb.QueryContext(w.ctx, "SELECT id, guid FROM messages WHERE source = ?", w.sid)
		if err != nil {
			return fmt.Errorf("resume bulk load: %w", err)
		}
		for rows.Next() {
			var id int64
			var g string
			if err := rows.Scan(&id, &g); err != nil {
				rows.Close()
				return fmt.Errorf("resume bulk load: %w", err)
			}
			w.bulkIDs.put(guidKey(w.sid, g), id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("resume bulk load: %w", err)
		}
	}
	// Known conversations of this source.
	w.ix.mem.mu.RLock()
	for id, ci := range w.ix.mem.convByID {
		if ci.source == w.sid {
			w.convIDs[ci.c.ID] = id
		}
	}
	w.ix.mem.mu.RUnlock()
	w.queue = make(chan batch, 1)
	w.flushErr = make(chan error, 1)
	w.spare = make(chan []op, 2)
	go w.flush(w.queue)
	return nil
}

// flush commits queued batches until the queue is closed, then reports the
// first error. Cancellation is checked between batches: the statements of
// a batch run without the context's cancellation, because the driver
// starts a watcher goroutine and a progress handler for every statement
// run under a cancellable context (about a tenth of the bulk load's write
// time at 1M messages). A batch takes well under a second.
func (w *batchWriter) flush(queue <-chan batch) {
	var err error
	bctx := context.WithoutCancel(w.ctx)
	for b := range queue {
		if err == nil {
			err = w.ctx.Err()
		}
		if err == nil {
			w.ck.between(bctx)
			err = w.ix.commitBatch(bctx, w, b)
		}
		if err == nil {
			w.ck.kick()
			// Between transactions: prepare what this batch parsed, so
			// the next one reuses it.
			w.ix.wstmts.warm(bctx, w.ix.wdb)
		}
		w.recycle(b.ops)
	}
	w.flushErr <- err
}

// handoff sends the current batch to the flusher.
func (w *batchWriter) handoff() error {
	if w.failed != nil {
		return w.failed
	}
	if w.queue == nil {
		return errFlusherStopped
	}
	b := w.cur
	b.watermark = w.watermark
	b.hasWM = true
	select {
	case ops := <-w.spare:
		w.cur = batch{ops: ops}
	default:
		w.cur = batch{ops: make([]op, 0, w.batchSize)}
	}
	clear(w.pending)
	select {
	case w.queue <- b:
		return nil
	case err := <-w.flushErr:
		// The flusher stopped early (it only does so after an error).
		w.queue = nil
		w.failed = err
		if err == nil {
			w.failed = errFlusherStopped
		}
		return w.failed
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// errFlusherStopped is what a writer whose flusher has stopped answers when
// no error of its own was recorded.
var errFlusherStopped = errors.New("sync flusher stopped")

// finish flushes what is left (when ok) and waits for the flusher.
func (w *batchWriter) finish(ok bool) error {
	var err error
	if ok && w.failed == nil {
		err = w.handoff()
	}
	if w.queue == nil {
		// The flusher already stopped and reported (drain, handoff).
		if w.failed != nil {
			return w.failed
		}
		if err != nil {
			return err
		}
		return errFlusherStopped
	}
	close(w.queue)
	w.queue = nil
	ferr := <-w.flushErr
	if w.failed != nil {
		return w.failed
	}
	if err != nil {
		return err
	}
	return ferr
}

func (w *batchWriter) add(o op) error {
	if w.failed != nil {
		return w.failed
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	switch o.kind {
	case opUpsert:
		if i, ok := w.pending[o.guid]; ok && w.cur.ops[i].kind == opUpsert {
			w.cur.ops[i] = o
			return nil
		}
		w.pending[o.guid] = len(w.cur.ops)
	case opDelete:
		if i, ok := w.pending[o.guid]; ok {
			// Deleting a message delivered in this batch: drop the upsert
			// but still delete a stored copy.
			w.cur.ops[i] = op{kind: opDelete, guid: o.guid}
			delete(w.pending, o.guid)
			return nil
		}
	}
	w.cur.ops = append(w.cur.ops, o)
	if len(w.cur.ops) >= w.batchSize {
		return w.handoff()
	}
	return nil
}

// Checkpoint implements Writer.
func (w *batchWriter) Checkpoint(wm []byte) error {
	if w.failed != nil {
		return w.failed
	}
	w.watermark = slices.Clone(wm)
	return nil
}

// StoredAttachmentNames returns the name of every attachment this source's
// messages hold in the index, by attachment ROWID (RowSource compares them
// with the source's to find renamed ones). Queued batches land first.
func (w *batchWriter) StoredAttachmentNames() (map[int64]string, error) {
	if w.failed != nil {
		return nil, w.failed
	}
	if len(w.cur.ops) > 0 {
		if err := w.handoff(); err != nil {
			return nil, err
		}
	}
	if err := w.drain(); err != nil {
		return nil, err
	}
	rows, err := w.ix.wdb.QueryContext(w.ctx, "SELECT a.row_id, a.filename FROM attachments a JOIN messages m ON m.id = a.msg WHERE m.source = ? AND a.row_id != 0", w.sid)
	if err != nil {
		return nil, fmt.Errorf("read stored attachment names: %w", err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, fmt.Errorf("read stored attachment names: %w", err)
		}
		out[id] = name
	}
	return out, rows.Err()
}

// Delete implements Writer.
func (w *batchWriter) Delete(guid string) error {
	return w.add(op{kind: opDelete, guid: guid})
}

// Conversations implements Writer: upserts allowed conversations now (in
// their own transaction, after pending batches) and purges stored ones the
// policy blocks.
func (w *batchWriter) Conversations(convs []model.Conversation) error {
	if w.failed != nil {
		return w.failed
	}
	// Let queued batches land first so a purge sees every stored row.
	if len(w.cur.ops) > 0 {
		if err := w.handoff(); err != nil {
			return err
		}
	}
	if err := w.drain(); err != nil {
		return err
	}
	for _, c := range convs {
		c.Source = w.kind
		c.ID = fold.Sanitize(c.ID)
		if c.ID == "" {
			continue
		}
		if !w.ix.allow(c) {
			w.blocked[c.ID] = true
			if id, ok := w.convIDs[c.ID]; ok {
				if err := w.ix.purgeLocked(w.ctx, id); err != nil {
					return err
				}
				delete(w.convIDs, c.ID)
				w.rep.Purged++
			}
			continue
		}
		delete(w.blocked, c.ID)
		id, err := w.ix.upsertConversation(w.ctx, w.sid, c, w.convIDs[c.ID])
		if err != nil {
			return err
		}
		w.convIDs[c.ID] = id
	}
	return nil
}

// recycle clears a committed batch's ops and offers the slice for reuse.
func (w *batchWriter) recycle(ops []op) {
	clear(ops)
	select {
	case w.spare <- ops[:0]:
	default:
	}
}

// drain waits until the flusher has committed every queued batch.
func (w *batchWriter) drain() error {
	// A fresh flusher round-trip: close and restart the queue.
	if w.queue == nil {
		if w.failed != nil {
			return w.failed
		}
		return errFlusherStopped
	}
	close(w.queue)
	w.queue = nil
	err := <-w.flushErr
	if err != nil {
		// The flusher is gone and its queue closed: finish must not close
		// it again (a cancelled sync used to panic there).
		w.failed = err
		return err
	}
	w.queue = make(chan batch, 1)
	go w.flush(w.queue)
	return nil
}

// Message implements Writer.
func (w *batchWriter) Message(m model.Message) error {
	if w.failed != nil {
		return w.failed
	}
	m.ID = fold.Sanitize(m.ID)
	if m.ID == "" {
		return nil
	}
	convs := make([]uint32, 0, len(m.ConversationIDs))
	blocked := false
	for _, g := range m.ConversationIDs {
		g = fold.Sanitize(g)
		if w.blocked[g] {
			blocked = true
			continue
		}
		id, ok := w.convIDs[g]
		if !ok {
			c := minimalConversation(w.kind, g, m)
			if !w.ix.allow(c) {
				w.blocked[g] = true
				blocked = true
				continue
			}
			var err error
			if id, err = w.ix.upsertConversation(w.ctx, w.sid, c, 0); err != nil {
				return err
			}
			w.convIDs[g] = id
		}
		if !slices.Contains(convs, id) {
			convs = append(convs, id)
		}
	}
	// A message in a blocked thread is part of it, whatever other threads
	// chat.db also joins it to: showing it there would show the blocked
	// thread's content. So it is not stored (and a stored copy goes).
	if blocked || len(convs) == 0 {
		if blocked {
			w.rep.SkippedPolicy++
		} else {
			w.rep.SkippedOrphan++
		}
		// A message that moved out of every allowed thread must go.
		return w.add(op{kind: opDelete, guid: m.ID})
	}
	if m.Kind == model.MsgReaction {
		if m.Reaction == nil || m.Reaction.Target == "" {
			return nil
		}
		return w.add(op{kind: opReaction, guid: m.ID, m: m, convs: convs, sender: fold.Sanitize(m.Sender)})
	}
	o := op{kind: opUpsert, guid: m.ID, convs: convs, sender: fold.Sanitize(m.Sender)}
	o.hash = messageHash(&m)
	display := fold.Sanitize(m.Text)
	o.text = indexedText(display, m.Runs) // secrets are never indexed (codes.go, secrets.go)
	o.extraText = blankSecrets(searchExtra(&m))
	var err error
	if o.extra, err = encodeExtra(&m, display, o.text); err != nil {
		return err
	}
	o.searchable = isSearchable(&m)
	if o.searchable {
		o.terms, o.length, o.trec = termRecord(o.text, o.extraText)
		o.searchable = o.length > 0
	}
	o.m = m
	// Keep only what the flusher needs of the model value.
	o.m.Runs, o.m.Edits, o.m.GroupEvent = nil, nil, nil
	return w.add(o)
}

// minimalConversation describes a conversation a message names but the
// source never delivered.
func minimalConversation(kind, guid string, m model.Message) model.Conversation {
	c := model.Conversation{Source: kind, ID: guid, Identifier: guid, Kind: model.KindDirect, Service: m.Service}
	if strings.Contains(guid, ";+;") {
		c.Kind = model.KindGroup
	}
	if parts := strings.Split(guid, ";"); len(parts) == 3 {
		c.Identifier = parts[2]
	}
	if m.Sender != "" {
		c.Participants = []string{m.Sender}
	}
	return c
}

// isSearchable reports whether a message's text belongs in the search
// indexes: what a person wrote and can still see (not unsent, not in
// Recently Deleted, not a group event or tapback).
func isSearchable(m *model.Message) bool {
	switch m.Kind {
	case model.MsgGroupEvent, model.MsgReaction:
		return false
	}
	return !m.Unsent && !m.RecentlyDeleted
}

// searchExtra is indexed text that is not the body: the subject line and
// audio transcriptions.
func searchExtra(m *model.Message) string {
	var parts []string
	if m.Subject != "" {
		parts = append(parts, fold.Sanitize(m.Subject))
	}
	for _, r := range m.Runs {
		if r.Transcription != "" {
			parts = append(parts, fold.Sanitize(r.Transcription))
		}
	}
	return strings.Join(parts, "\n")
}

// indexText is the text the FTS index holds for a message; it must match
// the SQL expression in commitBatch.
func indexText(text, extra string) string {
	if extra == "" {
		return text
	}
	return text + "\n" + extra
}

// distinctTerms returns the distinct terms of a message's indexed text and
// its length in terms.
func distinctTerms(text, extra string) ([]string, int) {
	n := 0
	var out []string
	var seen map[string]struct{} // once out is long; short lists are scanned
	var arr [64]byte
	buf := arr[:0]
	for _, s := range [2]string{text, extra} {
		buf = fold.Tokenize(s, buf, func(t []byte, _, _ int) {
			n++
			if seen == nil {
				for _, o := range out {
					if o == string(t) {
						return
					}
				}
				out = append(out, string(t))
				if len(out) == 32 {
					seen = make(map[string]struct{}, 64)
					for _, o := range out {
						seen[o] = struct{}{}
					}
				}
				return
			}
			if _, ok := seen[string(t)]; !ok {
				k := string(t)
				seen[k] = struct{}{}
				out = append(out, k)
			}
		})
	}
	return out, n
}

// messageExtra is the JSON column for the rarely present structured
// fields.
type messageExtra struct {
	Edits       []model.Edit      `json:"edits,omitempty"`
	UnsentParts []int             `json:"unsent_parts,omitempty"`
	Runs        []model.Run       `json:"runs,omitempty"`
	GroupEvent  *model.GroupEvent `json:"group_event,omitempty"`
	// Text is the display text when the stored text has secrets blanked
	// (codes.go, secrets.go).
	Text        string `json:"text,omitempty"`
	Attachments int    `json:"-"`
}

// encodeExtra encodes the structured fields; runs that carry nothing but a
// part index are dropped. display is the message's text and stored the
// text stored for search (indexedText): when they differ, display is kept
// here. It returns nil when there is nothing to store.
func encodeExtra(m *model.Message, display, stored string) ([]byte, error) {
	var x messageExtra
	x.Edits = m.Edits
	x.UnsentParts = m.UnsentParts
	x.GroupEvent = m.GroupEvent
	if stored != display {
		x.Text = display
	}
	for _, r := range m.Runs {
		if r.AttachmentID != "" || r.Filename != "" || r.Mention != "" || r.Link != "" || r.OneTimeCode ||
			len(r.Detected) > 0 || len(r.Styles) > 0 || r.Transcription != "" {
			x.Runs = append(x.Runs, r)
		}
	}
	if len(x.Edits) == 0 && len(x.UnsentParts) == 0 && len(x.Runs) == 0 && x.GroupEvent == nil && x.Text == "" {
		return nil, nil
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil, fmt.Errorf("encode message %s: %w", m.ID, err)
	}
	return b, nil
}

// allow applies the read policy to a conversation.
func (ix *Index) allow(c model.Conversation) bool {
	if ix.opts.Policy == nil {
		return true
	}
	return ix.opts.Policy.AllowConversation(c)
}
