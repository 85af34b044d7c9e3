package embed

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/embed/embedtest"
)

func loadTiny(t testing.TB) *Model2Vec {
	t.Helper()
	dir := t.TempDir()
	if err := embedtest.WriteModel(dir); err != nil {
		t.Fatal(err)
	}
	m, err := LoadModel2Vec(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tinyID(tok string) int { return slices.Index(embedtest.Vocab, tok) }

func TestModel2VecTokens(t *testing.T) {
	m := loadTiny(t)
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello, WORLD!", []string{"hello", ",", "world", "!"}},
		{"you still owe me $40 for the tix", []string{"you", "still", "owe", "me", "$", "40", "for", "the"}}, // "tix" is [UNK], dropped
		{"tickets", []string{"tick", "##et", "##s"}},
		{"Café", []string{"cafe"}},
		{"playing\tthe\u00a0concert", []string{"play", "##ing", "the", "concert"}},
		{"Sam's concert", []string{"sam", "'", "concert"}}, // "s" alone is not a word-start token
		{"\x00hello\u200b", []string{"hello"}},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var want []int
			for _, w := range tt.want {
				want = append(want, tinyID(w))
			}
			if got := m.Tokens(tt.in); !slices.Equal(got, want) {
				t.Fatalf("Tokens(%q) = %v, want %v (%q)", tt.in, got, want, tt.want)
			}
		})
	}
}

func TestModel2VecEmbedIsNormalisedMean(t *testing.T) {
	m := loadTiny(t)
	if m.Dim() != embedtest.Dim {
		t.Fatalf("Dim = %d, want %d", m.Dim(), embedtest.Dim)
	}
	emb := embedtest.Embeddings()
	texts := []string{"owe money for tickets", "hello", "zzz qqq", ""}
	got, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		want := make([]float32, embedtest.Dim)
		for _, id := range m.Tokens(text) {
			for j := range want {
				want[j] += emb[id*embedtest.Dim+j]
			}
		}
		normalize(want)
		for j := range want {
			if math.Abs(float64(got[i][j]-want[j])) > 1e-6 {
				t.Fatalf("%q: got %v, want %v", text, got[i], want)
			}
		}
	}
	if n := norm2(got[0]); math.Abs(n-1) > 1e-5 {
		t.Fatalf("norm %v", n)
	}
	if n := norm2(got[2]); n != 0 {
		t.Fatalf("all-unknown text: norm %v, want 0", n)
	}
	if !strings.HasPrefix(m.ID(), "model2vec/") || !strings.HasSuffix(m.ID(), "/d8") {
		t.Fatalf("ID %q", m.ID())
	}
}

func TestModel2VecWeightsMappingAndF16(t *testing.T) {
	emb := embedtest.Embeddings()
	n := len(embedtest.Vocab)
	// Two rows only; every token maps to row id%2, weighted by id.
	rows := emb[:2*embedtest.Dim]
	mapping := make([]int64, n)
	weights := make([]float32, n)
	for i := range mapping {
		mapping[i] = int64(i % 2)
		weights[i] = float32(i)
	}
	st := writeSafetensors(map[string]*tensor{
		"embeddings": {dtype: "F16", shape: []int{2, embedtest.Dim}, f32: rows},
		"mapping":    {dtype: "I64", shape: []int{n}, i64: mapping},
		"weights":    {dtype: "F32", shape: []int{n}, f32: weights},
	})
	m, err := NewModel2Vec(st, embedtest.TokenizerJSON())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := m.Embed(context.Background(), []string{"hello world"})
	h, w := tinyID("hello"), tinyID("world")
	want := make([]float32, embedtest.Dim)
	for j := range want {
		want[j] = float32(h)*rows[(h%2)*embedtest.Dim+j] + float32(w)*rows[(w%2)*embedtest.Dim+j]
	}
	normalize(want)
	for j := range want {
		if math.Abs(float64(got[0][j]-want[j])) > 2e-3 { // F16 rounding
			t.Fatalf("got %v, want %v", got[0], want)
		}
	}
}

func TestModel2VecRejectsBadFiles(t *testing.T) {
	good := embedtest.ModelSafetensors()
	tok := embedtest.TokenizerJSON()
	hdrLen := int(good[0]) | int(good[1])<<8
	short := embedtest.Safetensors(map[string][]float32{"embeddings": make([]float32, 4*embedtest.Dim)},
		map[string][]int{"embeddings": {4, embedtest.Dim}})
	var bpe map[string]any
	json.Unmarshal(tok, &bpe)
	bpe["model"] = map[string]any{"type": "WordLevel", "vocab": map[string]int{"a": 0}}
	bpeJSON, _ := json.Marshal(bpe)
	tests := []struct {
		name     string
		st, tok  []byte
		contains string
	}{
		{"empty", nil, tok, "too short"},
		{"header overflow", append([]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, good[8:]...), tok, "exceeds"},
		{"truncated data", good[:len(good)-10], tok, "outside data"},
		{"bad json", append(append([]byte(nil), good[:8]...), strings.Repeat("x", hdrLen)...), tok, "header"},
		{"no embeddings", embedtest.Safetensors(map[string][]float32{"other": {1}}, map[string][]int{"other": {1}}), tok, "no \"embeddings\""},
		{"fewer rows than tokens", short, tok, "embeddings"},
		{"unsupported model", good, bpeJSON, "WordLevel"},
		{"bad tokenizer", good, []byte("{"), "tokenizer.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewModel2Vec(tt.st, tt.tok)
			if err == nil || !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("err = %v, want one containing %q", err, tt.contains)
			}
		})
	}
	if _, err := LoadModel2Vec(filepath.Join(t.TempDir(), "missing")); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Fatalf("missing dir: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func TestUnigramTokenizer(t *testing.T) {
	tj := `{"normalizer":{"type":"Sequence","normalizers":[{"type":"NFKC"},{"type":"Lowercase"}]},
	"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true},
	"model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0],["▁hello",-2],["▁he",-3],["llo",-3],["▁",-4],
	["w",-6],["o",-6],["r",-6],["l",-6],["d",-6],["▁wor",-3],["ld",-3]]}}`
	tok, err := parseTokenizer([]byte(tj))
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	tok.encode("HELLO World ✓", func(id int) { got = append(got, id) })
	// ▁hello (one piece beats ▁he+llo), ▁wor+ld, ▁ then an unknown ✓.
	want := []int{1, 10, 11, 4, 0}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestBPETokenizer(t *testing.T) {
	vocab := map[string]int{"<unk>": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "abc": 5, "Ġ": 6, "Ġab": 7, "x": 8, "<0x21>": 9}
	tests := []struct {
		name   string
		model  map[string]any
		pretok map[string]any
		in     string
		want   []int
	}{
		{"merges by rank", map[string]any{"merges": []string{"a b", "ab c"}}, map[string]any{"type": "WhitespaceSplit"},
			"abcab", []int{5, 4}},
		{"pair-list merges", map[string]any{"merges": [][]string{{"a", "b"}}}, map[string]any{"type": "WhitespaceSplit"},
			"abc", []int{4, 3}},
		{"unknown fused", map[string]any{"merges": []string{"a b"}, "unk_token": "<unk>", "fuse_unk": true},
			map[string]any{"type": "WhitespaceSplit"}, "zzab", []int{0, 4}},
		{"byte fallback", map[string]any{"merges": []string{}, "byte_fallback": true}, map[string]any{"type": "WhitespaceSplit"},
			"a!", []int{1, 9}},
		{"byte level", map[string]any{"merges": []string{"Ġ a", "Ġa b", "a b"}}, map[string]any{"type": "ByteLevel", "add_prefix_space": false},
			"ab ab", []int{4, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]any{"type": "BPE", "vocab": vocab}
			for k, v := range tt.model {
				m[k] = v
			}
			b, _ := json.Marshal(map[string]any{"model": m, "pre_tokenizer": tt.pretok})
			tok, err := parseTokenizer(b)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			tok.encode(tt.in, func(id int) { got = append(got, id) })
			if !slices.Equal(got, tt.want) {
				t.Fatalf("encode(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestLongInputsAreBounded(t *testing.T) {
	vocab := map[string]int{"a": 0, "aa": 1}
	b, _ := json.Marshal(map[string]any{"model": map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{"a a"}}})
	tok, err := parseTokenizer(b)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	tok.encode(strings.Repeat("a", 1<<16), func(int) { n++ }) // unbounded quadratic merging would take minutes
	if n != 1<<15 {
		t.Fatalf("%d tokens, want %d", n, 1<<15)
	}
	m := loadTiny(t)
	long := strings.Repeat("hello ", 100_000)
	if got := len(m.Tokens(long)); got != Model2VecMaxTokens {
		t.Fatalf("%d tokens, want %d", got, Model2VecMaxTokens)
	}
	if got := clip(strings.Repeat("é", 40_000)); len(got) > model2VecMaxBytes || !utf8.ValidString(got) {
		t.Fatalf("clip: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

func TestSplitGPT2(t *testing.T) {
	for in, want := range map[string][]string{
		"Hello world":     {"Hello", " world"},
		"I'm here  now\n": {"I", "'m", " here", " ", " now", "\n"},
		"cost $40, ok?":   {"cost", " $", "40", ",", " ok", "?"},
		"a\nb":            {"a", "\n", "b"},
		"  lead":          {" ", " lead"},
		"end  ":           {"end", "  "},
	} {
		var got []string
		splitGPT2(in, func(s string) { got = append(got, s) })
		if !slices.Equal(got, want) {
			t.Errorf("splitGPT2(%q) = %q, want %q", in, got, want)
		}
	}
	if got := byteLevelEncode(" é"); got != "ĠÃ©" {
		t.Errorf("byteLevelEncode = %q, want %q", got, "ĠÃ©")
	}
}

func TestHalfToFloat(t *testing.T) {
	for _, c := range []struct {
		h uint16
		f float32
	}{{0x3c00, 1}, {0xc000, -2}, {0x0000, 0}, {0x3555, 0.33325195}, {0x0001, 5.9604645e-08}, {0x7bff, 65504}} {
		if got := halfToFloat(c.h); got != c.f {
			t.Errorf("halfToFloat(%#x) = %v, want %v", c.h, got, c.f)
		}
	}
	if !math.IsInf(float64(halfToFloat(0x7c00)), 1) {
		t.Error("0x7c00 must be +Inf")
	}
}

func FuzzParseSafetensors(f *testing.F) {
	f.Add(embedtest.ModelSafetensors())
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, '{', '}'})
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := parseSafetensors(b)
		if err != nil {
			return
		}
		for name, x := range ts {
			n := 1
			for _, d := range x.shape {
				n *= d
			}
			if len(x.f32)+len(x.i64) != n {
				t.Fatalf("%s: %d values for shape %v", name, len(x.f32)+len(x.i64), x.shape)
			}
		}
	})
}

func FuzzTokenizer(f *testing.F) {
	f.Add(embedtest.TokenizerJSON(), "Hello, wörld! tickets 日本")
	f.Add([]byte(`{"model":{"type":"Unigram","unk_id":0,"vocab":[["<unk>",0],["▁a",-1]]},"pre_tokenizer":{"type":"Metaspace"}}`), "a b")
	f.Fuzz(func(t *testing.T, tj []byte, text string) {
		tok, err := parseTokenizer(tj)
		if err != nil {
			return
		}
		tok.encode(text, func(id int) {
			if id < 0 {
				t.Fatalf("negative id %d", id)
			}
		})
	})
}
