package vecscan

import (
	"bytes"
	"hash/maphash"
	"math"
	"runtime"
	"unsafe"
)

// Pool holds the int8 vectors used to re-rank semantic candidates,
// each distinct vector once: messages with the same words ("ok", "lol",
// "Thanks!", a repeated reminder) have identical vectors, so a message id
// maps to a slot (the index keeps id → slot) and slots are shared and
// reference-counted. Slot 0 is never used: it means "no vector". A Pool is
// not safe for concurrent mutation; readers may share it under the
// caller's lock. The values live outside the Go heap (offheap): a
// pointer-free slab of up to Options.VectorMemory on the heap would double
// the garbage collector's heap goal, and with it the process's RSS.
type Pool struct {
	dim    int
	mem    *offheap  // slot s holds dim int8 values at s*dim
	mult   []float32 // per slot: 1/‖v‖, so cosine = mult·Σ q·v for a unit query
	refs   []uint32  // per slot: ids using it (0: free)
	hashes []uint64  // per slot: hash of its values
	free   []uint32  // free slots
	byHash map[uint64]uint32
	seed   maphash.Seed
	ref    *offheapRef
}

// NewPool returns an empty pool of dim-dimensional vectors.
func NewPool(dim int) *Pool {
	p := &Pool{dim: dim, byHash: map[uint64]uint32{}, seed: maphash.MakeSeed(),
		mult: []float32{0}, refs: []uint32{0}, hashes: []uint64{0}}
	p.mem = newOffheap(1024 * dim)
	// The slab goes back to the OS when the pool is dropped (a reload,
	// another embedder); readers may still hold the old state, so this is
	// left to a cleanup rather than done at the swap.
	runtime.AddCleanup(p, func(m *offheapRef) { m.m.release() }, p.memRef())
	return p
}

// offheapRef lets the cleanup find the current slab after it has grown.
type offheapRef struct{ m *offheap }

func (p *Pool) memRef() *offheapRef {
	if p.ref == nil {
		p.ref = &offheapRef{}
	}
	p.ref.m = p.mem
	return p.ref
}

// Bytes is the memory the pool holds.
func (p *Pool) Bytes() int64 {
	return int64(len(p.mem.b)) + int64(cap(p.mult))*4 + int64(cap(p.refs))*4 + int64(cap(p.hashes))*8 + int64(len(p.byHash))*24
}

// Vec returns the values of slot s (read-only).
func (p *Pool) Vec(s uint32) []int8 {
	b := p.mem.b[int(s)*p.dim : int(s+1)*p.dim]
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

// Mult returns 1/‖v‖ of slot s's values v (0 for the zero vector).
func (p *Pool) Mult(s uint32) float32 { return p.mult[s] }

// Score is the cosine similarity of the unit query q with slot s's vector.
func (p *Pool) Score(s uint32, q []float32) float32 { return p.mult[s] * DotQ8(q, p.Vec(s)) }

// Add returns the slot of a stored vector (see Quantize: a scale, then dim
// int8 values; the scale does not change a cosine, so only the values
// count), taking a reference to an identical vector when there is one.
// It returns 0 for a malformed vector.
func (p *Pool) Add(stored []byte) uint32 {
	if len(stored) != 4+p.dim {
		return 0
	}
	vals := stored[4:]
	h := maphash.Bytes(p.seed, vals)
	if s, ok := p.byHash[h]; ok && p.refs[s] > 0 && bytes.Equal(p.mem.b[int(s)*p.dim:int(s+1)*p.dim], vals) {
		p.refs[s]++
		return s
	}
	var s uint32
	if k := len(p.free); k > 0 {
		s, p.free = p.free[k-1], p.free[:k-1]
	} else {
		s = uint32(len(p.refs))
		if need := (int(s) + 1) * p.dim; need > len(p.mem.b) {
			old := p.mem
			p.mem = old.grow(max(need, 2*len(old.b)))
			p.ref.m = p.mem
		}
		p.mult = append(p.mult, 0)
		p.refs = append(p.refs, 0)
		p.hashes = append(p.hashes, 0)
	}
	copy(p.mem.b[int(s)*p.dim:int(s+1)*p.dim], vals)
	var n int64
	for _, b := range vals {
		x := int64(int8(b))
		n += x * x
	}
	p.mult[s] = 0
	if n > 0 {
		p.mult[s] = float32(1 / math.Sqrt(float64(n)))
	}
	p.refs[s], p.hashes[s] = 1, h
	p.byHash[h] = s
	return s
}

// Release drops one reference to slot s; 0 and unused slots are ignored.
func (p *Pool) Release(s uint32) {
	if s == 0 || int(s) >= len(p.refs) || p.refs[s] == 0 {
		return
	}
	p.refs[s]--
	if p.refs[s] == 0 {
		if p.byHash[p.hashes[s]] == s {
			delete(p.byHash, p.hashes[s])
		}
		p.free = append(p.free, s)
	}
}
