// Command lexgen derives the built-in embedder's compact English lexicon
// from Princeton WordNet 3.0 (Debian package wordnet-base).
//
// It builds a sparse word × feature matrix whose features are the synsets a
// word belongs to (weighted by sense rank), the synsets those link to
// (hypernyms, similar-to, derivations, part/member relations, hyponyms) and
// the words of their glosses, plus the reverse gloss link (a word used to
// define a synset gets that synset as a feature). The matrix is turned into
// positive pointwise mutual information and reduced with a randomized SVD;
// each kept word's row is L2-normalised and quantised to int8. The result is
// written in the format internal/embed/lexicon.go reads.
//
// Usage (see docs/embeddings.md):
//
//	apt-get download wordnet-base && dpkg-deb -x wordnet-base_*.deb /tmp/wn
//	go run ./internal/embed/internal/lexgen -wordnet /tmp/wn/usr/share/wordnet \
//	    -out internal/embed/data/lexicon.bin.gz
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tidings-mcp/tidings/internal/embed/internal/linalg"
	"github.com/tidings-mcp/tidings/internal/embed/internal/textutil"
)

type pointer struct {
	sym    string
	target int // synset index
}

type synset struct {
	words   []string
	ptrs    []pointer
	raw     [][3]string // symbol, offset, pos until resolved
	glossRw string
	gloss   []string
}

type gen struct {
	dir      string
	synsets  []synset
	byKey    map[string]int // pos+offset → index
	senses   map[string][]int
	tagCount map[string]int
	exc      map[string]string
	lemmas   map[string]bool
	glossDF  map[string]int
}

// Weights of the feature links, relative to a word's own synset.
var linkWeight = map[string]float32{
	"@": 0.5, "@i": 0.5, // hypernym
	"&": 0.6, "^": 0.4, "+": 0.6, "\\": 0.5, "=": 0.4, "$": 0.5, "*": 0.4, ">": 0.4, "<": 0.3, ";c": 0.2, "-c": 0.2,
	"#m": 0.3, "#s": 0.3, "#p": 0.3, "%m": 0.3, "%s": 0.3, "%p": 0.3,
}

// Generation settings; main exposes each as a flag. The values here are
// the ones the shipped lexicon was made with.
var (
	aliases   = true      // map lemmas outside the vocabulary to a kept synonym or hypernym
	skipTop   = 1         // leading singular directions dropped
	maxDF     = 300       // features shared by more words than this are dropped
	glossMode = "synsets" // gloss features: synsets, words or both
	eigPow    = 0.5       // singular value exponent
	revWeight = 0.3       // weight of the reverse gloss link
)

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 dict directory")
	out := flag.String("out", "internal/embed/data/lexicon.bin.gz", "output file")
	dim := flag.Int("dim", 128, "vector dimensions")
	maxWords := flag.Int("words", 37000, "maximum vocabulary size")
	method := flag.String("method", "svd", "reduction: svd, or rp (random projection of PPMI rows)")
	flag.StringVar(&glossMode, "gloss", glossMode, "gloss features: synsets (senses of gloss words), words, or both")
	flag.Float64Var(&eigPow, "eig", eigPow, "singular value exponent of the SVD vectors")
	flag.BoolVar(&aliases, "aliases", aliases, "map lemmas outside the vocabulary to a kept synonym or hypernym")
	flag.IntVar(&skipTop, "skip", skipTop, "drop this many leading singular directions (frequency/hub directions)")
	flag.Float64Var(&revWeight, "rev", revWeight, "weight of the reverse gloss link")
	flag.IntVar(&maxDF, "maxdf", maxDF, "drop features shared by more than this many words (hubs such as 'person')")
	flag.Parse()
	if err := run(*dir, *out, *dim, *maxWords, *method); err != nil {
		fmt.Fprintln(os.Stderr, "lexgen:", err)
		os.Exit(1)
	}
}

func run(dir, out string, dim, maxWords int, method string) error {
	g := &gen{dir: dir, byKey: map[string]int{}, senses: map[string][]int{}, tagCount: map[string]int{},
		exc: map[string]string{}, lemmas: map[string]bool{}, glossDF: map[string]int{}}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		if err := g.readData(pos); err != nil {
			return err
		}
	}
	g.resolve()
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		if err := g.readIndex(pos); err != nil {
			return err
		}
		if err := g.readExc(pos); err != nil {
			return err
		}
	}
	if err := g.readCounts(); err != nil {
		return err
	}
	g.lemmatizeGlosses()
	vocab := g.chooseVocab(maxWords)
	slog.Info("vocabulary", "words", len(vocab), "synsets", len(g.synsets))
	m := g.matrix(vocab)
	ppmi(m)
	slog.Info("matrix", "rows", m.Rows, "cols", m.Cols, "nnz", len(m.Vals))
	var vecs [][]float32
	switch method {
	case "svd":
		vecs = reduceSVD(m, dim)
	case "rp":
		vecs = reduceRP(m, dim)
	default:
		return fmt.Errorf("unknown method %q", method)
	}
	return g.write(out, vocab, vecs, dim)
}

// reduceRP projects each PPMI row onto dim random Gaussian directions, one
// per feature (Johnson–Lindenstrauss): dot products of the results
// approximate the overlap of the words' weighted features.
func reduceRP(m *linalg.CSR, dim int) [][]float32 {
	proj := make([]float32, m.Cols*dim)
	rng := rand.New(rand.NewPCG(42, 7))
	for i := range proj {
		proj[i] = float32(rng.NormFloat64())
	}
	vecs := make([][]float32, m.Rows)
	for r := 0; r < m.Rows; r++ {
		v := make([]float64, dim)
		for p := m.Indptr[r]; p < m.Indptr[r+1]; p++ {
			x := float64(m.Vals[p])
			pr := proj[int(m.Indices[p])*dim : int(m.Indices[p]+1)*dim]
			for j := range v {
				v[j] += x * float64(pr[j])
			}
		}
		vecs[r] = unit(v)
	}
	return vecs
}

func unit(v []float64) []float32 {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	if n > 0 {
		for j, x := range v {
			out[j] = float32(x / n)
		}
	}
	return out
}

func reduceSVD(m *linalg.CSR, dim int) [][]float32 {
	u, s := linalg.RandomizedSVD(m, dim+skipTop, 24, 3, 42)
	vecs := make([][]float32, m.Rows)
	for i := range vecs {
		row := u.Row(i)
		v := make([]float32, dim)
		n := 0.0
		for j := 0; j < dim; j++ {
			x := row[j+skipTop] * math.Pow(s[j+skipTop], eigPow)
			v[j] = float32(x)
			n += x * x
		}
		n = math.Sqrt(n)
		if n > 0 {
			for j := range v {
				v[j] /= float32(n)
			}
		}
		vecs[i] = v
	}
	return vecs
}

func (g *gen) readData(pos string) error {
	f, err := os.Open(filepath.Join(g.dir, "data."+pos))
	if err != nil {
		return fmt.Errorf("open wordnet data: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") {
			continue // licence header
		}
		body, gloss, _ := strings.Cut(line, "|")
		f := strings.Fields(body)
		off, p := f[0], f[2]
		if p == "s" {
			p = "a"
		}
		wc, _ := strconv.ParseInt(f[3], 16, 32)
		i := 4
		ss := synset{glossRw: gloss}
		for k := 0; k < int(wc); k++ {
			w := strings.ToLower(f[i])
			if q := strings.IndexByte(w, '('); q > 0 { // adjective markers "(a)"
				w = w[:q]
			}
			ss.words = append(ss.words, w)
			i += 2
		}
		pc, _ := strconv.Atoi(f[i])
		i++
		for k := 0; k < pc; k++ {
			ss.raw = append(ss.raw, [3]string{f[i], f[i+1], f[i+2]})
			i += 4
		}
		g.byKey[p+off] = len(g.synsets)
		g.synsets = append(g.synsets, ss)
	}
	return sc.Err()
}

func (g *gen) resolve() {
	for i := range g.synsets {
		for _, p := range g.synsets[i].raw {
			tp := p[2]
			if tp == "s" {
				tp = "a"
			}
			if t, ok := g.byKey[tp+p[1]]; ok {
				g.synsets[i].ptrs = append(g.synsets[i].ptrs, pointer{p[0], t})
			}
		}
		g.synsets[i].raw = nil
	}
}

// readIndex records, for each lemma, its synsets in WordNet's sense order
// (most frequent first).
func (g *gen) readIndex(pos string) error {
	f, err := os.Open(filepath.Join(g.dir, "index."+pos))
	if err != nil {
		return fmt.Errorf("open wordnet index: %w", err)
	}
	defer f.Close()
	key := map[string]string{"noun": "n", "verb": "v", "adj": "a", "adv": "r"}[pos]
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") {
			continue
		}
		f := strings.Fields(line)
		lemma := f[0]
		g.lemmas[lemma] = true
		sc, _ := strconv.Atoi(f[2])
		pc, _ := strconv.Atoi(f[3])
		offs := f[4+pc+2:]
		for k := 0; k < sc && k < len(offs); k++ {
			if s, ok := g.byKey[key+offs[k]]; ok {
				g.senses[lemma] = append(g.senses[lemma], s)
			}
		}
	}
	return sc.Err()
}

func (g *gen) readExc(pos string) error {
	f, err := os.Open(filepath.Join(g.dir, pos+".exc"))
	if err != nil {
		return fmt.Errorf("open wordnet exceptions: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && !strings.ContainsAny(f[0], "_-'") {
			if _, dup := g.exc[f[0]]; !dup {
				g.exc[f[0]] = f[1]
			}
		}
	}
	return sc.Err()
}

// readCounts sums SemCor sense-tag counts per lemma: a rough frequency.
func (g *gen) readCounts() error {
	f, err := os.Open(filepath.Join(g.dir, "cntlist.rev"))
	if err != nil {
		return fmt.Errorf("open wordnet counts: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			continue
		}
		lemma, _, _ := strings.Cut(f[0], "%")
		n, _ := strconv.Atoi(f[2])
		g.tagCount[lemma] += n
	}
	return sc.Err()
}

func (g *gen) morph(w string) string {
	return textutil.Morph(w, func(s string) bool { return g.lemmas[s] }, func(s string) (string, bool) {
		b, ok := g.exc[s]
		return b, ok
	})
}

func (g *gen) lemmatizeGlosses() {
	for i := range g.synsets {
		seen := map[string]bool{}
		textutil.Words(g.synsets[i].glossRw, func(w string) bool {
			if textutil.IsStopword(w) || len(w) < 2 || w[0] >= '0' && w[0] <= '9' {
				return true
			}
			w = strings.Clone(w) // Words reuses its buffer
			if b := g.morph(w); b != "" {
				w = b
			}
			if !seen[w] {
				seen[w] = true
				g.synsets[i].gloss = append(g.synsets[i].gloss, w)
				g.glossDF[w]++
			}
			return true
		})
		g.synsets[i].glossRw = ""
	}
}

// chooseVocab keeps single-word lemmas ranked by how much evidence of use
// WordNet has for them: sense-tag counts, then appearances in glosses.
func (g *gen) chooseVocab(max int) []string {
	type cand struct {
		w     string
		score float64
	}
	var cs []cand
	for w := range g.lemmas {
		if !isPlainWord(w) || textutil.IsStopword(w) {
			continue
		}
		score := 3*math.Log1p(float64(g.tagCount[w])) + math.Log1p(float64(g.glossDF[w]))
		if score <= 0 {
			continue
		}
		cs = append(cs, cand{w, score})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return cs[i].w < cs[j].w
	})
	if len(cs) > max {
		cs = cs[:max]
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.w
	}
	sort.Strings(out)
	return out
}

func isPlainWord(w string) bool {
	if len(w) < 2 || len(w) > 24 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

func (g *gen) matrix(vocab []string) *linalg.CSR {
	row := map[string]int32{}
	for i, w := range vocab {
		row[w] = int32(i)
	}
	ns := len(g.synsets)
	glossCol := map[string]int32{}
	col := func(w string) int32 {
		c, ok := glossCol[w]
		if !ok {
			c = int32(ns + len(glossCol))
			glossCol[w] = c
		}
		return c
	}
	var ts []linalg.Triplet
	for _, w := range vocab {
		r := row[w]
		for rank, s := range g.senses[w] {
			sw := float32(1 / math.Sqrt(float64(rank+1)))
			ss := &g.synsets[s]
			ts = append(ts, linalg.Triplet{Row: r, Col: int32(s), Val: sw})
			nh := 0
			for _, p := range ss.ptrs {
				if p.sym == "~" || p.sym == "~i" {
					nh++
				}
			}
			for _, p := range ss.ptrs {
				lw, ok := linkWeight[p.sym]
				if p.sym == "~" || p.sym == "~i" {
					lw, ok = 0.4/float32(math.Sqrt(float64(nh))), true
				}
				if !ok {
					continue
				}
				ts = append(ts, linalg.Triplet{Row: r, Col: int32(p.target), Val: sw * lw})
				if p.sym == "@" || p.sym == "@i" { // grandparent
					for _, q := range g.synsets[p.target].ptrs {
						if q.sym == "@" || q.sym == "@i" {
							ts = append(ts, linalg.Triplet{Row: r, Col: int32(q.target), Val: sw * 0.2})
						}
					}
				}
			}
			// The gloss: its words, or the senses of its words.
			for _, gw := range ss.gloss {
				if glossMode != "synsets" {
					ts = append(ts, linalg.Triplet{Row: r, Col: col(gw), Val: sw * 0.5})
				}
				if glossMode != "words" {
					for gr, gs := range g.senses[gw] {
						if gr >= 2 {
							break
						}
						ts = append(ts, linalg.Triplet{Row: r, Col: int32(gs), Val: sw * 0.5 / float32(gr+1)})
					}
				}
			}
		}
	}
	// Reverse gloss: a word used to define a synset is about that synset.
	for s := range g.synsets {
		for _, gw := range g.synsets[s].gloss {
			if r, ok := row[gw]; ok {
				ts = append(ts, linalg.Triplet{Row: r, Col: int32(s), Val: float32(revWeight)})
			}
		}
	}
	m := linalg.BuildCSR(len(vocab), ns+len(glossCol), ts)
	if maxDF <= 0 {
		return m
	}
	df := make([]int, m.Cols)
	for _, c := range m.Indices {
		df[c]++
	}
	var kept []linalg.Triplet
	for r := 0; r < m.Rows; r++ {
		for p := m.Indptr[r]; p < m.Indptr[r+1]; p++ {
			if df[m.Indices[p]] <= maxDF {
				kept = append(kept, linalg.Triplet{Row: int32(r), Col: m.Indices[p], Val: m.Vals[p]})
			}
		}
	}
	return linalg.BuildCSR(m.Rows, m.Cols, kept)
}

// ppmi replaces the weights with positive pointwise mutual information, with
// context-distribution smoothing (α = 0.75).
func ppmi(m *linalg.CSR) {
	rowSum := make([]float64, m.Rows)
	colSum := make([]float64, m.Cols)
	total := 0.0
	for r := 0; r < m.Rows; r++ {
		for p := m.Indptr[r]; p < m.Indptr[r+1]; p++ {
			v := float64(m.Vals[p])
			rowSum[r] += v
			colSum[m.Indices[p]] += v
			total += v
		}
	}
	colTotal := 0.0
	for i, c := range colSum {
		colSum[i] = math.Pow(c, 0.75)
		colTotal += colSum[i]
	}
	for r := 0; r < m.Rows; r++ {
		for p := m.Indptr[r]; p < m.Indptr[r+1]; p++ {
			v := float64(m.Vals[p])
			pmi := math.Log(v * colTotal / (rowSum[r] * colSum[m.Indices[p]]))
			if pmi < 0 {
				pmi = 0
			}
			m.Vals[p] = float32(pmi)
		}
	}
	_ = total
}

// aliases maps each WordNet lemma left out of the vocabulary to a kept
// word of its first sense that has one: a synonym in the same synset, else
// a lemma of a hypernym ("relocate" → "move", "timeline" → "chronology"), so
// everyday words beyond the vocabulary still get a meaning.
func (g *gen) aliases(kept map[string]bool) map[string]string {
	out := map[string]string{}
	pick := func(s int) string {
		for _, w := range g.synsets[s].words {
			if kept[w] {
				return w
			}
		}
		return ""
	}
	for w := range g.lemmas {
		if kept[w] || !isPlainWord(w) || textutil.IsStopword(w) {
			continue
		}
		senses := g.senses[w]
		if len(senses) == 0 {
			continue
		}
		s := senses[0]
		t := pick(s)
		for _, p := range g.synsets[s].ptrs {
			if t != "" {
				break
			}
			if p.sym == "@" || p.sym == "@i" || p.sym == "&" {
				t = pick(p.target)
			}
		}
		if t != "" {
			out[w] = t
		}
	}
	return out
}

// write stores: magic "TDLX", version 1, dim, word count, then per word a
// length-prefixed lemma, a frequency prior byte and a float32 scale, then
// the int8 vectors, then the irregular-form exceptions whose base is kept.
func (g *gen) write(out string, vocab []string, vecs [][]float32, dim int) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	bw := bufio.NewWriter(zw)
	le := binary.LittleEndian
	bw.WriteString("TDLX")
	bw.WriteByte(1)
	binary.Write(bw, le, uint16(dim))
	binary.Write(bw, le, uint32(len(vocab)))
	for i, w := range vocab {
		bw.WriteByte(byte(len(w)))
		bw.WriteString(w)
		prior := math.Min(255, 20*math.Log1p(float64(g.tagCount[w])))
		bw.WriteByte(byte(prior))
		maxAbs := float32(0)
		for _, x := range vecs[i] {
			maxAbs = max(maxAbs, float32(math.Abs(float64(x))))
		}
		binary.Write(bw, le, maxAbs/127)
	}
	for i := range vocab {
		maxAbs := float32(0)
		for _, x := range vecs[i] {
			maxAbs = max(maxAbs, float32(math.Abs(float64(x))))
		}
		for _, x := range vecs[i] {
			q := int8(0)
			if maxAbs > 0 {
				q = int8(math.Round(float64(x / maxAbs * 127)))
			}
			bw.WriteByte(byte(q))
		}
	}
	kept := map[string]bool{}
	for _, w := range vocab {
		kept[w] = true
	}
	table := map[string]string{}
	for k, v := range g.exc {
		if kept[v] && !kept[k] && isPlainWord(k) {
			table[k] = v
		}
	}
	if aliases {
		for w, v := range g.aliases(kept) {
			if _, dup := table[w]; !dup {
				table[w] = v
			}
		}
	}
	excs := make([]string, 0, len(table))
	for k := range table {
		excs = append(excs, k)
	}
	sort.Strings(excs)
	binary.Write(bw, le, uint32(len(excs)))
	for _, k := range excs {
		bw.WriteByte(byte(len(k)))
		bw.WriteString(k)
		bw.WriteByte(byte(len(table[k])))
		bw.WriteString(table[k])
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	st, _ := os.Stat(out)
	slog.Info("wrote lexicon", "file", out, "bytes", st.Size(), "words", len(vocab), "exceptions", len(excs))
	return nil
}
