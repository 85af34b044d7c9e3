package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/vecscan"
)

// embedBatch is the number of texts embedded and written per transaction
// (one code chunk's worth: each transaction rewrites the code chunks it
// touches).
const embedBatch = chunkSize

// vecLoadLocked loads vector codes changed after gen since (all when
// since < 0). Callers hold mem.mu.
func (ix *Index) vecLoadLocked(ctx context.Context, q queryer, since int64) error {
	embID, err := getMetaString(ctx, q, "vec_embedder")
	if err != nil {
		return err
	}
	dim, err := getMetaInt(ctx, q, "vec_dim")
	if err != nil {
		return err
	}
	upto, err := getMetaInt(ctx, q, "vec_upto")
	if err != nil {
		return err
	}
	ready, err := getMetaInt(ctx, q, "vec_ready")
	if err != nil {
		return err
	}
	var center []byte
	if err := q.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'vec_center'").Scan(&center); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("load vector center: %w", err)
	}
	v := ix.mem.vec
	if v == nil || v.embID != embID || v.dim != int(dim) || since < 0 || (v.center == nil) != (center == nil) {
		v = &vecState{embID: embID, dim: int(dim), words: (int(dim) + 63) / 64, dirty: map[int]bool{}}
		v.center = decodeFloats(center, int(dim))
		since = -1
	}
	v.upto, v.ready = upto, ready == 1
	ix.mem.vec = v
	if dim == 0 {
		return nil
	}
	rows, err := q.QueryContext(ctx, "SELECT chunk, data FROM veccodes WHERE ver > ?", since)
	if err != nil {
		return fmt.Errorf("load vector codes: %w", err)
	}
	defer rows.Close()
	changed := false
	for rows.Next() {
		var c int
		var b []byte
		if err := rows.Scan(&c, &b); err != nil {
			return fmt.Errorf("load vector codes: %w", err)
		}
		if err := v.decodeChunk(c, b); err != nil {
			return err
		}
		changed = true
	}
	if changed && since >= 0 {
		v.dropPool() // rebuilt lazily by ensureSlab
	}
	return rows.Err()
}

// vecPersistLocked writes dirty code chunks. Callers hold mem.mu.
func (ix *Index) vecPersistLocked(ctx context.Context, tx *sql.Tx, gen int64) error {
	v := ix.mem.vec
	if v == nil || v.dim == 0 || len(v.dirty) == 0 {
		return nil
	}
	for c := range v.dirty {
		if _, err := tx.ExecContext(ctx, "INSERT INTO veccodes(chunk, ver, data) VALUES(?, ?, ?) ON CONFLICT(chunk) DO UPDATE SET ver = excluded.ver, data = excluded.data",
			c, gen, v.encodeChunk(c)); err != nil {
			return fmt.Errorf("write vector codes: %w", err)
		}
	}
	clear(v.dirty)
	return nil
}

// vecDropLocked forgets vectors of deleted or changed messages. Callers
// hold mem.mu.
func (ix *Index) vecDropLocked(ids []int64) {
	v := ix.mem.vec
	if v == nil || v.dim == 0 {
		return
	}
	for _, id := range ids {
		v.drop(id)
	}
}

// ensureSlab loads the int8 vectors for re-ranking into memory (each
// distinct vector once, see vecscan.Pool) when they fit in Options.VectorMemory
// and are not loaded yet. When they turn out not to fit, nothing is kept
// and re-ranking reads the database.
func (ix *Index) ensureSlab(ctx context.Context) error {
	ix.mem.mu.RLock()
	v := ix.mem.vec
	need := v != nil && v.dim > 0 && v.pool == nil && !v.overBudget && v.count > 0
	ix.mem.mu.RUnlock()
	if !need {
		return nil
	}
	ix.mem.mu.Lock()
	defer ix.mem.mu.Unlock()
	v = ix.mem.vec
	if v.pool != nil || v.overBudget {
		return nil
	}
	pool := vecscan.NewPool(v.dim)
	slotOf := make([]uint32, v.slots())
	budget := ix.opts.VectorMemory - int64(len(slotOf))*4
	rows, err := ix.rdb.QueryContext(ctx, "SELECT id, q FROM vectors")
	if err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	defer rows.Close()
	var b sql.RawBytes
	var id int64
	for n := 0; rows.Next(); n++ {
		if err := rows.Scan(&id, &b); err != nil {
			return fmt.Errorf("load vectors: %w", err)
		}
		if v.hasVec(id) && int(id) < len(slotOf) {
			slotOf[id] = pool.Add(b)
		}
		if n&4095 == 0 && pool.Bytes() > budget {
			v.overBudget = true
			return nil
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	if pool.Bytes() > budget {
		v.overBudget = true
		return nil
	}
	v.pool, v.slotOf, v.budget = pool, slotOf, ix.opts.VectorMemory
	return nil
}

func encodeFloats(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, x := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeFloats(b []byte, n int) []float32 {
	if len(b) != 4*n || n == 0 {
		return nil
	}
	f := make([]float32, n)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

// VectorStatus describes the semantic side of the index.
type VectorStatus struct {
	// Embedder is the ID of the configured embedder ("" when none).
	Embedder string `json:"embedder"`
	// Ready is true when vectors for the configured embedder cover the
	// index (a full pass has completed); semantic and hybrid search use
	// them only then.
	Ready bool `json:"ready"`
	// Vectors is the number of stored vectors; Searchable the number of
	// messages that should have one.
	Vectors    int   `json:"vectors"`
	Searchable int64 `json:"searchable"`
	// InMemory says whether candidates are re-ranked from vectors held in
	// memory (otherwise from the database).
	InMemory bool `json:"in_memory"`
}

// VectorStatus reports the state of semantic search.
func (ix *Index) VectorStatus() VectorStatus {
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	st := VectorStatus{Searchable: ix.mem.docs}
	if ix.opts.Embedder != nil {
		st.Embedder = ix.opts.Embedder.ID()
	}
	if v := ix.mem.vec; v != nil {
		st.Vectors = v.count
		st.InMemory = v.inMemory()
		st.Ready = v.ready && v.embID != "" && v.embID == st.Embedder
	}
	return st
}

// Embed embeds every searchable message that lacks a vector under the
// configured embedder (fitting a Fitter first when needed), and returns the
// number embedded. It is what the background worker runs; the CLI calls it
// through SyncOptions.Embed.
func (ix *Index) Embed(ctx context.Context) (int, error) {
	if ix.wdb == nil || ix.opts.Embedder == nil {
		return 0, nil
	}
	return ix.embedRun(ctx, nil, false)
}

func (ix *Index) embedLocked(ctx context.Context, prog *progress) (int, error) {
	return ix.embedRun(ctx, prog, true)
}

// lockWrite takes the write lock unless the caller already holds it.
func (ix *Index) lockWrite(held bool) func() {
	if held {
		return func() {}
	}
	ix.writeMu.Lock()
	return ix.writeMu.Unlock
}

// embedRun does one embedding pass. held says whether the caller holds
// writeMu; otherwise it is taken per write transaction only, so syncs
// interleave with a long background pass.
func (ix *Index) embedRun(ctx context.Context, prog *progress, held bool) (int, error) {
	ix.embedMu.Lock()
	defer ix.embedMu.Unlock()
	emb := ix.opts.Embedder
	if err := ix.ensureFitted(ctx, prog, held); err != nil {
		return 0, err
	}
	id, dim := emb.ID(), emb.Dim()
	if dim <= 0 {
		return 0, fmt.Errorf("embedder %s reports dimension %d", id, dim)
	}
	if err := ix.resetVectorsIfNeeded(ctx, id, dim, held); err != nil {
		return 0, err
	}
	if err := ix.ensureCenter(ctx, emb, held); err != nil {
		return 0, err
	}
	total := 0
	ix.mem.mu.RLock()
	toEmbed := ix.mem.docs - int64(ix.mem.vec.count)
	ix.mem.mu.RUnlock()
	if prog != nil {
		prog.phaseN("embedding", toEmbed)
	}
	// A long pass writes its vectors with checkpoints on another
	// connection, as a bulk load does (checkpoint.go); inside a Sync the
	// bulk load's checkpointer already runs.
	var ck *bgCheckpointer
	if !held && toEmbed >= bulkEmbed {
		ck = ix.backgroundCheckpoints(ctx)
		defer ck.stop(ctx)
	}
	// Pass A: ids above the watermark, in order. One goroutine reads and
	// embeds the next batch while this one writes the previous (embedding
	// is CPU, writing is SQLite: on two cores they overlap).
	type job struct {
		items  []embedItem
		vecs   [][]float32
		pre    *preparedVecs
		msgGen int64
		err    error
	}
	jobs := make(chan job, 1)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ix.mem.mu.RLock()
	from := ix.mem.vec.upto
	ix.mem.mu.RUnlock()
	go func() {
		defer close(jobs)
		for {
			items, msgGen, err := ix.readEmbedBatch(pctx, from)
			if err != nil || len(items) == 0 {
				if err != nil {
					jobs <- job{err: err}
				}
				return
			}
			from = items[len(items)-1].id
			vecs, pre, err := ix.embedPrepared(pctx, emb, items)
			select {
			case jobs <- job{items, vecs, pre, msgGen, err}:
			case <-pctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for j := range jobs {
		if j.err != nil {
			return total, j.err
		}
		ck.between(ctx)
		n, err := ix.storeVectors(ctx, emb, id, j.items, j.vecs, j.pre, j.items[len(j.items)-1].id, false, held, j.msgGen)
		ck.kick()
		total += n
		if prog != nil {
			prog.add(len(j.items))
		}
		if err != nil {
			return total, err
		}
	}
	// Pass B: re-embedding queue (edited messages).
	for {
		rows, err := ix.rdb.QueryContext(ctx, `SELECT q.id, coalesce(m.hash, 0), coalesce(m.text, ''), m.search_extra FROM embed_queue q
LEFT JOIN messages m ON m.id = q.id AND m.searchable = 1 ORDER BY q.id LIMIT ?`, embedBatch)
		if err != nil {
			return total, fmt.Errorf("read texts to re-embed: %w", err)
		}
		items, err := scanEmbedItems(rows)
		if err != nil {
			return total, err
		}
		if len(items) == 0 {
			break
		}
		n, err := ix.embedItems(ctx, emb, id, items, -1, true, held)
		total += n
		if err != nil {
			return total, err
		}
	}
	// Done: mark ready and move the watermark past trailing unsearchable ids.
	unlock := ix.lockWrite(held)
	defer unlock()
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return total, fmt.Errorf("finish embedding: %w", err)
	}
	defer tx.Rollback()
	if cur, _ := getMetaString(ctx, tx, "vec_embedder"); cur != id {
		return total, nil // the embedder changed under us; the next pass starts over
	}
	ix.mem.mu.RLock()
	maxID := ix.mem.maxID
	upto := ix.mem.vec.upto
	ix.mem.mu.RUnlock()
	var pending int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM messages WHERE id > ? AND searchable = 1", upto).Scan(&pending); err != nil {
		return total, fmt.Errorf("finish embedding: %w", err)
	}
	if pending > 0 {
		return total, nil // new messages arrived; the next pass takes them
	}
	if maxID > upto {
		upto = maxID
	}
	if err := setMeta(ctx, tx, "vec_upto", upto); err != nil {
		return total, err
	}
	if err := setMeta(ctx, tx, "vec_ready", 1); err != nil {
		return total, err
	}
	if err := tx.Commit(); err != nil {
		return total, fmt.Errorf("finish embedding: %w", err)
	}
	ix.mem.mu.Lock()
	ix.mem.vec.upto, ix.mem.vec.ready = upto, true
	ix.mem.mu.Unlock()
	return total, nil
}

type embedItem struct {
	id   int64
	hash int64
	text string
}

func scanEmbedItems(rows *sql.Rows) ([]embedItem, error) {
	defer rows.Close()
	var out []embedItem
	for rows.Next() {
		var it embedItem
		var text string
		var extra sql.NullString
		if err := rows.Scan(&it.id, &it.hash, &text, &extra); err != nil {
			return nil, fmt.Errorf("read texts to embed: %w", err)
		}
		it.text = indexText(text, extra.String)
		out = append(out, it)
	}
	return out, rows.Err()
}

// embedItems embeds items and stores the vectors; rows whose text changed
// since they were read (hash differs) are skipped: their update queued
// them again. upto >= 0 advances vec_upto; fromQueue removes the items from
// embed_queue.
func (ix *Index) embedItems(ctx context.Context, emb Embedder, embID string, items []embedItem, upto int64, fromQueue, held bool) (int, error) {
	vecs, err := embedTexts(ctx, emb, items)
	if err != nil {
		return 0, err
	}
	return ix.storeVectors(ctx, emb, embID, items, vecs, nil, upto, fromQueue, held, -1)
}

// readEmbedBatch reads the next texts to embed after id from, with the
// meta msg_gen of the same snapshot (the generation of the last write that
// changed any message): storeVectors skips its per-row check when no
// message has changed since.
func (ix *Index) readEmbedBatch(ctx context.Context, from int64) ([]embedItem, int64, error) {
	tx, err := ix.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, 0, fmt.Errorf("read texts to embed: %w", err)
	}
	defer tx.Rollback()
	msgGen, err := getMetaInt(ctx, tx, "msg_gen")
	if err != nil {
		return nil, 0, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT id, hash, text, search_extra FROM messages WHERE id > ? AND searchable = 1 ORDER BY id LIMIT ?", from, embedBatch)
	if err != nil {
		return nil, 0, fmt.Errorf("read texts to embed: %w", err)
	}
	items, err := scanEmbedItems(rows)
	return items, msgGen, err
}

// embedTexts embeds the items that still exist (hash != 0); the result is
// parallel to items, nil for the others.
func embedTexts(ctx context.Context, emb Embedder, items []embedItem) ([][]float32, error) {
	var texts []string
	var idx []int
	for i, it := range items {
		if it.hash != 0 {
			texts = append(texts, it.text)
			idx = append(idx, i)
		}
	}
	out := make([][]float32, len(items))
	if len(texts) == 0 {
		return out, nil
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed: %d vectors for %d texts", len(vecs), len(texts))
	}
	for k, i := range idx {
		out[i] = vecs[k]
	}
	return out, nil
}

// vectorsPerInsert is how many vectors one INSERT carries on the fast path.
const vectorsPerInsert = 64

var vectorInsertSQLs = func() (out [vectorsPerInsert + 1]string) {
	for i := 1; i <= vectorsPerInsert; i++ {
		out[i] = "INSERT OR REPLACE INTO vectors(id, q) VALUES (?,?)" + strings.Repeat(",(?,?)", i-1)
	}
	return out
}()

// storeVectors writes embedded items (vecs parallel to items). msgGen is
// the meta msg_gen read with the items' texts (-1: unknown): when it is
// still current no message has changed since, and the vectors are written
// in multi-row INSERTs; otherwise each row is written only if its message
// still exists with the hash it was embedded from.
func (ix *Index) storeVectors(ctx context.Context, emb Embedder, embID string, items []embedItem, vecs [][]float32, pre *preparedVecs, upto int64, fromQueue, held bool, msgGen int64) (int, error) {
	unlock := ix.lockWrite(held)
	defer unlock()
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store vectors: %w", err)
	}
	defer tx.Rollback()
	if err := ix.refreshTx(ctx, tx); err != nil {
		return 0, err
	}
	if cur, err := getMetaString(ctx, tx, "vec_embedder"); err != nil || cur != embID {
		return 0, err // the embedder changed under us
	}
	trusted := false
	if msgGen >= 0 {
		cur, err := getMetaInt(ctx, tx, "msg_gen")
		if err != nil {
			return 0, err
		}
		trusted = cur == msgGen
	}
	type stored struct {
		id int64
		q  []byte
		i  int // index in items
	}
	var done []stored
	dim := emb.Dim()
	for i := range items {
		v := vecs[i]
		if v == nil {
			continue
		}
		if len(v) != dim {
			return 0, fmt.Errorf("embed: vector of length %d, want %d", len(v), dim)
		}
		// A zero vector (no words the embedder knows) is stored too: the
		// message has been embedded, it just matches nothing.
		var q []byte
		if pre != nil && pre.q[i] != nil {
			q = pre.q[i] // quantised off the writer (vecprep.go)
		} else {
			q = vecscan.Quantize(v)
		}
		done = append(done, stored{items[i].id, q, i})
	}
	if trusted {
		st := newTxStmts(tx)
		defer st.close()
		args := make([]any, 0, 2*vectorsPerInsert)
		for i := 0; i < len(done); i += vectorsPerInsert {
			group := done[i:min(i+vectorsPerInsert, len(done))]
			args = args[:0]
			for _, d := range group {
				args = append(args, d.id, d.q)
			}
			if _, err := st.ExecContext(ctx, vectorInsertSQLs[len(group)], args...); err != nil {
				return 0, fmt.Errorf("store vectors: %w", err)
			}
		}
	} else {
		ins, err := tx.PrepareContext(ctx, "INSERT OR REPLACE INTO vectors(id, q) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?1 AND hash = ?3 AND searchable = 1)")
		if err != nil {
			return 0, fmt.Errorf("store vectors: %w", err)
		}
		defer ins.Close()
		hash := make(map[int64]int64, len(items))
		for _, it := range items {
			hash[it.id] = it.hash
		}
		kept := done[:0]
		for _, d := range done {
			res, err := ins.ExecContext(ctx, d.id, d.q, hash[d.id])
			if err != nil {
				return 0, fmt.Errorf("store vector: %w", err)
			}
			if n, _ := res.RowsAffected(); n > 0 {
				kept = append(kept, d)
			}
		}
		done = kept
	}
	if fromQueue {
		for _, it := range items {
			if _, err := tx.ExecContext(ctx, "DELETE FROM embed_queue WHERE id = ?", it.id); err != nil {
				return 0, fmt.Errorf("update embedding queue: %w", err)
			}
		}
	}
	if upto >= 0 {
		if err := setMeta(ctx, tx, "vec_upto", upto); err != nil {
			return 0, err
		}
	}
	mem := ix.mem
	mem.mu.Lock()
	defer mem.mu.Unlock()
	for _, s := range done {
		if pre != nil && pre.vs == mem.vec && pre.q[s.i] != nil {
			mem.vec.setCoded(s.id, s.q, pre.code(s.i))
		} else {
			mem.vec.set(s.id, s.q)
		}
	}
	gen := mem.gen + 1
	if err := ix.vecPersistLocked(ctx, tx, gen); err != nil {
		return 0, ix.failMem(err)
	}
	if err := setMeta(ctx, tx, "gen", gen); err != nil {
		return 0, ix.failMem(err)
	}
	if err := tx.Commit(); err != nil {
		return 0, ix.failMem(fmt.Errorf("store vectors: %w", err))
	}
	mem.gen = gen
	if upto >= 0 {
		mem.vec.upto = upto
	}
	return len(done), nil
}

func isZeroVec(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// resetVectorsIfNeeded discards stored vectors made by another embedder.
func (ix *Index) resetVectorsIfNeeded(ctx context.Context, id string, dim int, held bool) error {
	ix.mem.mu.RLock()
	v := ix.mem.vec
	same := v != nil && v.embID == id && v.dim == dim
	ix.mem.mu.RUnlock()
	if same {
		return nil
	}
	unlock := ix.lockWrite(held)
	defer unlock()
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("reset vectors: %w", err)
	}
	defer tx.Rollback()
	for _, q := range []string{"DELETE FROM vectors", "DELETE FROM veccodes", "DELETE FROM embed_queue", "DELETE FROM meta WHERE key = 'vec_center'"} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("reset vectors: %w", err)
		}
	}
	for k, val := range map[string]any{"vec_embedder": id, "vec_dim": dim, "vec_upto": 0, "vec_ready": 0} {
		if err := setMeta(ctx, tx, k, val); err != nil {
			return err
		}
	}
	ix.mem.mu.Lock()
	defer ix.mem.mu.Unlock()
	gen := ix.mem.gen + 1
	if err := setMeta(ctx, tx, "gen", gen); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return ix.failMem(fmt.Errorf("reset vectors: %w", err))
	}
	ix.mem.gen = gen
	ix.mem.vec = &vecState{embID: id, dim: dim, words: (dim + 63) / 64, dirty: map[int]bool{}}
	if prev := v; prev != nil && prev.embID != "" {
		ix.log.Info("embedder changed; re-embedding in the background", "from", prev.embID, "to", id)
	}
	return nil
}

// centerSample is how many messages the code center is estimated from.
const centerSample = 2048

// ensureCenter estimates the mean vector the binary codes are taken around
// (from a random sample of messages) before the first vector is stored.
func (ix *Index) ensureCenter(ctx context.Context, emb Embedder, held bool) error {
	ix.mem.mu.RLock()
	v := ix.mem.vec
	have := v.center != nil || v.count > 0
	var ids []int64
	if !have {
		var all []int64
		for id, f := range ix.mem.flags {
			if f&(fLive|fSearchable) == fLive|fSearchable {
				all = append(all, int64(id))
			}
		}
		r := rand.New(rand.NewPCG(uint64(len(all)), 7))
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		ids = all[:min(len(all), centerSample)]
	}
	ix.mem.mu.RUnlock()
	if have || len(ids) == 0 {
		return nil
	}
	texts, err := ix.fetchTexts(ctx, ids)
	if err != nil {
		return err
	}
	var list []string
	for _, t := range texts {
		list = append(list, t.text)
	}
	vecs, err := emb.Embed(ctx, list)
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	center := make([]float32, emb.Dim())
	n := 0
	for _, vec := range vecs {
		if len(vec) == len(center) && !isZeroVec(vec) {
			for i, x := range vec {
				center[i] += x
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	for i := range center {
		center[i] /= float32(n)
	}
	unlock := ix.lockWrite(held)
	defer unlock()
	if err := setMeta(ctx, ix.wdb, "vec_center", encodeFloats(center)); err != nil {
		return err
	}
	ix.mem.mu.Lock()
	if ix.mem.vec.count == 0 {
		ix.mem.vec.center = center
	}
	ix.mem.mu.Unlock()
	return nil
}

// refitFactor: a Fitter is fitted again when the corpus has grown this many
// times since the last fit (and by at least refitMin messages).
const (
	refitFactor = 2
	refitMin    = 50000
)

// ensureFitted restores or fits a Fitter's state. A fit that read the
// corpus before a purge committed (the purge forgot the fitted state, see
// forgetFitTx) may have learned from the purged messages: it is discarded
// and done again.
func (ix *Index) ensureFitted(ctx context.Context, prog *progress, held bool) error {
	f, ok := ix.opts.Embedder.(Fitter)
	if !ok {
		return nil
	}
	for try := 0; ; try++ {
		err := ix.ensureFittedOnce(ctx, f, prog, held)
		if !errors.Is(err, errFitStale) {
			return err
		}
		if try == 2 {
			return fmt.Errorf("fit embedder: messages were purged during three fits in a row; trying again later")
		}
	}
}

// errFitStale means a purge committed while the corpus was being fitted.
var errFitStale = errors.New("corpus purged during the fit")

func (ix *Index) ensureFittedOnce(ctx context.Context, f Fitter, prog *progress, held bool) error {
	epoch, err := getMetaInt(ctx, ix.rdb, fitEpochKey)
	if err != nil {
		return err
	}
	key := ix.embBaseID
	fit, docs, err := ix.fitDue(ctx, f)
	if err != nil || !fit {
		return err
	}
	if prog != nil {
		prog.phase("fitting embedder")
	}
	start := time.Now()
	// A fit made ahead (prefit.go) read the corpus under its own epoch.
	state, epoch, err := ix.fitState(ctx, f, docs, epoch)
	if err != nil {
		return err
	}
	unlock := ix.lockWrite(held)
	defer unlock()
	if now, err := getMetaInt(ctx, ix.wdb, fitEpochKey); err != nil || now != epoch {
		// A purge committed since the corpus was read: forget this fit.
		if uerr := f.UnmarshalBinary(nil); uerr != nil {
			ix.log.Warn("reset fitted embedder", "err", uerr)
		}
		if err != nil {
			return err
		}
		return errFitStale
	}
	if _, err := ix.wdb.ExecContext(ctx, `INSERT INTO embedder_state(key, data, fit_docs, fit_at) VALUES(?, ?, ?, ?)
ON CONFLICT(key) DO UPDATE SET data = excluded.data, fit_docs = excluded.fit_docs, fit_at = excluded.fit_at`, key, state, docs, ix.now().UnixMilli()); err != nil {
		return fmt.Errorf("save embedder state: %w", err)
	}
	ix.embRestored = docs
	ix.log.Info("fitted embedder", "docs", docs, "took", time.Since(start).Round(time.Millisecond), "id", f.ID())
	return nil
}

// fitDue restores a Fitter's stored state when it is current and reports
// whether the embedder must be fitted (again) over docs messages. Callers
// hold embedMu.
func (ix *Index) fitDue(ctx context.Context, f Fitter) (fit bool, docs int64, err error) {
	var data []byte
	var fitDocs int64
	err = ix.rdb.QueryRowContext(ctx, "SELECT data, fit_docs FROM embedder_state WHERE key = ?", ix.embBaseID).Scan(&data, &fitDocs)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return false, 0, fmt.Errorf("read embedder state: %w", err)
	}
	ix.mem.mu.RLock()
	docs = ix.mem.docs
	ix.mem.mu.RUnlock()
	if data != nil && !(docs >= refitFactor*fitDocs && docs-fitDocs >= refitMin) {
		if ix.embRestored != fitDocs {
			if err := f.UnmarshalBinary(data); err != nil {
				ix.log.Warn("stored embedder state unreadable; fitting again", "err", err)
			} else {
				ix.embRestored = fitDocs
				return false, docs, nil
			}
		} else {
			return false, docs, nil
		}
	}
	// With no messages there is nothing to learn from yet: embed with the
	// unfitted model.
	return docs > 0, docs, nil
}

// restoreEmbedder loads a Fitter's stored state at open so query vectors
// match the stored ones from the first search.
func (ix *Index) restoreEmbedder(ctx context.Context) {
	f, ok := ix.opts.Embedder.(Fitter)
	if !ok {
		return
	}
	var data []byte
	var fitDocs int64
	if err := ix.rdb.QueryRowContext(ctx, "SELECT data, fit_docs FROM embedder_state WHERE key = ?", ix.embBaseID).Scan(&data, &fitDocs); err != nil {
		return
	}
	if err := f.UnmarshalBinary(data); err != nil {
		ix.log.Warn("stored embedder state unreadable", "err", err)
		return
	}
	ix.embRestored = fitDocs
}

// startEmbedder runs embedding passes in the background whenever woken.
func (ix *Index) startEmbedder(ctx context.Context) {
	if ix.wdb == nil || ix.opts.Embedder == nil {
		return
	}
	ix.bg.Add(1)
	go func() {
		defer ix.bg.Done()
		for {
			if _, err := ix.embedRun(ctx, nil, false); err != nil && ctx.Err() == nil && !ix.isClosed() {
				ix.log.Error("background embedding", "err", err)
				select {
				case <-time.After(5 * time.Second):
				case <-ctx.Done():
					return
				case <-ix.closed:
					return
				}
			}
			select {
			case <-ix.embedWake:
			case <-ctx.Done():
				return
			case <-ix.closed:
				return
			}
		}
	}()
}

func (ix *Index) wakeEmbedder() {
	select {
	case ix.embedWake <- struct{}{}:
	default:
	}
}
