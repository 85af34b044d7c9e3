package index

import (
	"bytes"
	"hash/maphash"
	"math"
	"runtime"
	"unsafe"
)

// vecPool holds the int8 vectors used to re-rank semantic candidates,
// each distinct vector once: messages with the same words ("ok", "lol",
// "Thanks!", a repeated reminder) have identical vectors, so a message id
// maps to a slot (vecState.slotOf) and slots are shared and
// reference-counted. The values live outside the Go heap (offheap): a
// pointer-free slab of up to Options.VectorMemory on the heap would double
// the garbage collector's heap goal, and with it the process's RSS.
type vecPool struct {
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

func newVecPool(dim int) *vecPool {
	// Slot 0 is never used: slotOf 0 means "no vector".
	p := &vecPool{dim: dim, byHash: map[uint64]uint32{}, seed: maphash.MakeSeed(),
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

func (p *vecPool) memRef() *offheapRef {
	if p.ref == nil {
		p.ref = &offheapRef{}
	}
	p.ref.m = p.mem
	return p.ref
}

// bytes is the memory the pool holds.
func (p *vecPool) bytes() int64 {
	return int64(len(p.mem.b)) + int64(cap(p.mult))*4 + int64(cap(p.refs))*4 + int64(cap(p.hashes))*8 + int64(len(p.byHash))*24
}

// vec returns the values of slot s.
func (p *vecPool) vec(s uint32) []int8 {
	b := p.mem.b[int(s)*p.dim : int(s+1)*p.dim]
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

// add returns the slot of a stored vector (see quantize: a scale, then dim
// int8 values; the scale does not change a cosine, so only the values
// count), taking a reference to an identical vector when there is one.
// It returns 0 for a malformed vector.
func (p *vecPool) add(stored []byte) uint32 {
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

// release drops one reference to slot s.
func (p *vecPool) release(s uint32) {
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
