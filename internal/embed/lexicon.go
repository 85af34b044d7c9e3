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
	prior []uint8   // 20·ln(1+SemCor tag count): a frequency hint
	vecs  []float32 // len(words) × dim, rows L2-normalised
	exc   map[string]string
	id    string // first 8 bytes of the data's SHA-256, hex
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
		vecs: make([]float32, n*dim), exc: map[string]string{}}
	scales := make([]float32, n)
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
		scales[i] = math.Float32frombits(le.Uint32(b4[:]))
	}
	q := make([]byte, dim)
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(r, q); err != nil {
			return nil, fmt.Errorf("lexicon vectors: %w", err)
		}
		row := lx.vecs[i*dim : (i+1)*dim]
		for j, x := range q {
			row[j] = float32(int8(x)) * scales[i]
		}
		normalize(row)
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

// lookup returns the row of w's dictionary form, or -1.
func (lx *lexicon) lookup(w string) int32 {
	if i, ok := lx.index[w]; ok {
		return i
	}
	b := textutil.Morph(w, func(s string) bool { _, ok := lx.index[s]; return ok }, func(s string) (string, bool) {
		v, ok := lx.exc[s]
		return v, ok
	})
	if b == "" {
		return -1
	}
	return lx.index[b]
}

func (lx *lexicon) vec(i int32) []float32 { return lx.vecs[int(i)*lx.dim : int(i+1)*lx.dim] }

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
