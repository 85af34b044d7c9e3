package embed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tidings-mcp/tidings/internal/embed/internal/linalg"
	"github.com/tidings-mcp/tidings/internal/embed/internal/textutil"
)

// builtinVersion changes whenever the built-in algorithm changes the
// vectors it produces; it is part of ID.
const builtinVersion = "v2"

// Builtin is the default embedder. Each word maps to a unit vector from
// the WordNet-derived lexicon; Fit blends in what the user's own corpus
// says about each word (the lexicon vectors of the words it co-occurs with,
// weighted by positive PMI), gives corpus-only words (names, slang, brands)
// a vector the same way, and learns smooth-inverse-frequency word weights.
// A sentence vector is the weighted mean of its word vectors, normalised.
// Unknown words fall back to the closest known spelling by character
// trigrams (typos), and texting abbreviations are expanded first.
type Builtin struct {
	lex  *lexicon
	opts BuiltinOptions
	st   atomic.Pointer[builtinState]
}

// BuiltinOptions are the built-in embedder's tuning knobs. The zero value
// selects the defaults documented on each field; they were chosen by the
// measurements in docs/embeddings.md.
type BuiltinOptions struct {
	// MaxFitDocs caps the documents Fit reads into its sample (reservoir
	// sampling over all of them). Default 200 000.
	MaxFitDocs int
	// Window is the co-occurrence window in content words. Default 5.
	Window int
	// MinCount is the minimum corpus frequency for a word to get a fitted
	// vector. Default 3.
	MinCount int
	// ContextWeight is how much the corpus context moves a lexicon word's
	// vector (0 keeps the lexicon vector). Default 0.5.
	ContextWeight float64
	// SIF is the smooth-inverse-frequency constant a in a/(a+p(w)).
	// Default 1e-3.
	SIF float64
	// PriorFloor raises a fitted word's probability to at least
	// PriorFloor × its general-English probability (from the lexicon's
	// SemCor counts) before computing its SIF weight, so a common word the
	// user's corpus happens to use rarely still weighs little. Default 3;
	// negative disables it.
	PriorFloor float64
	// RemovePC subtracts the corpus's common direction from every vector
	// (the second step of SIF embeddings). Default false.
	RemovePC bool
	// NoLexicon disables the lexicon: word vectors come from the corpus
	// alone (PPMI + randomized truncated SVD). For measurements.
	NoLexicon bool
}

func (o BuiltinOptions) withDefaults() BuiltinOptions {
	if o.MaxFitDocs <= 0 {
		o.MaxFitDocs = 200_000
	}
	if o.Window <= 0 {
		o.Window = 5
	}
	if o.MinCount <= 0 {
		o.MinCount = 3
	}
	if o.ContextWeight == 0 {
		o.ContextWeight = 0.5
	}
	if o.SIF <= 0 {
		o.SIF = 1e-3
	}
	if o.PriorFloor == 0 {
		o.PriorFloor = 3
	}
	return o
}

// builtinState is immutable once published; Fit and UnmarshalBinary
// replace it whole, so Embed never sees a half-built state.
type builtinState struct {
	id      string
	fitted  bool
	words   []string
	weights []float32
	q       []int8    // quantised vectors as persisted (len(words) × dim)
	scales  []float32 // stored scale per word, as persisted
	unit    []float32 // per word: the scale that gives q unit length
	rows    map[string]int32
	// aliases are inflected corpus forms mapped to the row of their
	// dictionary form ("owes" → "owe"), persisted so lookups stay direct.
	aliases map[string]int32
	// unseenWeight is the weight of a lexicon word the corpus never had.
	unseenWeight float32
	// pc is the corpus's common direction (first principal component of
	// its sentence vectors, unit length), removed from every vector; nil
	// when unfitted.
	pc []float32

	triOnce sync.Once
	tri     *trigramIndex
}

// NewBuiltin returns the built-in embedder with default options, unfitted:
// it already embeds with the lexicon alone.
func NewBuiltin() (*Builtin, error) { return NewBuiltinWithOptions(BuiltinOptions{}) }

// NewBuiltinWithOptions returns the built-in embedder with explicit options.
func NewBuiltinWithOptions(o BuiltinOptions) (*Builtin, error) {
	lx, err := builtinLexicon()
	if err != nil {
		return nil, fmt.Errorf("builtin embedder: %w", err)
	}
	b := &Builtin{lex: lx, opts: o.withDefaults()}
	b.st.Store(&builtinState{id: b.baseID(), unseenWeight: 1})
	return b, nil
}

func (b *Builtin) baseID() string {
	id := fmt.Sprintf("builtin/%s/lex-%s/d%d", builtinVersion, b.lex.id, b.lex.dim)
	if b.opts != (BuiltinOptions{}).withDefaults() {
		sum := sha256.Sum256(fmt.Appendf(nil, "%+v", b.opts))
		id += "/opt-" + hex.EncodeToString(sum[:4])
	}
	return id
}

// ID implements Embedder; it includes a hash of the fitted state.
func (b *Builtin) ID() string { return b.st.Load().id }

// Dim implements Embedder.
func (b *Builtin) Dim() int { return b.lex.dim }

// Embed implements Embedder.
func (b *Builtin) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	st := b.st.Load()
	out := make([][]float32, len(texts))
	dim := b.lex.dim
	slab := make([]float32, len(texts)*dim)
	for i, t := range texts {
		if i&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := slab[i*dim : (i+1)*dim : (i+1)*dim]
		b.embedOne(st, t, v)
		out[i] = v
	}
	return out, nil
}

func (b *Builtin) embedOne(st *builtinState, text string, acc []float32) {
	found := false
	add := func(w string) {
		if textutil.IsStopword(w) || w[0] >= '0' && w[0] <= '9' {
			return
		}
		q, wt := b.wordVec(st, w)
		if q == nil {
			return
		}
		found = true
		addScaled(acc, q, wt)
	}
	textutil.MessageWords(text, func(w string) bool {
		if exp, ok := slang[w]; ok {
			for _, e := range exp {
				add(e)
			}
			return true
		}
		add(w)
		return true
	})
	if !found {
		// Only stop-words, numbers or unknown words: fall back to a hashed
		// bag of words so identical short texts still match each other.
		textutil.MessageWords(text, func(w string) bool {
			hashedVec(w, acc)
			return true
		})
	} else if st.pc != nil {
		d := dot(acc, st.pc)
		for j, x := range st.pc {
			acc[j] -= d * x
		}
	}
	normalize(acc)
}

// wordVec returns w's int8 vector and the factor (weight × unit scale)
// to add it with, or nil.
func (b *Builtin) wordVec(st *builtinState, w string) ([]int8, float32) {
	if r, ok := st.rows[w]; ok {
		return st.row(r, b.lex.dim), st.weights[r] * st.unit[r]
	}
	if r, ok := st.aliases[w]; ok {
		return st.row(r, b.lex.dim), st.weights[r] * st.unit[r]
	}
	if !b.opts.NoLexicon {
		if i := b.lex.lookup(w); i >= 0 {
			if st.fitted {
				// The corpus may know the dictionary form ("owes" → "owe").
				if r, ok := st.rows[b.lex.words[i]]; ok {
					return st.row(r, b.lex.dim), st.weights[r] * st.unit[r]
				}
				return b.lex.qrow(i), st.unseenWeight * b.floorWeight(i) * b.lex.s[i]
			}
			return b.lex.qrow(i), b.priorWeight(i) * b.lex.s[i]
		}
	}
	if len(w) < 4 {
		return nil, 0
	}
	// A misspelling of a known word.
	st.triOnce.Do(func() { st.tri = b.buildTrigrams(st) })
	if q, unit, score := st.tri.closest(w); q != nil {
		return q, float32(score) * st.unseenWeight * unit
	}
	return nil, 0
}

func (st *builtinState) row(r int32, dim int) []int8 { return st.q[int(r)*dim : int(r+1)*dim] }

// priorP estimates a word's probability in general English from the
// lexicon's SemCor frequency hint.
func (b *Builtin) priorP(i int32) float64 {
	return math.Expm1(float64(b.lex.prior[i])/20) / 250_000
}

// priorWeight estimates a smooth-inverse-frequency weight for an unfitted
// embedder from the lexicon's SemCor frequency hint.
func (b *Builtin) priorWeight(i int32) float32 {
	return float32(b.opts.SIF / (b.opts.SIF + b.priorP(i)))
}

// floorWeight is the SIF weight a fitted embedder gives a lexicon word the
// corpus never had: its corpus frequency is 0, so only the general-English
// floor (PriorFloor) lowers it.
func (b *Builtin) floorWeight(i int32) float32 {
	if b.opts.PriorFloor <= 0 {
		return 1
	}
	return float32(b.opts.SIF / (b.opts.SIF + b.opts.PriorFloor*b.priorP(i)))
}

// hashedVec adds a pseudo-random vector with components in [-1, 1)
// determined by w (FNV-1a seeding splitmix64), so identical texts made only
// of unknown words still match each other.
func hashedVec(w string, acc []float32) {
	h := uint64(14695981039346656037)
	for i := 0; i < len(w); i++ {
		h = (h ^ uint64(w[i])) * 1099511628211
	}
	for j := range acc {
		h += 0x9e3779b97f4a7c15
		z := h
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		z ^= z >> 31
		acc[j] += float32(int64(z>>11))/float32(1<<52) - 1
	}
}

// Fit implements Fitter.
func (b *Builtin) Fit(ctx context.Context, docs func(yield func(string) bool)) error {
	o := b.opts
	dim := b.lex.dim
	// Reservoir sample of the documents.
	rng := rand.New(rand.NewPCG(1, 2))
	sample := make([]string, 0, min(o.MaxFitDocs, 1<<16))
	seen := 0
	var ctxErr error
	docs(func(s string) bool {
		if seen&4095 == 0 {
			if ctxErr = ctx.Err(); ctxErr != nil {
				return false
			}
		}
		seen++
		if len(sample) < o.MaxFitDocs {
			sample = append(sample, s)
		} else if j := rng.IntN(seen); j < o.MaxFitDocs {
			sample[j] = s
		}
		return true
	})
	if ctxErr != nil {
		return ctxErr
	}
	// Tokenise: content words only, slang expanded, inflections reduced to
	// the lexicon's dictionary form so "owes" and "owed" share counts.
	ids := map[string]int32{}
	var vocab []string
	var counts []float64
	var toks []int32
	var docEnds []int
	norm := map[string]string{}
	for i, s := range sample {
		if i&4095 == 4095 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		emit := func(w string) {
			if textutil.IsStopword(w) || w[0] >= '0' && w[0] <= '9' {
				return
			}
			if n, ok := norm[w]; ok {
				w = n
			} else {
				w = strings.Clone(w) // Words reuses its buffer
				n := w
				if !o.NoLexicon {
					if li := b.lex.lookup(w); li >= 0 {
						n = b.lex.words[li]
					}
				}
				norm[w] = n
				w = n
			}
			id, ok := ids[w]
			if !ok {
				id = int32(len(vocab))
				ids[w] = id
				vocab = append(vocab, w)
				counts = append(counts, 0)
			}
			counts[id]++
			toks = append(toks, id)
		}
		textutil.MessageWords(s, func(w string) bool {
			if exp, ok := slang[w]; ok {
				for _, e := range exp {
					emit(e)
				}
			} else {
				emit(w)
			}
			return true
		})
		docEnds = append(docEnds, len(toks))
	}
	total := 0.0
	for _, c := range counts {
		total += c
	}
	// Co-occurrence counts within the window, inside each document, with
	// integer weights (window+1−distance) so the sums do not depend on
	// iteration order.
	co := make(map[uint64]uint32, len(vocab)*16)
	start := 0
	for di, end := range docEnds {
		if di&4095 == 4095 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for i := start; i < end; i++ {
			a := toks[i]
			for j := i + 1; j < end && j <= i+o.Window; j++ {
				c := toks[j]
				if a == c {
					continue
				}
				wgt := uint32(o.Window + 1 - (j - i))
				co[uint64(a)<<32|uint64(c)] += wgt
				co[uint64(c)<<32|uint64(a)] += wgt
			}
		}
		start = end
	}
	keys := make([]uint64, 0, len(co))
	for k := range co {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if err := ctx.Err(); err != nil {
		return err
	}
	// PPMI-weighted sum of the context words' lexicon vectors.
	rowSum := make([]uint64, len(vocab))
	colSum := make([]uint64, len(vocab))
	for _, k := range keys {
		v := uint64(co[k])
		rowSum[k>>32] += v
		colSum[k&0xffffffff] += v
	}
	colPow := make([]float64, len(vocab))
	colPowTotal := 0.0
	for i, c := range colSum {
		colPow[i] = math.Pow(float64(c), 0.75)
		colPowTotal += colPow[i]
	}
	lexRow := make([]int32, len(vocab))
	for i, w := range vocab {
		lexRow[i] = -1
		if !o.NoLexicon {
			if li, ok := b.lex.index[w]; ok {
				lexRow[i] = li
			}
		}
	}
	keep := make([]bool, len(vocab))
	for i, c := range counts {
		keep[i] = c >= float64(o.MinCount)
	}
	ctxVec := make([]float32, len(vocab)*dim)
	if o.NoLexicon {
		b.corpusSVD(co, keys, keep, rowSum, colPow, colPowTotal, ctxVec)
	}
	for _, k := range keys {
		a, c := int(k>>32), int(k&0xffffffff)
		if !keep[a] || lexRow[c] < 0 {
			continue
		}
		pmi := math.Log(float64(co[k]) * colPowTotal / (float64(rowSum[a]) * colPow[c]))
		if pmi <= 0 {
			continue
		}
		b.lex.addTo(lexRow[c], float32(pmi), ctxVec[a*dim:(a+1)*dim])
	}
	// Final vectors, sorted by word for a deterministic state.
	order := make([]int, 0, len(vocab))
	for i := range vocab {
		if keep[i] {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(x, y int) bool { return vocab[order[x]] < vocab[order[y]] })
	words := make([]string, 0, len(order))
	weights := make([]float32, 0, len(order))
	qs := make([]int8, 0, len(order)*dim)
	scales := make([]float32, 0, len(order))
	for _, i := range order {
		v := ctxVec[i*dim : (i+1)*dim]
		normalize(v)
		if lexRow[i] >= 0 {
			for j := range v {
				v[j] *= float32(o.ContextWeight)
			}
			b.lex.addTo(lexRow[i], 1, v)
			normalize(v)
		}
		if isZero(v) {
			continue
		}
		p := counts[i] / total
		if o.PriorFloor > 0 && lexRow[i] >= 0 {
			// A word common in general English carries little topic even
			// when the user's corpus rarely uses it.
			p = math.Max(p, o.PriorFloor*b.priorP(lexRow[i]))
		}
		words = append(words, vocab[i])
		weights = append(weights, float32(o.SIF/(o.SIF+p)))
		q, scale := quantize(v)
		qs = append(qs, q...)
		scales = append(scales, scale)
	}
	aliases := map[string]string{}
	for w, n := range norm {
		if w != n {
			aliases[w] = n
		}
	}
	st, err := b.newState(words, weights, qs, scales, nil, aliases)
	if err != nil {
		return err
	}
	if o.RemovePC {
		pc, err := b.commonDirection(ctx, st, sample)
		if err != nil {
			return err
		}
		if st, err = b.newState(words, weights, qs, scales, pc, aliases); err != nil {
			return err
		}
	}
	b.st.Store(st)
	return nil
}

// corpusSVD fills ctxVec with corpus-only word vectors: a randomized
// truncated SVD of the PPMI matrix (kept words × all words), U·√Σ, the
// classic count-based embedding. Used when the lexicon is disabled.
func (b *Builtin) corpusSVD(co map[uint64]uint32, keys []uint64, keep []bool, rowSum []uint64, colPow []float64, colPowTotal float64, ctxVec []float32) {
	dim := b.lex.dim
	rowOf := make([]int32, len(keep))
	var rows []int
	for i, k := range keep {
		rowOf[i] = -1
		if k {
			rowOf[i] = int32(len(rows))
			rows = append(rows, i)
		}
	}
	var ts []linalg.Triplet
	for _, k := range keys {
		a, c := int(k>>32), int(k&0xffffffff)
		if rowOf[a] < 0 {
			continue
		}
		pmi := math.Log(float64(co[k]) * colPowTotal / (float64(rowSum[a]) * colPow[c]))
		if pmi > 0 {
			ts = append(ts, linalg.Triplet{Row: rowOf[a], Col: int32(c), Val: float32(pmi)})
		}
	}
	if len(rows) == 0 || len(ts) == 0 {
		return
	}
	m := linalg.BuildCSR(len(rows), len(keep), ts)
	u, sv := linalg.RandomizedSVD(m, dim, 16, 2, 1)
	for r, i := range rows {
		ur := u.Row(r)
		dst := ctxVec[i*dim : (i+1)*dim]
		for j := range ur {
			dst[j] = float32(ur[j] * math.Sqrt(sv[j]))
		}
	}
}

// commonDirection returns the first principal component (uncentred) of
// the sentence vectors of up to 20 000 sample documents, by power
// iteration from their mean.
func (b *Builtin) commonDirection(ctx context.Context, st *builtinState, sample []string) ([]float32, error) {
	dim := b.lex.dim
	n := min(len(sample), 20_000)
	vs := make([]float32, n*dim)
	for i := 0; i < n; i++ {
		b.embedOne(st, sample[i], vs[i*dim:(i+1)*dim])
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pc := make([]float64, dim)
	for i := 0; i < n; i++ {
		for j, x := range vs[i*dim : (i+1)*dim] {
			pc[j] += float64(x)
		}
	}
	for it := 0; it < 30; it++ {
		next := make([]float64, dim)
		for i := 0; i < n; i++ {
			v := vs[i*dim : (i+1)*dim]
			d := 0.0
			for j, x := range v {
				d += float64(x) * pc[j]
			}
			for j, x := range v {
				next[j] += d * float64(x)
			}
		}
		nn := 0.0
		for _, x := range next {
			nn += x * x
		}
		if nn == 0 {
			return nil, nil
		}
		nn = math.Sqrt(nn)
		for j := range next {
			next[j] /= nn
		}
		pc = next
	}
	out := make([]float32, dim)
	for j, x := range pc {
		out[j] = float32(x)
	}
	return out, nil
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// newState builds a fitted state from quantised vectors. Fit quantises
// before calling it and MarshalBinary stores the same bytes, so a restored
// embedder produces exactly the vectors (and ID) of the fitted one.
func (b *Builtin) newState(words []string, weights []float32, q []int8, scales []float32, pc []float32, aliases map[string]string) (*builtinState, error) {
	dim := b.lex.dim
	st := &builtinState{fitted: true, words: words, weights: weights, q: q, scales: scales, pc: pc,
		unit: make([]float32, len(words)), rows: make(map[string]int32, len(words)), aliases: map[string]int32{}, unseenWeight: 1}
	for i, w := range words {
		if len(w) > 255 {
			return nil, fmt.Errorf("builtin state: word of %d bytes", len(w))
		}
		st.rows[w] = int32(i)
		st.unit[i] = unitScale(q[i*dim : (i+1)*dim])
	}
	for a, n := range aliases {
		if r, ok := st.rows[n]; ok && len(a) <= 255 {
			if _, dup := st.rows[a]; !dup {
				st.aliases[a] = r
			}
		}
	}
	sum := sha256.Sum256(b.marshalState(st))
	st.id = b.baseID() + "/fit-" + hex.EncodeToString(sum[:6])
	return st, nil
}

func quantize(row []float32) ([]int8, float32) {
	m := float32(0)
	for _, x := range row {
		m = max(m, float32(math.Abs(float64(x))))
	}
	q := make([]int8, len(row))
	if m == 0 {
		return q, 0
	}
	for j, x := range row {
		q[j] = int8(math.Round(float64(x / m * 127)))
	}
	return q, m / 127
}

const stateMagic = "TDBE"

// MarshalBinary implements Fitter. An unfitted embedder has no state and
// marshals to nil.
func (b *Builtin) MarshalBinary() ([]byte, error) {
	st := b.st.Load()
	if !st.fitted {
		return nil, nil
	}
	return b.marshalState(st), nil
}

func (b *Builtin) marshalState(st *builtinState) []byte {
	dim := b.lex.dim
	var buf bytes.Buffer
	le := binary.LittleEndian
	buf.WriteString(stateMagic)
	buf.WriteByte(2)
	buf.WriteString(b.baseID())
	buf.WriteByte(0)
	binary.Write(&buf, le, uint16(len(st.pc)))
	binary.Write(&buf, le, st.pc)
	binary.Write(&buf, le, uint32(len(st.words)))
	for i, w := range st.words {
		buf.WriteByte(byte(len(w)))
		buf.WriteString(w)
		binary.Write(&buf, le, st.weights[i])
		binary.Write(&buf, le, st.scales[i])
		for _, x := range st.q[i*dim : (i+1)*dim] {
			buf.WriteByte(byte(x))
		}
	}
	as := make([]string, 0, len(st.aliases))
	for a := range st.aliases {
		as = append(as, a)
	}
	sort.Strings(as)
	binary.Write(&buf, le, uint32(len(as)))
	for _, a := range as {
		buf.WriteByte(byte(len(a)))
		buf.WriteString(a)
		binary.Write(&buf, le, uint32(st.aliases[a]))
	}
	return buf.Bytes()
}

// ErrStateMismatch means persisted state was made by a different built-in
// embedder (version, lexicon or options); the index must fit again.
var ErrStateMismatch = errors.New("builtin embedder state was made by a different version")

// UnmarshalBinary implements Fitter. Empty data restores the unfitted
// embedder.
func (b *Builtin) UnmarshalBinary(data []byte) error {
	if len(data) == 0 {
		b.st.Store(&builtinState{id: b.baseID(), unseenWeight: 1})
		return nil
	}
	dim := b.lex.dim
	bad := func(what string) error { return fmt.Errorf("builtin state: %s", what) }
	if len(data) < 5 || string(data[:4]) != stateMagic || data[4] != 2 {
		return bad("bad magic or version")
	}
	rest := data[5:]
	idEnd := bytes.IndexByte(rest, 0)
	if idEnd < 0 {
		return bad("truncated header")
	}
	if got := string(rest[:idEnd]); got != b.baseID() {
		return fmt.Errorf("%w: state is %q, embedder is %q", ErrStateMismatch, got, b.baseID())
	}
	rest = rest[idEnd+1:]
	if len(rest) < 2 {
		return bad("truncated header")
	}
	var pc []float32
	if npc := int(binary.LittleEndian.Uint16(rest)); npc != 0 {
		if npc != dim || len(rest) < 2+4*dim {
			return bad("bad common direction")
		}
		pc = make([]float32, dim)
		for j := range pc {
			pc[j] = math.Float32frombits(binary.LittleEndian.Uint32(rest[2+4*j:]))
			if math.IsNaN(float64(pc[j])) || math.IsInf(float64(pc[j]), 0) {
				return bad("non-finite number")
			}
		}
		rest = rest[4*dim:]
	}
	rest = rest[2:]
	if len(rest) < 4 {
		return bad("truncated header")
	}
	n := int(binary.LittleEndian.Uint32(rest))
	rest = rest[4:]
	if n > len(rest)/(1+8+dim) {
		return bad("word count exceeds data")
	}
	words := make([]string, n)
	weights := make([]float32, n)
	scales := make([]float32, n)
	qs := make([]int8, n*dim)
	for i := 0; i < n; i++ {
		if len(rest) < 1 {
			return bad("truncated")
		}
		l := int(rest[0])
		if len(rest) < 1+l+8+dim {
			return bad("truncated")
		}
		words[i] = string(rest[1 : 1+l])
		weights[i] = math.Float32frombits(binary.LittleEndian.Uint32(rest[1+l:]))
		scale := math.Float32frombits(binary.LittleEndian.Uint32(rest[5+l:]))
		if math.IsNaN(float64(weights[i])) || math.IsInf(float64(weights[i]), 0) || math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) {
			return bad("non-finite number")
		}
		scales[i] = scale
		for j, x := range rest[9+l : 9+l+dim] {
			qs[i*dim+j] = int8(x)
		}
		rest = rest[9+l+dim:]
	}
	if len(rest) < 4 {
		return bad("truncated aliases")
	}
	na := int(binary.LittleEndian.Uint32(rest))
	rest = rest[4:]
	if na > len(rest)/6 {
		return bad("alias count exceeds data")
	}
	aliases := make(map[string]string, na)
	for i := 0; i < na; i++ {
		if len(rest) < 1 || len(rest) < 1+int(rest[0])+4 {
			return bad("truncated aliases")
		}
		l := int(rest[0])
		a := string(rest[1 : 1+l])
		r := binary.LittleEndian.Uint32(rest[1+l:])
		if r >= uint32(n) {
			return bad("alias target out of range")
		}
		aliases[a] = words[r]
		rest = rest[5+l:]
	}
	if len(rest) != 0 {
		return bad("trailing bytes")
	}
	st, err := b.newState(words, weights, qs, scales, pc, aliases)
	if err != nil {
		return err
	}
	b.st.Store(st)
	return nil
}

// trigramIndex finds the known word closest in spelling to an unknown one.
type trigramIndex struct {
	words []string
	q     [][]int8
	unit  []float32
	post  map[uint32][]int32
	ntri  []uint8
}

func trigrams(w string, f func(uint32)) {
	s := "^" + w + "$"
	for i := 0; i+3 <= len(s); i++ {
		f(uint32(s[i])<<16 | uint32(s[i+1])<<8 | uint32(s[i+2]))
	}
}

func (b *Builtin) buildTrigrams(st *builtinState) *trigramIndex {
	t := &trigramIndex{post: map[uint32][]int32{}}
	addWord := func(w string, q []int8, unit float32) {
		if len(w) < 4 {
			return
		}
		id := int32(len(t.words))
		t.words = append(t.words, w)
		t.q = append(t.q, q)
		t.unit = append(t.unit, unit)
		n := 0
		trigrams(w, func(g uint32) { t.post[g] = append(t.post[g], id); n++ })
		t.ntri = append(t.ntri, uint8(min(n, 255)))
	}
	for i, w := range st.words {
		addWord(w, st.row(int32(i), b.lex.dim), st.unit[i])
	}
	if !b.opts.NoLexicon {
		for i, w := range b.lex.words {
			if _, dup := st.rows[w]; !dup {
				addWord(w, b.lex.qrow(int32(i)), b.lex.s[i])
			}
		}
	}
	return t
}

// closest returns the vector (and its unit scale) of the known word with
// the highest Dice coefficient over character trigrams, if it is at least
// 0.6, and the coefficient.
func (t *trigramIndex) closest(w string) ([]int8, float32, float64) {
	hits := map[int32]int{}
	n := 0
	trigrams(w, func(g uint32) {
		n++
		for _, id := range t.post[g] {
			hits[id]++
		}
	})
	best, bestScore := int32(-1), 0.0
	for id, h := range hits {
		s := 2 * float64(h) / float64(n+int(t.ntri[id]))
		if s > bestScore || s == bestScore && best >= 0 && t.words[id] < t.words[best] {
			best, bestScore = id, s
		}
	}
	if best < 0 || bestScore < 0.6 {
		return nil, 0, 0
	}
	return t.q[best], t.unit[best], bestScore
}
