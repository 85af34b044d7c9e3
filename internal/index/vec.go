package index

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// vecState holds the vectors' in-memory part: one sign-bit code per
// message (dim bits) for the binary prefilter, and, while it fits in
// Options.VectorMemory, the float32 slab itself for exact scans.
//
// Stored vectors live in the vectors table as int8 with a per-vector scale
// (dim+4 bytes); codes live in veccodes chunks written in the same
// transaction. meta keeps vec_embedder (the Embedder.ID the vectors belong
// to), vec_dim, vec_upto (every searchable id ≤ upto has been embedded,
// except those queued in embed_queue) and vec_ready (a full pass under
// vec_embedder has completed).
type vecState struct {
	embID string
	dim   int
	words int      // uint64 words per code
	codes []uint64 // id*words … (id+1)*words
	has   []uint64 // bit per id: a vector is stored
	count int
	slab  []float32 // id*dim …; nil when over budget
	upto  int64
	ready bool
	dirty map[int]bool
}

func (v *vecState) hasVec(id int64) bool {
	w := int(id >> 6)
	return w < len(v.has) && v.has[w]&(1<<(uint(id)&63)) != 0
}

func (v *vecState) grow(id int64) {
	need := (int(id)/chunkSize + 1) * chunkSize
	if need*v.words > len(v.codes) {
		n := need
		if c := len(v.codes) / max(v.words, 1) * 5 / 4; c > n {
			n = (c/chunkSize + 1) * chunkSize
		}
		codes := make([]uint64, n*v.words)
		copy(codes, v.codes)
		v.codes = codes
		has := make([]uint64, n/64)
		copy(has, v.has)
		v.has = has
	}
	if v.slab != nil && need*v.dim > len(v.slab) {
		n := len(v.codes) / v.words
		slab := make([]float32, n*v.dim)
		copy(slab, v.slab)
		v.slab = slab
	}
}

// set stores one vector (unit length) for id.
func (v *vecState) set(id int64, vec []float32) {
	v.grow(id)
	c := v.codes[int(id)*v.words : int(id+1)*v.words]
	clear(c)
	for i, x := range vec {
		if x > 0 {
			c[i>>6] |= 1 << (uint(i) & 63)
		}
	}
	if !v.hasVec(id) {
		v.count++
	}
	v.has[id>>6] |= 1 << (uint(id) & 63)
	if v.slab != nil {
		copy(v.slab[int(id)*v.dim:], vec)
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
	if v.slab != nil {
		clear(v.slab[int(id)*v.dim : int(id+1)*v.dim])
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
	return nil
}

// quantize encodes a vector as a float32 scale followed by int8 values.
func quantize(vec []float32) []byte {
	var m float32
	for _, x := range vec {
		if a := float32(math.Abs(float64(x))); a > m {
			m = a
		}
	}
	b := make([]byte, 4+len(vec))
	scale := m / 127
	binary.LittleEndian.PutUint32(b, math.Float32bits(scale))
	if scale == 0 {
		return b
	}
	for i, x := range vec {
		b[4+i] = byte(int8(math.Round(float64(x / scale))))
	}
	return b
}

// dequantize decodes quantize's output into dst (len dim) and renormalises
// it to unit length.
func dequantize(b []byte, dst []float32) bool {
	if len(b) != 4+len(dst) {
		return false
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b))
	var n float32
	for i := range dst {
		x := float32(int8(b[4+i])) * scale
		dst[i] = x
		n += x * x
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(float64(n)))
		for i := range dst {
			dst[i] *= inv
		}
	}
	return true
}

// dot is an 8-way unrolled dot product; len(b) must be >= len(a).
func dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
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

// queryCode returns the sign-bit code of a query vector.
func queryCode(q []float32, words int) []uint64 {
	c := make([]uint64, words)
	for i, x := range q {
		if x > 0 {
			c[i>>6] |= 1 << (uint(i) & 63)
		}
	}
	return c
}

// hamming4 etc. are specialised popcount distances.
func hamming(a, b []uint64) int {
	d := 0
	for i := range a {
		d += bits.OnesCount64(a[i] ^ b[i])
	}
	return d
}
