package index

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/tidings-mcp/tidings/internal/index/vecscan"
)

// vecState holds the vectors' in-memory part: one sign-bit code per
// message (dim bits of the vector minus the corpus mean) for the binary
// prefilter, and, while it fits in Options.VectorMemory, the int8 vectors
// themselves (the stored form) for re-ranking without touching SQLite.
//
// Stored vectors live in the vectors table as int8 with a per-vector scale
// (dim+4 bytes); codes live in veccodes chunks written in the same
// transaction. meta keeps vec_embedder (the Embedder.ID the vectors belong
// to), vec_dim, vec_center (the mean the codes are taken around), vec_upto
// (every searchable id ≤ upto has been embedded, except those queued in
// embed_queue) and vec_ready (a full pass under vec_embedder has
// completed).
type vecState struct {
	embID string
	dim   int
	words int      // uint64 words per code
	codes []uint64 // id*words … (id+1)*words
	has   []uint64 // bit per id: a vector is stored
	count int
	// center is subtracted before taking signs: the embedder's vectors
	// share a common direction, and bits taken around the mean separate
	// them far better (recall@10 0.93 → 0.99 at 800 candidates, measured).
	center []float32
	// pool holds the int8 vectors for re-ranking, each distinct vector
	// once, and slotOf[id] the slot of id's vector (0: none); both nil
	// while not loaded or over Options.VectorMemory.
	pool   *vecscan.Pool
	slotOf []uint32
	// budget is Options.VectorMemory as of loading the pool; overBudget
	// is set once the vectors did not fit (re-ranking then reads the
	// database until the state is reloaded).
	budget     int64
	overBudget bool
	upto       int64
	ready      bool
	dirty      map[int]bool
}

func (v *vecState) hasVec(id int64) bool {
	w := int(id >> 6)
	return w < len(v.has) && v.has[w]&(1<<(uint(id)&63)) != 0
}

func (v *vecState) slots() int { return len(v.codes) / max(v.words, 1) }

func (v *vecState) grow(id int64) {
	need := (int(id)/chunkSize + 1) * chunkSize
	if need > v.slots() {
		n := need
		if c := v.slots() * 5 / 4; c > n {
			n = (c/chunkSize + 1) * chunkSize
		}
		codes := make([]uint64, n*v.words)
		copy(codes, v.codes)
		v.codes = codes
		has := make([]uint64, n/64)
		copy(has, v.has)
		v.has = has
	}
	if v.slotOf != nil && need > len(v.slotOf) {
		slotOf := make([]uint32, v.slots())
		copy(slotOf, v.slotOf)
		v.slotOf = slotOf
	}
}

// inMemory reports whether candidates are re-ranked from the pool.
func (v *vecState) inMemory() bool { return v.pool != nil }

// memBytes is what the in-memory re-ranking vectors take.
func (v *vecState) memBytes() int64 {
	if v.pool == nil {
		return 0
	}
	return v.pool.Bytes() + int64(cap(v.slotOf))*4
}

// dropPool forgets the in-memory vectors (re-ranking then reads the
// database).
func (v *vecState) dropPool() { v.pool, v.slotOf = nil, nil }

// code writes the sign bits of vec−center into c.
func (v *vecState) code(vec []float32, c []uint64) {
	clear(c)
	for i, x := range vec {
		if v.center != nil {
			x -= v.center[i]
		}
		if x > 0 {
			c[i>>6] |= 1 << (uint(i) & 63)
		}
	}
}

// codeStored writes the code of a stored vector into c: the sign bits of
// its unit-length form minus center, as code computes them after
// vecscan.Dequantize, without materialising the float vector.
func (v *vecState) codeStored(stored []byte, c []uint64) {
	clear(c)
	if len(stored) != 4+v.dim {
		return
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(stored))
	q := stored[4:]
	var n float32
	for _, b := range q {
		x := float32(int8(b)) * scale
		n += x * x
	}
	inv := float32(1)
	if n > 0 {
		inv = float32(1 / math.Sqrt(float64(n)))
	}
	center := v.center
	if center == nil {
		center = make([]float32, len(q))
	}
	center = center[:len(q)]
	for i, b := range q {
		// x − center > 0 exactly when center − x is negative: the sign
		// bit, without a branch (x − x is +0, so equality gives 0).
		x := float32(int8(b)) * scale * inv
		c[i>>6] |= uint64(math.Float32bits(center[i]-x)>>31) << (uint(i) & 63)
	}
}

// set stores one vector for id from its stored (quantised) form.
func (v *vecState) set(id int64, stored []byte) {
	v.grow(id)
	v.codeStored(stored, v.codes[int(id)*v.words:int(id+1)*v.words])
	v.setRest(id, stored)
}

// setCoded is set with the code already computed (codeStored of stored,
// taken with this state's center).
func (v *vecState) setCoded(id int64, stored []byte, code []uint64) {
	v.grow(id)
	copy(v.codes[int(id)*v.words:int(id+1)*v.words], code)
	v.setRest(id, stored)
}

func (v *vecState) setRest(id int64, stored []byte) {
	if !v.hasVec(id) {
		v.count++
	}
	v.has[id>>6] |= 1 << (uint(id) & 63)
	if v.pool != nil {
		old := v.slotOf[id]
		v.slotOf[id] = v.pool.Add(stored)
		v.pool.Release(old)
		if v.memBytes() > v.budget {
			v.dropPool()
			v.overBudget = true
		}
	}
	v.dirty[int(id/chunkSize)] = true
}

func (v *vecState) drop(id int64) {
	if !v.hasVec(id) {
		return
	}
	v.count--
	v.has[id>>6] &^= 1 << (uint(id) & 63)
	clear(v.codes[int(id)*v.words : int(id+1)*v.words])
	if v.pool != nil {
		v.pool.Release(v.slotOf[id])
		v.slotOf[id] = 0
	}
	v.dirty[int(id/chunkSize)] = true
}

// chunk encoding: has-bits (chunkSize/8 bytes) then codes.
func (v *vecState) encodeChunk(c int) []byte {
	b := make([]byte, chunkSize/8+chunkSize*v.words*8)
	for i := 0; i < chunkSize/64; i++ {
		binary.LittleEndian.PutUint64(b[i*8:], v.has[c*chunkSize/64+i])
	}
	o := chunkSize / 8
	for i, w := range v.codes[c*chunkSize*v.words : (c+1)*chunkSize*v.words] {
		binary.LittleEndian.PutUint64(b[o+i*8:], w)
	}
	return b
}

func (v *vecState) decodeChunk(c int, b []byte) error {
	if len(b) != chunkSize/8+chunkSize*v.words*8 {
		return fmt.Errorf("vector code chunk %d: %d bytes, want %d", c, len(b), chunkSize/8+chunkSize*v.words*8)
	}
	v.grow(int64((c+1)*chunkSize - 1))
	for i := 0; i < chunkSize/64; i++ {
		old := v.has[c*chunkSize/64+i]
		nw := binary.LittleEndian.Uint64(b[i*8:])
		v.count += bits.OnesCount64(nw) - bits.OnesCount64(old)
		v.has[c*chunkSize/64+i] = nw
	}
	o := chunkSize / 8
	for i := range chunkSize * v.words {
		v.codes[c*chunkSize*v.words+i] = binary.LittleEndian.Uint64(b[o+i*8:])
	}
	// An id without a vector has an all-zero code (vecscan.Codes relies on
	// it); drop and grow keep it so, and a stored chunk is held to it too.
	for i := 0; i < chunkSize; i++ {
		if id := int64(c*chunkSize + i); !v.hasVec(id) {
			clear(v.codes[int(id)*v.words : int(id+1)*v.words])
		}
	}
	return nil
}

// scored is a candidate with a score (higher is better).
type scored struct {
	id    int64
	score float32
}

// topK keeps the k best scored items in a min-heap.
type topK struct {
	k     int
	items []scored
}

func (h *topK) Len() int { return len(h.items) }
func (h *topK) Less(i, j int) bool {
	if h.items[i].score != h.items[j].score {
		return h.items[i].score < h.items[j].score
	}
	return h.items[i].id < h.items[j].id // on ties the newer (larger id) wins
}
func (h *topK) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *topK) Push(x any)    { h.items = append(h.items, x.(scored)) }
func (h *topK) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// offer adds an item if it beats the current worst.
func (h *topK) offer(id int64, s float32) {
	if len(h.items) < h.k {
		heap.Push(h, scored{id, s})
		return
	}
	w := h.items[0]
	if s > w.score || (s == w.score && id > w.id) {
		h.items[0] = scored{id, s}
		heap.Fix(h, 0)
	}
}

// sorted returns the items best first.
func (h *topK) sorted() []scored {
	out := make([]scored, len(h.items))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(scored)
	}
	return out
}
