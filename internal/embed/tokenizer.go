package embed

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// tokenizer is the subset of a Hugging Face tokenizer.json that static
// embedding models use: a normaliser, a pre-tokeniser and a WordPiece or
// Unigram model. Unsupported components are an error at load time, never a
// silent fallback.
type tokenizer struct {
	normalize func(string) string
	pretok    func(string, func(string))
	model     interface {
		encode(word string, emit func(id int))
	}
	vocabSize int
	unkID     int // -1 when the model has no unknown token
}

type tokJSON struct {
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
	AddedTokens  []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
	} `json:"added_tokens"`
}

func parseTokenizer(b []byte) (*tokenizer, error) {
	var tj tokJSON
	if err := json.Unmarshal(b, &tj); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	t := &tokenizer{unkID: -1}
	var err error
	if t.normalize, err = buildNormalizer(tj.Normalizer); err != nil {
		return nil, err
	}
	if t.pretok, err = buildPreTokenizer(tj.PreTokenizer); err != nil {
		return nil, err
	}
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(tj.Model, &head); err != nil {
		return nil, fmt.Errorf("tokenizer.json model: %w", err)
	}
	switch head.Type {
	case "WordPiece":
		var m struct {
			Vocab    map[string]int `json:"vocab"`
			Unk      string         `json:"unk_token"`
			Prefix   *string        `json:"continuing_subword_prefix"`
			MaxChars int            `json:"max_input_chars_per_word"`
		}
		if err := json.Unmarshal(tj.Model, &m); err != nil {
			return nil, fmt.Errorf("tokenizer.json WordPiece model: %w", err)
		}
		wp := &wordPiece{vocab: m.Vocab, prefix: "##", maxChars: m.MaxChars, unk: -1}
		if m.Prefix != nil {
			wp.prefix = *m.Prefix
		}
		if wp.maxChars <= 0 {
			wp.maxChars = 100
		}
		if id, ok := m.Vocab[m.Unk]; ok {
			wp.unk = id
		}
		t.model, t.unkID = wp, wp.unk
		for _, id := range m.Vocab {
			t.vocabSize = max(t.vocabSize, id+1)
		}
	case "Unigram":
		var m struct {
			Vocab [][2]json.RawMessage `json:"vocab"`
			UnkID *int                 `json:"unk_id"`
		}
		if err := json.Unmarshal(tj.Model, &m); err != nil {
			return nil, fmt.Errorf("tokenizer.json Unigram model: %w", err)
		}
		u := &unigram{pieces: map[string]unigramPiece{}, unk: -1}
		minScore := math.Inf(1)
		for id, p := range m.Vocab {
			var s string
			var score float64
			if err := json.Unmarshal(p[0], &s); err != nil {
				return nil, fmt.Errorf("tokenizer.json Unigram piece %d: %w", id, err)
			}
			if err := json.Unmarshal(p[1], &score); err != nil {
				return nil, fmt.Errorf("tokenizer.json Unigram score %d: %w", id, err)
			}
			u.pieces[s] = unigramPiece{id, score}
			u.maxLen = max(u.maxLen, len(s))
			minScore = math.Min(minScore, score)
		}
		if m.UnkID != nil && *m.UnkID >= 0 && *m.UnkID < len(m.Vocab) {
			u.unk = *m.UnkID
		}
		u.unkScore = minScore - 10
		t.model, t.unkID, t.vocabSize = u, u.unk, len(m.Vocab)
	case "BPE":
		bp, err := parseBPE(tj.Model)
		if err != nil {
			return nil, err
		}
		t.model, t.unkID = bp, bp.unk
		for _, id := range bp.vocab {
			t.vocabSize = max(t.vocabSize, id+1)
		}
	default:
		return nil, fmt.Errorf("tokenizer.json: model type %q is not supported (WordPiece, Unigram and BPE are)", head.Type)
	}
	for _, a := range tj.AddedTokens {
		t.vocabSize = max(t.vocabSize, a.ID+1)
	}
	return t, nil
}

// encode calls emit with the token ids of text, without special tokens.
func (t *tokenizer) encode(text string, emit func(id int)) {
	t.pretok(t.normalize(text), func(w string) { t.model.encode(w, emit) })
}

func buildNormalizer(raw json.RawMessage) (func(string) string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return func(s string) string { return s }, nil
	}
	var n struct {
		Type         string            `json:"type"`
		CleanText    *bool             `json:"clean_text"`
		ChineseChars *bool             `json:"handle_chinese_chars"`
		StripAccents *bool             `json:"strip_accents"`
		Lowercase    *bool             `json:"lowercase"`
		Normalizers  []json.RawMessage `json:"normalizers"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("tokenizer.json normalizer: %w", err)
	}
	isTrue := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	switch n.Type {
	case "BertNormalizer":
		clean, cjk, lower := isTrue(n.CleanText, true), isTrue(n.ChineseChars, true), isTrue(n.Lowercase, true)
		strip := isTrue(n.StripAccents, lower) // null follows lowercase, as in BERT
		return func(s string) string { return bertNormalize(s, clean, cjk, strip, lower) }, nil
	case "Lowercase":
		return strings.ToLower, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFC":
		return norm.NFC.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "StripAccents":
		return stripMarks, nil
	case "Sequence":
		var fs []func(string) string
		for _, r := range n.Normalizers {
			f, err := buildNormalizer(r)
			if err != nil {
				return nil, err
			}
			fs = append(fs, f)
		}
		return func(s string) string {
			for _, f := range fs {
				s = f(s)
			}
			return s
		}, nil
	default:
		return nil, fmt.Errorf("tokenizer.json: normalizer %q is not supported", n.Type)
	}
}

func stripMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

// bertNormalize follows BERT's basic tokenizer clean-up: drop control
// characters and U+FFFD, map whitespace to spaces, pad CJK ideographs with
// spaces, lower-case and strip accents (NFD, drop combining marks).
func bertNormalize(s string, clean, cjk, strip, lower bool) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf || s[i] < 0x20 {
			ascii = false
			break
		}
	}
	if ascii {
		if lower {
			return strings.ToLower(s)
		}
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if clean {
			if r == 0 || r == 0xFFFD || isControl(r) {
				continue
			}
			if r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r) {
				r = ' '
			}
		}
		if cjk && isCJK(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if lower {
		out = strings.ToLower(out)
	}
	if strip {
		out = stripMarks(norm.NFD.String(out))
	}
	return out
}

func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

// isBertPunct is BERT's punctuation test: ASCII symbols plus Unicode P*.
func isBertPunct(r rune) bool {
	if r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 {
		return true
	}
	return unicode.IsPunct(r)
}

func buildPreTokenizer(raw json.RawMessage) (func(string, func(string)), error) {
	if len(raw) == 0 || string(raw) == "null" {
		return func(s string, f func(string)) {
			if s != "" {
				f(s)
			}
		}, nil
	}
	var p struct {
		Type          string            `json:"type"`
		Replacement   string            `json:"replacement"`
		PrependScheme string            `json:"prepend_scheme"`
		AddPrefix     *bool             `json:"add_prefix_space"`
		UseRegex      *bool             `json:"use_regex"`
		Split         *bool             `json:"split"`
		PreTokenizers []json.RawMessage `json:"pretokenizers"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("tokenizer.json pre_tokenizer: %w", err)
	}
	switch p.Type {
	case "BertPreTokenizer":
		return func(s string, f func(string)) { splitBert(s, f) }, nil
	case "WhitespaceSplit":
		return func(s string, f func(string)) {
			for _, w := range strings.Fields(s) {
				f(w)
			}
		}, nil
	case "Whitespace":
		// \w+|[^\w\s]+
		return func(s string, f func(string)) { splitWordsAndSymbols(s, f) }, nil
	case "ByteLevel":
		prefix := p.AddPrefix != nil && *p.AddPrefix
		useRegex := p.UseRegex == nil || *p.UseRegex
		return func(s string, f func(string)) {
			if prefix && !strings.HasPrefix(s, " ") {
				s = " " + s
			}
			emit := func(piece string) { f(byteLevelEncode(piece)) }
			if !useRegex {
				emit(s)
				return
			}
			splitGPT2(s, emit)
		}, nil
	case "Metaspace":
		rep := p.Replacement
		if rep == "" {
			rep = "▁"
		}
		prepend := p.PrependScheme
		if prepend == "" {
			prepend = "always"
			if p.AddPrefix != nil && !*p.AddPrefix {
				prepend = "never"
			}
		}
		split := p.Split == nil || *p.Split
		return func(s string, f func(string)) {
			s = strings.ReplaceAll(s, " ", rep)
			if prepend != "never" && !strings.HasPrefix(s, rep) {
				s = rep + s
			}
			if !split {
				f(s)
				return
			}
			// Split before each replacement character, keeping it.
			start := 0
			for i := len(rep); i <= len(s)-len(rep); {
				if strings.HasPrefix(s[i:], rep) {
					if i > start {
						f(s[start:i])
					}
					start = i
					i += len(rep)
					continue
				}
				_, sz := utf8.DecodeRuneInString(s[i:])
				i += sz
			}
			if start < len(s) {
				f(s[start:])
			}
		}, nil
	case "Sequence":
		var ps []func(string, func(string))
		for _, r := range p.PreTokenizers {
			f, err := buildPreTokenizer(r)
			if err != nil {
				return nil, err
			}
			ps = append(ps, f)
		}
		return func(s string, f func(string)) {
			var apply func(i int, s string)
			apply = func(i int, s string) {
				if i == len(ps) {
					f(s)
					return
				}
				ps[i](s, func(x string) { apply(i+1, x) })
			}
			apply(0, s)
		}, nil
	default:
		return nil, fmt.Errorf("tokenizer.json: pre_tokenizer %q is not supported", p.Type)
	}
}

// splitBert splits on whitespace and makes every punctuation character a
// word of its own.
func splitBert(s string, f func(string)) {
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				f(s[start:i])
				start = -1
			}
		case isBertPunct(r):
			if start >= 0 {
				f(s[start:i])
				start = -1
			}
			f(s[i : i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		f(s[start:])
	}
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.M, r)
}

func splitWordsAndSymbols(s string, f func(string)) {
	start, kind := -1, 0 // kind 1 = word, 2 = symbols
	for i, r := range s {
		k := 2
		if unicode.IsSpace(r) {
			k = 0
		} else if isWordRune(r) {
			k = 1
		}
		if k != kind && start >= 0 {
			f(s[start:i])
			start = -1
		}
		if k != 0 && start < 0 {
			start = i
		}
		kind = k
	}
	if start >= 0 {
		f(s[start:])
	}
}

// wordPiece is greedy longest-match-first sub-word tokenisation.
type wordPiece struct {
	vocab    map[string]int
	prefix   string
	maxChars int
	unk      int
}

func (wp *wordPiece) encode(w string, emit func(int)) {
	if utf8.RuneCountInString(w) > wp.maxChars {
		if wp.unk >= 0 {
			emit(wp.unk)
		}
		return
	}
	if id, ok := wp.vocab[w]; ok { // the common case: a whole word
		emit(id)
		return
	}
	var ids [32]int
	out := ids[:0]
	var buf [128]byte
	for start := 0; start < len(w); {
		end := len(w)
		found := -1
		for end > start {
			var key string
			if start > 0 {
				k := append(append(buf[:0], wp.prefix...), w[start:end]...)
				if id, ok := wp.vocab[string(k)]; ok {
					found = id
					break
				}
			} else {
				key = w[start:end]
				if id, ok := wp.vocab[key]; ok {
					found = id
					break
				}
			}
			// Step back one rune.
			_, sz := utf8.DecodeLastRuneInString(w[start:end])
			end -= sz
		}
		if found < 0 {
			if wp.unk >= 0 {
				emit(wp.unk)
			}
			return
		}
		out = append(out, found)
		start = end
	}
	for _, id := range out {
		emit(id)
	}
}

type unigramPiece struct {
	id    int
	score float64
}

// unigram segments a word into the pieces that maximise the summed log
// probability (Viterbi), as SentencePiece's unigram model does.
type unigram struct {
	pieces   map[string]unigramPiece
	maxLen   int
	unk      int
	unkScore float64
}

func (u *unigram) encode(w string, emit func(int)) {
	n := len(w)
	best := make([]float64, n+1)
	back := make([]int, n+1)
	ids := make([]int, n+1)
	for i := 1; i <= n; i++ {
		best[i] = math.Inf(-1)
	}
	for i := 0; i < n; i++ {
		if math.IsInf(best[i], -1) || !utf8.RuneStart(w[i]) {
			continue
		}
		_, rl := utf8.DecodeRuneInString(w[i:])
		for l := 1; l <= u.maxLen && i+l <= n; l++ {
			if p, ok := u.pieces[w[i:i+l]]; ok {
				if s := best[i] + p.score; s > best[i+l] {
					best[i+l], back[i+l], ids[i+l] = s, i, p.id
				}
			}
		}
		// An unknown character is one unk piece.
		if s := best[i] + u.unkScore; s > best[i+rl] {
			best[i+rl], back[i+rl], ids[i+rl] = s, i, -1
		}
	}
	var rev []int
	for i := n; i > 0; i = back[i] {
		rev = append(rev, ids[i])
	}
	prevUnk := false
	for k := len(rev) - 1; k >= 0; k-- {
		id := rev[k]
		if id < 0 {
			if u.unk >= 0 && !prevUnk { // consecutive unknowns fuse, as in SentencePiece
				emit(u.unk)
			}
			prevUnk = true
			continue
		}
		prevUnk = false
		emit(id)
	}
}

// bpe is byte-pair encoding: a word starts as single characters and the
// adjacent pair with the best (lowest) merge rank is merged until no
// listed pair remains.
type bpe struct {
	vocab        map[string]int
	ranks        map[[2]string]int
	unk          int
	fuseUnk      bool
	byteFallback bool
	prefix       string // continuing_subword_prefix
	suffix       string // end_of_word_suffix
	ignoreMerges bool
}

func parseBPE(raw json.RawMessage) (*bpe, error) {
	var m struct {
		Vocab        map[string]int    `json:"vocab"`
		Merges       []json.RawMessage `json:"merges"`
		Unk          *string           `json:"unk_token"`
		FuseUnk      bool              `json:"fuse_unk"`
		ByteFallback bool              `json:"byte_fallback"`
		Prefix       *string           `json:"continuing_subword_prefix"`
		Suffix       *string           `json:"end_of_word_suffix"`
		IgnoreMerges bool              `json:"ignore_merges"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("tokenizer.json BPE model: %w", err)
	}
	b := &bpe{vocab: m.Vocab, ranks: make(map[[2]string]int, len(m.Merges)), unk: -1, fuseUnk: m.FuseUnk,
		byteFallback: m.ByteFallback, ignoreMerges: m.IgnoreMerges}
	if m.Unk != nil {
		if id, ok := m.Vocab[*m.Unk]; ok {
			b.unk = id
		}
	}
	if m.Prefix != nil {
		b.prefix = *m.Prefix
	}
	if m.Suffix != nil {
		b.suffix = *m.Suffix
	}
	for i, raw := range m.Merges {
		// Either "a b" or ["a", "b"].
		var pair [2]string
		var str string
		if err := json.Unmarshal(raw, &str); err == nil {
			a, c, ok := strings.Cut(str, " ")
			if !ok {
				return nil, fmt.Errorf("tokenizer.json BPE merge %d: %q is not a pair", i, str)
			}
			pair = [2]string{a, c}
		} else if err := json.Unmarshal(raw, &pair); err != nil {
			return nil, fmt.Errorf("tokenizer.json BPE merge %d: %w", i, err)
		}
		if _, dup := b.ranks[pair]; !dup {
			b.ranks[pair] = i
		}
	}
	return b, nil
}

// bpeMaxWord bounds the bytes merged at once: merging is quadratic in the
// word's length and message text is untrusted, so longer words are
// encoded in pieces.
const bpeMaxWord = 256

func (b *bpe) encode(w string, emit func(int)) {
	for len(w) > bpeMaxWord {
		cut := bpeMaxWord
		for cut > 0 && !utf8.RuneStart(w[cut]) {
			cut--
		}
		b.encodeWord(w[:cut], emit)
		w = w[cut:]
	}
	b.encodeWord(w, emit)
}

func (b *bpe) encodeWord(w string, emit func(int)) {
	if w == "" {
		return
	}
	if b.ignoreMerges {
		if id, ok := b.vocab[w+b.suffix]; ok {
			emit(id)
			return
		}
	}
	var syms []string
	for i, r := range w {
		s := string(r)
		if i > 0 {
			s = b.prefix + s
		}
		syms = append(syms, s)
	}
	syms[len(syms)-1] += b.suffix
	for len(syms) > 1 {
		best, at := -1, -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := b.ranks[[2]string{syms[i], syms[i+1]}]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		merged := syms[at] + strings.TrimPrefix(syms[at+1], b.prefix)
		syms = append(syms[:at+1], syms[at+2:]...)
		syms[at] = merged
	}
	prevUnk := false
	for _, s := range syms {
		if id, ok := b.vocab[s]; ok {
			emit(id)
			prevUnk = false
			continue
		}
		if b.byteFallback {
			ok := true
			var ids []int
			for i := 0; i < len(s); i++ {
				id, found := b.vocab[fmt.Sprintf("<0x%02X>", s[i])]
				if !found {
					ok = false
					break
				}
				ids = append(ids, id)
			}
			if ok {
				for _, id := range ids {
					emit(id)
				}
				prevUnk = false
				continue
			}
		}
		if b.unk >= 0 && !(b.fuseUnk && prevUnk) {
			emit(b.unk)
		}
		prevUnk = true
	}
}

// byteToRune is GPT-2's reversible map from bytes to printable runes used
// by byte-level BPE: printable Latin-1 bytes map to themselves, the others
// to U+0100 onwards.
var byteToRune = func() [256]rune {
	var m [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

func byteLevelEncode(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		sb.WriteRune(byteToRune[s[i]])
	}
	return sb.String()
}

// splitGPT2 splits like GPT-2's pattern
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (written out by hand: Go's regexp has no look-ahead).
func splitGPT2(s string, f func(string)) {
	class := func(r rune) int {
		switch {
		case unicode.IsLetter(r):
			return 1
		case unicode.IsNumber(r):
			return 2
		case unicode.IsSpace(r):
			return 0
		}
		return 3
	}
	for i := 0; i < len(s); {
		if s[i] == '\'' {
			matched := false
			for _, c := range []string{"s", "t", "re", "ve", "m", "ll", "d"} {
				if strings.HasPrefix(s[i+1:], c) {
					f(s[i : i+1+len(c)])
					i += 1 + len(c)
					matched = true
					break
				}
			}
			if matched {
				continue
			}
		}
		j := i
		if s[i] == ' ' && i+1 < len(s) {
			if r, _ := utf8.DecodeRuneInString(s[i+1:]); class(r) != 0 {
				j = i + 1
			}
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if c := class(r); c != 0 {
			k := j + size
			for k < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[k:])
				if class(r2) != c {
					break
				}
				k += sz
			}
			f(s[i:k])
			i = k
			continue
		}
		// A whitespace run: all of it at the end of the text, else all but
		// its last character (which may lead the next word).
		k := i
		var last int
		for k < len(s) {
			r2, sz := utf8.DecodeRuneInString(s[k:])
			if class(r2) != 0 {
				break
			}
			last = sz
			k += sz
		}
		if k < len(s) && k-last > i {
			k -= last
		}
		f(s[i:k])
		i = k
	}
}
