package embed

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"sync"
	"unsafe"

	"github.com/tidings-mcp/tidings/internal/embed/internal/textutil"
)

// lexiconData is the compact English lexicon derived from Princeton WordNet
// 3.0 by internal/lexgen (see docs/embeddings.md for the licence notice).
//
//go:embed data/lexicon.bin.gz
var lexiconData []byte

// lexicon holds unit-length word vectors for dictionary forms of English
// words plus the irregular inflections that map to them.
type lexicon struct {
	dim   int
	words []string
	index map[string]int32
	prior []uint8 // 20·ln(1+SemCor tag count): a frequency hint
	// q holds the int8 vectors (len(words) × dim) and s one scale per
	// word such that q·s has unit length. Keeping int8 in memory costs a
	// quarter of float32 (4.9 MB instead of 19.5 MB).
	q   []int8
	s   []float32
	exc map[string]string
	id  string // first 8 bytes of the data's SHA-256, hex
}

var (
	lexOnce sync.Once
	lexVal  *lexicon
	lexErr  error
)

func builtinLexicon() (*lexicon, error) {
	lexOnce.Do(func() { lexVal, lexErr = parseLexicon(lexiconData) })
	return lexVal, lexErr
}

func parseLexicon(data []byte) (*lexicon, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("lexicon: %w", err)
	}
	r := bufio.NewReader(zr)
	le := binary.LittleEndian
	var hdr [4 + 1 + 2 + 4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("lexicon header: %w", err)
	}
	if string(hdr[:4]) != "TDLX" || hdr[4] != 1 {
		return nil, fmt.Errorf("lexicon: bad magic or version")
	}
	dim := int(le.Uint16(hdr[5:]))
	n := int(le.Uint32(hdr[7:]))
	if dim == 0 || dim > 4096 || n > 1<<22 {
		return nil, fmt.Errorf("lexicon: implausible size %d×%d", n, dim)
	}
	lx := &lexicon{dim: dim, words: make([]string, n), index: make(map[string]int32, n), prior: make([]uint8, n),
		q: make([]int8, n*dim), s: make([]float32, n), exc: map[string]string{}}
	readStr := func() (string, error) {
		l, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		b := make([]byte, l)
		_, err = io.ReadFull(r, b)
		return string(b), err
	}
	var b4 [4]byte
	for i := 0; i < n; i++ {
		w, err := readStr()
		if err != nil {
			return nil, fmt.Errorf("lexicon word %d: %w", i, err)
		}
		p, err := r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("lexicon word %d: %w", i, err)
		}
		if _, err := io.ReadFull(r, b4[:]); err != nil {
			return nil, fmt.Errorf("lexicon word %d: %w", i, err)
		}
		lx.words[i], lx.prior[i] = w, p
		lx.index[w] = int32(i)
		// b4 holds the stored scale; the unit scale is derived from q.
	}
	for i := 0; i < n; i++ {
		row := lx.q[i*dim : (i+1)*dim]
		if _, err := io.ReadFull(r, unsafeBytes(row)); err != nil {
			return nil, fmt.Errorf("lexicon vectors: %w", err)
		}
		lx.s[i] = unitScale(row)
	}
	if _, err := io.ReadFull(r, b4[:]); err != nil {
		return nil, fmt.Errorf("lexicon exceptions: %w", err)
	}
	ne := int(le.Uint32(b4[:]))
	for i := 0; i < ne; i++ {
		k, err := readStr()
		if err != nil {
			return nil, fmt.Errorf("lexicon exceptions: %w", err)
		}
		v, err := readStr()
		if err != nil {
			return nil, fmt.Errorf("lexicon exceptions: %w", err)
		}
		lx.exc[k] = v
	}
	sum := sha256.Sum256(data)
	lx.id = hex.EncodeToString(sum[:8])
	return lx, nil
}

// row returns the row of s or of the word its exception/alias entry
// names ("teeth" → "tooth", "relocate" → "move").
func (lx *lexicon) row(s string) (int32, bool) {
	if i, ok := lx.index[s]; ok {
		return i, true
	}
	if b, ok := lx.exc[s]; ok {
		if i, ok := lx.index[b]; ok {
			return i, true
		}
	}
	return -1, false
}

// lookup returns the row of w's dictionary form, or -1.
func (lx *lexicon) lookup(w string) int32 {
	if i, ok := lx.row(w); ok {
		return i
	}
	b := textutil.Morph(w, func(s string) bool { _, ok := lx.row(s); return ok }, nil)
	if b == "" {
		return -1
	}
	i, _ := lx.row(b)
	return i
}

func (lx *lexicon) qrow(i int32) []int8 { return lx.q[int(i)*lx.dim : int(i+1)*lx.dim] }

// addTo adds w × (word i's unit vector) to acc.
func (lx *lexicon) addTo(i int32, w float32, acc []float32) { addScaled(acc, lx.qrow(i), w*lx.s[i]) }

// unitScale returns the scale that gives q unit length (0 for a zero row).
func unitScale(q []int8) float32 {
	n := 0.0
	for _, x := range q {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return 0
	}
	return float32(1 / math.Sqrt(n))
}

// addScaled adds w·q to acc.
func addScaled(acc []float32, q []int8, w float32) {
	acc = acc[:len(q)]
	for j, x := range q {
		acc[j] += w * float32(x)
	}
}

// unsafeBytes views an int8 slice as bytes for reading.
func unsafeBytes(q []int8) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(q))), len(q))
}

// normalize scales v to unit length in place; a zero vector stays zero.
func normalize(v []float32) {
	s := float32(0)
	for _, x := range v {
		s += x * x
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(float64(s)))
	for i := range v {
		v[i] *= inv
	}
}

func dot(a, b []float32) float32 {
	s := float32(0)
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
