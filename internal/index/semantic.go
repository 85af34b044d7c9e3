package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
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
	// the cut going to the newest messages. One pass over the codes counts
	// every distance (a histogram: distances have few distinct values) and
	// keeps the ids within an estimated cut; when the histogram shows the
	// true cut is larger, a second pass collects up to it.
	est := v.estimateCut(m, f, qc, lo, hi, depth, plain)
	parts := scanParallelParts(lo, hi, func(a, b int64) hamPart {
		return v.hamming(m, f, qc, a, b, est, plain, true)
	})
	hist := make([]int, v.dim+1)
	for _, p := range parts {
		cov.Candidates += p.considered
		cov.Unembedded += p.missing
		for d, c := range p.hist {
			hist[d] += c
		}
	}
	cov.Complete = cov.Unembedded == 0
	if cov.Unembedded > 0 {
		cov.Note = fmt.Sprintf("%d messages in scope are not embedded yet", cov.Unembedded)
	}
	cov.Approximate = cov.Candidates > depth
	// The distance threshold that admits depth candidates; ties at the
	// threshold go to the newest messages.
	threshold, below := v.dim, 0
	for d, c := range hist {
		if below+c >= depth {
			threshold = d
			break
		}
		below += c
	}
	if threshold > est {
		parts = scanParallelParts(lo, hi, func(a, b int64) hamPart {
			return v.hamming(m, f, qc, a, b, threshold, plain, false)
		})
	}
	atThreshold := depth - below
	var best []scored
	for i := len(parts) - 1; i >= 0; i-- {
		c := parts[i].cands
		for j := len(c) - 1; j >= 0; j-- {
			d := int(c[j].d)
			if d > threshold {
				continue
			}
			if d == threshold {
				if atThreshold <= 0 {
					continue
				}
				atThreshold--
			}
			best = append(best, scored{int64(c[j].id), -float32(d)})
		}
	}
	if v.pool != nil {
		top := &topK{k: k}
		for _, b := range best {
			if s := v.slotOf[b.id]; s != 0 {
				top.offer(b.id, v.pool.mult[s]*dotQ8(qv, v.pool.vec(s)))
			}
		}
		m.mu.RUnlock()
		return positive(top.sorted()), cov, nil
	}
	m.mu.RUnlock()
	// Re-rank the candidates with their stored vectors.
	ids := make([]int64, len(best))
	for i, b := range best {
		ids[i] = b.id
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
		if dequantize(b, buf) {
			top.offer(id, dot(qv, buf))
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

// scanParallelParts splits [lo, hi) across goroutines.
func scanParallelParts[T any](lo, hi int64, fn func(a, b int64) T) []T {
	n := hi - lo
	if n <= 0 {
		return nil
	}
	parts := 2
	if n < 50000 {
		parts = 1
	}
	out := make([]T, parts)
	step := (n + int64(parts) - 1) / int64(parts)
	done := make(chan struct{}, parts)
	for p := 0; p < parts; p++ {
		a, b := lo+int64(p)*step, min(lo+int64(p+1)*step, hi)
		go func() {
			out[p] = fn(a, b)
			done <- struct{}{}
		}()
	}
	for range parts {
		<-done
	}
	return out
}

// hamCand is a candidate id with its Hamming distance.
type hamCand struct {
	id uint32
	d  uint16
}

// hamPart is one goroutine's share of a Hamming pass.
type hamPart struct {
	hist       []int     // distances of every vector in scope (when counting)
	considered int       // vectors in scope
	missing    int       // messages in scope without a vector
	cands      []hamCand // ids within the cut, ascending
}

// hamming scans ids [a, b): with count it fills the histogram and the
// counters, and it keeps the ids at distance ≤ cut. Callers hold mem.mu.
func (v *vecState) hamming(m *memState, f *filter, qc []uint64, a, b int64, cut int, plain, count bool) hamPart {
	p := hamPart{}
	if count {
		p.hist = make([]int, v.dim+1)
	}
	w := v.words
	if plain && w == 2 && count {
		return v.hammingDense(m, qc, a, b, cut)
	}
	for id := a; id < b; id++ {
		if !f.pass(m, id) {
			continue
		}
		if !v.hasVec(id) {
			if count {
				p.missing++
			}
			continue
		}
		c := v.codes[int(id)*w : int(id+1)*w]
		d := 0
		for i, x := range c {
			d += bits.OnesCount64(x ^ qc[i])
		}
		if count {
			p.hist[d]++
			p.considered++
		}
		if d <= cut {
			p.cands = append(p.cands, hamCand{uint32(id), uint16(d)})
		}
	}
	return p
}

// estimateCut guesses, from a sample of the ids in [lo, hi), a Hamming
// distance that admits about four times depth candidates, so that one pass
// usually collects every candidate. A guess that is too small costs a
// second pass, never a wrong answer. Callers hold mem.mu.
func (v *vecState) estimateCut(m *memState, f *filter, qc []uint64, lo, hi int64, depth int, plain bool) int {
	n := hi - lo
	if n <= 0 || int64(depth)*4 >= n {
		return v.dim // everything is (nearly) a candidate
	}
	const samples = 4096
	step := max(n/samples, 1)
	hist := make([]int, v.dim+1)
	for id := lo; id < hi; id += step {
		if !v.hasVec(id) {
			continue
		}
		if plain {
			if m.flags[id]&(fLive|fSearchable) != fLive|fSearchable {
				continue
			}
		} else if !f.pass(m, id) {
			continue
		}
		d := 0
		for i, x := range v.codes[int(id)*v.words : int(id+1)*v.words] {
			d += bits.OnesCount64(x ^ qc[i])
		}
		hist[d]++
	}
	// Each sampled id stands for step ids.
	want := int((4*int64(depth) + step - 1) / step)
	seen := 0
	for d, c := range hist {
		seen += c
		if seen >= want {
			return min(d+1, v.dim)
		}
	}
	return v.dim
}

// hammingDense is hamming over every id of [a, b) without filters, kept
// tight: codes are read in order, four ids per step, into four histograms
// used in turn (consecutive equal distances, from duplicate messages,
// would otherwise chain every increment through one memory word). An id
// without a vector has an all-zero code (see vecState), so its distance
// is the query's own popcount: those are taken back out of the histogram
// afterwards, and candidates are checked against the vector bitmap and
// the message flags as they are kept. Callers hold mem.mu.
func (v *vecState) hammingDense(m *memState, qc []uint64, a, b int64, cut int) hamPart {
	p := hamPart{hist: make([]int, v.dim+1)}
	q0, q1 := qc[0], qc[1]
	var h [4][129]int32
	keep := func(id int64, d int) {
		if v.hasVec(id) && m.flags[id]&(fLive|fSearchable) == fLive|fSearchable {
			p.cands = append(p.cands, hamCand{uint32(id), uint16(d)})
		}
	}
	cs := v.codes[2*a : 2*b]
	id := a
	for ; len(cs) >= 8; cs, id = cs[8:], id+4 {
		d0 := bits.OnesCount64(cs[0]^q0) + bits.OnesCount64(cs[1]^q1)
		d1 := bits.OnesCount64(cs[2]^q0) + bits.OnesCount64(cs[3]^q1)
		d2 := bits.OnesCount64(cs[4]^q0) + bits.OnesCount64(cs[5]^q1)
		d3 := bits.OnesCount64(cs[6]^q0) + bits.OnesCount64(cs[7]^q1)
		h[0][d0]++
		h[1][d1]++
		h[2][d2]++
		h[3][d3]++
		if min(d0, d1, d2, d3) <= cut {
			for k, d := range [4]int{d0, d1, d2, d3} {
				if d <= cut {
					keep(id+int64(k), d)
				}
			}
		}
	}
	for ; len(cs) >= 2; cs, id = cs[2:], id+1 {
		d := bits.OnesCount64(cs[0]^q0) + bits.OnesCount64(cs[1]^q1)
		h[0][d]++
		if d <= cut {
			keep(id, d)
		}
	}
	vectors := 0
	for wi := a >> 6; wi<<6 < b; wi++ {
		word := v.has[wi]
		if base := wi << 6; base < a {
			word &= ^uint64(0) << uint(a-base)
		}
		if end := (wi + 1) << 6; end > b {
			word &= ^uint64(0) >> uint(end-b)
		}
		vectors += bits.OnesCount64(word)
	}
	for d := range p.hist {
		p.hist[d] = int(h[0][d] + h[1][d] + h[2][d] + h[3][d])
	}
	p.hist[bits.OnesCount64(q0)+bits.OnesCount64(q1)] -= int(b-a) - vectors
	p.considered = vectors
	return p
}
