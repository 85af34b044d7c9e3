package vecscan

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// testCodes builds n ids of dim-bit random codes: ids with noVec(id) have
// no vector (an all-zero code, as the index keeps them), and code(id), when
// not nil, overrides an id's code.
func testCodes(r *rand.Rand, dim int, n int64, noVec func(int64) bool, code func(int64) []uint64) Codes {
	words := (dim + 63) / 64
	v := Codes{Dim: dim, Words: words, Codes: make([]uint64, int(n)*words), Has: make([]uint64, (n+63)/64)}
	for id := int64(1); id < n; id++ {
		if noVec(id) {
			continue
		}
		c := v.Codes[int(id)*words : int(id+1)*words]
		for i := range c {
			c[i] = r.Uint64()
		}
		if code != nil {
			if x := code(id); x != nil {
				copy(c, x)
			}
		}
		if dim%64 != 0 {
			c[words-1] &= 1<<(uint(dim)%64) - 1
		}
		v.Has[id>>6] |= 1 << (uint(id) & 63)
	}
	return v
}

func distance(v Codes, id int64, qc []uint64) int {
	d := 0
	for i, x := range v.Codes[int(id)*v.Words : int(id+1)*v.Words] {
		d += bits.OnesCount64(x ^ qc[i])
	}
	return d
}

// TestHammingDenseMatchesFiltered checks the unfiltered fast Hamming pass
// against the general one (histogram, counts and candidates), with ids
// without vectors, out of scope, and with an all-zero code among them.
func TestHammingDenseMatchesFiltered(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n = 20000
	noVec := func(id int64) bool { return id%11 == 0 || id%13 == 0 }
	zero := make([]uint64, 2)
	v := testCodes(r, 128, n, noVec, func(id int64) []uint64 {
		if id%17 == 0 {
			return zero
		}
		return nil
	})
	in := func(id int64) bool { return id%13 != 0 } // a deleted message: no vector, not in scope
	qc := []uint64{r.Uint64(), r.Uint64()}
	for _, rng := range [][2]int64{{1, n}, {5, 9999}, {64, 128}, {70, 75}} {
		for _, cut := range []int{40, 55, 64, 128} {
			got := v.hammingDense(in, qc, rng[0], rng[1], cut)
			want := v.hamming(in, qc, rng[0], rng[1], cut, false, true)
			if got.considered != want.considered || !slices.Equal(got.hist, want.hist) {
				t.Fatalf("range %v cut %d: dense considered %d hist %v, want %d %v", rng, cut, got.considered, got.hist, want.considered, want.hist)
			}
			if !slices.Equal(got.cands, want.cands) {
				t.Fatalf("range %v cut %d: dense %d candidates, want %d", rng, cut, len(got.cands), len(want.cands))
			}
		}
	}
}

// TestNearestIsTheExactHammingTopDepth checks Nearest against a brute-force
// ranking (distance, then newest id): the same ids, whichever path runs —
// the dense two-word pass or the general one, a plain or a filtered scope,
// one goroutine or two, one pass or a second one when the sampled estimate
// of the cut was too small.
func TestNearestIsTheExactHammingTopDepth(t *testing.T) {
	type tc struct {
		name    string
		dim     int
		n       int64
		lo, hi  int64
		depth   int
		plain   bool
		in      func(int64) bool
		nearish func(id int64) bool // ids whose code is the query's own (distance 0)
	}
	all := func(int64) bool { return true }
	odd := func(id int64) bool { return id%2 == 1 }
	cases := []tc{
		{name: "plain dense", dim: 128, n: 20000, lo: 1, hi: 20000, depth: 300, plain: true, in: all},
		{name: "plain dense two goroutines", dim: 128, n: 120000, lo: 1, hi: 120000, depth: 800, plain: true, in: all},
		{name: "plain three words", dim: 160, n: 20000, lo: 1, hi: 20000, depth: 300, plain: true, in: all},
		{name: "filtered", dim: 128, n: 20000, lo: 1, hi: 20000, depth: 300, in: odd},
		{name: "filtered sub-range", dim: 128, n: 20000, lo: 777, hi: 5000, depth: 100, in: odd},
		{name: "depth beyond scope", dim: 128, n: 2000, lo: 1, hi: 2000, depth: 5000, plain: true, in: all},
		// The sample (every 24th id from lo) sees only distance 0, so the
		// estimated cut is 1 while depth needs more: a second pass runs.
		{name: "estimate too small", dim: 128, n: 100001, lo: 1, hi: 100001, depth: 10000, plain: true, in: all,
			nearish: func(id int64) bool { return (id-1)%24 == 0 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, uint64(c.n)))
			qc := make([]uint64, (c.dim+63)/64)
			for i := range qc {
				qc[i] = r.Uint64()
			}
			if c.dim%64 != 0 {
				qc[len(qc)-1] &= 1<<(uint(c.dim)%64) - 1
			}
			noVec := func(id int64) bool { return id%11 == 0 }
			var code func(int64) []uint64
			if c.nearish != nil {
				code = func(id int64) []uint64 {
					if c.nearish(id) {
						return qc
					}
					return nil
				}
			}
			v := testCodes(r, c.dim, c.n, noVec, code)
			var want []Cand
			missing := 0
			for id := c.lo; id < c.hi; id++ {
				if !c.in(id) {
					continue
				}
				if !v.has(id) {
					missing++
					continue
				}
				want = append(want, Cand{id, distance(v, id, qc)})
			}
			considered := len(want)
			slices.SortFunc(want, func(a, b Cand) int {
				return cmp.Or(cmp.Compare(a.Dist, b.Dist), cmp.Compare(b.ID, a.ID))
			})
			want = want[:min(c.depth, len(want))]
			got := v.Nearest(qc, c.lo, c.hi, c.depth, c.in, c.plain)
			if got.Considered != considered {
				t.Errorf("considered %d, want %d", got.Considered, considered)
			}
			if !(c.plain && v.Words == 2) && got.Missing != missing {
				t.Errorf("missing %d, want %d", got.Missing, missing)
			}
			byID := func(a, b Cand) int { return cmp.Compare(a.ID, b.ID) }
			slices.SortFunc(want, byID)
			gotSorted := slices.SortedFunc(slices.Values(got.Cands), byID)
			if !slices.Equal(gotSorted, want) {
				t.Fatalf("%d candidates, want %d (first got %v, want %v)", len(gotSorted), len(want), gotSorted[:min(5, len(gotSorted))], want[:min(5, len(want))])
			}
		})
	}
}

// TestPoolSharesIdenticalVectors pins the pool's contract: identical stored
// vectors share one slot until the last reference is released, a freed
// slot is reused, a malformed vector gets slot 0, and Score is the cosine.
func TestPoolSharesIdenticalVectors(t *testing.T) {
	p := NewPool(4)
	a := Quantize([]float32{1, 0, 0, 0})
	b := Quantize([]float32{0, 2, 0, 0})
	sa := p.Add(a)
	if sb := p.Add(b); sb == sa || sb == 0 || sa == 0 {
		t.Fatalf("distinct vectors: slots %d and %d", sa, sb)
	}
	if s := p.Add(Quantize([]float32{3, 0, 0, 0})); s != sa {
		t.Fatalf("a vector with the same values (another scale) got slot %d, want shared %d", s, sa)
	}
	if s := p.Add([]byte{1, 2, 3}); s != 0 {
		t.Fatalf("malformed vector got slot %d, want 0", s)
	}
	if got := p.Score(sa, []float32{1, 0, 0, 0}); got < 0.999 || got > 1.001 {
		t.Fatalf("cosine with itself %v, want 1", got)
	}
	if got := p.Score(sa, []float32{0, 1, 0, 0}); got != 0 {
		t.Fatalf("cosine with an orthogonal vector %v, want 0", got)
	}
	p.Release(sa)
	if s := p.Add(b); s == sa {
		t.Fatalf("slot %d reused while still referenced", sa)
	}
	p.Release(sa)
	if s := p.Add(Quantize([]float32{0, 0, 1, 0})); s != sa {
		t.Fatalf("new vector got slot %d, want freed slot %d", s, sa)
	}
}

// TestQuantizeRoundTrip checks that Dequantize(Quantize(v)) is v's unit
// vector within the int8 step, and that the zero vector stays zero.
func TestQuantizeRoundTrip(t *testing.T) {
	for _, v := range [][]float32{{0, 0, 0}, {1, -2, 3}, {0.001, 0, -0.5}} {
		q := Quantize(v)
		got := make([]float32, len(v))
		if !Dequantize(q, got) {
			t.Fatalf("%v: Dequantize refused its own encoding", v)
		}
		n := Dot(v, v)
		for i, x := range v {
			want := float32(0)
			if n > 0 {
				want = x / float32(math.Sqrt(float64(n)))
			}
			if d := got[i] - want; d > 0.02 || d < -0.02 {
				t.Fatalf("%v: got %v", v, got)
			}
		}
	}
	if Dequantize([]byte{0, 0, 0, 0, 1}, make([]float32, 2)) {
		t.Fatal("Dequantize accepted a vector of another dimension")
	}
}
