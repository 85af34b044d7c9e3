package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/tidings-mcp/tidings/internal/index/vecscan"
)

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
	// the cut going to the newest messages (vecscan.Codes.Nearest).
	codes := vecscan.Codes{Dim: v.dim, Words: v.words, Codes: v.codes, Has: v.has}
	near := codes.Nearest(qc, lo, hi, depth, func(id int64) bool { return f.pass(m, id) }, plain)
	cov.Candidates += near.Considered
	cov.Unembedded += near.Missing
	cov.Complete = cov.Unembedded == 0
	if cov.Unembedded > 0 {
		cov.Note = fmt.Sprintf("%d messages in scope are not embedded yet", cov.Unembedded)
	}
	cov.Approximate = cov.Candidates > depth
	best := near.Cands
	if v.pool != nil {
		top := &topK{k: k}
		for _, b := range best {
			if s := v.slotOf[b.ID]; s != 0 {
				top.offer(b.ID, v.pool.Score(s, qv))
			}
		}
		m.mu.RUnlock()
		return positive(top.sorted()), cov, nil
	}
	m.mu.RUnlock()
	// Re-rank the candidates with their stored vectors.
	ids := make([]int64, len(best))
	for i, b := range best {
		ids[i] = b.ID
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
		if vecscan.Dequantize(b, buf) {
			top.offer(id, vecscan.Dot(qv, buf))
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
