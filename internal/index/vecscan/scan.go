package vecscan

import "math/bits"

// Codes are the 1-bit codes of a set of vectors, one per id, as the index
// keeps them in memory (docs/index.md, "Vectors"): bit i of an id's code is
// the sign of dimension i of its vector minus the corpus mean. The slices
// are shared with their owner, not copied; callers keep them unchanged
// while a scan runs.
type Codes struct {
	Dim   int      // bits per code
	Words int      // uint64 words per code: (Dim+63)/64
	Codes []uint64 // id*Words … (id+1)*Words; all zero for an id without a vector
	Has   []uint64 // bit per id: a vector is stored
}

// has reports whether id has a vector.
func (v Codes) has(id int64) bool {
	w := int(id >> 6)
	return w < len(v.Has) && v.Has[w]&(1<<(uint(id)&63)) != 0
}

// Cand is a candidate id with the Hamming distance of its code to the
// query's.
type Cand struct {
	ID   int64
	Dist int
}

// Nearest is the outcome of a Nearest scan.
type Nearest struct {
	// Cands are the depth codes nearest to the query (fewer when the scope
	// holds fewer vectors), newest (largest id) first within each part of
	// the range; ties at the cut go to the newest ids.
	Cands []Cand
	// Considered counts the vectors in scope, Missing the ids in scope
	// without a vector.
	Considered, Missing int
}

// Nearest scans the ids [lo, hi) for which in(id) holds and returns the
// depth whose codes are nearest to qc (len Words) by Hamming distance, ties
// at the cut going to the newest ids. plain promises that every id with a
// vector is in scope (the index stores vectors only for live, searchable
// messages, so a query without time, conversation or sender filters is
// plain): the scan then counts distances without calling in and checks in
// only for the ids it keeps, and Missing is not counted when Words is 2.
//
// One pass over the codes counts every distance (a histogram: distances
// have few distinct values) and keeps the ids within an estimated cut; when
// the histogram shows the true cut is larger, a second pass collects up to
// it. The range is split across two goroutines when it is large; in must be
// safe for concurrent use.
func (v Codes) Nearest(qc []uint64, lo, hi int64, depth int, in func(id int64) bool, plain bool) Nearest {
	var out Nearest
	est := v.estimateCut(in, qc, lo, hi, depth)
	parts := scanParallelParts(lo, hi, func(a, b int64) hamPart {
		return v.hamming(in, qc, a, b, est, plain, true)
	})
	hist := make([]int, v.Dim+1)
	for _, p := range parts {
		out.Considered += p.considered
		out.Missing += p.missing
		for d, c := range p.hist {
			hist[d] += c
		}
	}
	// The distance threshold that admits depth candidates; ties at the
	// threshold go to the newest ids.
	threshold, below := v.Dim, 0
	for d, c := range hist {
		if below+c >= depth {
			threshold = d
			break
		}
		below += c
	}
	if threshold > est {
		parts = scanParallelParts(lo, hi, func(a, b int64) hamPart {
			return v.hamming(in, qc, a, b, threshold, plain, false)
		})
	}
	atThreshold := depth - below
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
			out.Cands = append(out.Cands, Cand{int64(c[j].id), d})
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
// counters, and it keeps the ids at distance ≤ cut.
func (v Codes) hamming(in func(id int64) bool, qc []uint64, a, b int64, cut int, plain, count bool) hamPart {
	p := hamPart{}
	if count {
		p.hist = make([]int, v.Dim+1)
	}
	w := v.Words
	if plain && w == 2 && count {
		return v.hammingDense(in, qc, a, b, cut)
	}
	for id := a; id < b; id++ {
		if !in(id) {
			continue
		}
		if !v.has(id) {
			if count {
				p.missing++
			}
			continue
		}
		c := v.Codes[int(id)*w : int(id+1)*w]
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
// second pass, never a wrong answer.
func (v Codes) estimateCut(in func(id int64) bool, qc []uint64, lo, hi int64, depth int) int {
	n := hi - lo
	if n <= 0 || int64(depth)*4 >= n {
		return v.Dim // everything is (nearly) a candidate
	}
	const samples = 4096
	step := max(n/samples, 1)
	hist := make([]int, v.Dim+1)
	for id := lo; id < hi; id += step {
		if !v.has(id) || !in(id) {
			continue
		}
		d := 0
		for i, x := range v.Codes[int(id)*v.Words : int(id+1)*v.Words] {
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
			return min(d+1, v.Dim)
		}
	}
	return v.Dim
}

// hammingDense is hamming over every id of [a, b) of a plain scope, kept
// tight: codes are read in order, four ids per step, into four histograms
// used in turn (consecutive equal distances, from duplicate messages,
// would otherwise chain every increment through one memory word). An id
// without a vector has an all-zero code (see Codes), so its distance
// is the query's own popcount: those are taken back out of the histogram
// afterwards, and candidates are checked against the vector bitmap and
// in as they are kept.
func (v Codes) hammingDense(in func(id int64) bool, qc []uint64, a, b int64, cut int) hamPart {
	p := hamPart{hist: make([]int, v.Dim+1)}
	q0, q1 := qc[0], qc[1]
	var h [4][129]int32
	keep := func(id int64, d int) {
		if v.has(id) && in(id) {
			p.cands = append(p.cands, hamCand{uint32(id), uint16(d)})
		}
	}
	cs := v.Codes[2*a : 2*b]
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
		word := v.Has[wi]
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
