// Package embedtest builds a tiny but real Model2Vec model — a safetensors
// file and a WordPiece tokenizer.json in the layout of the potion models —
// so that the loader, the embedder and `tidings models pull` can be tested
// without network access or downloaded weights.
package embedtest

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
)

// Vocab is the tiny model's WordPiece vocabulary, in id order.
var Vocab = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
	"!", ",", ".", "$", "'",
	"hello", "world", "you", "still", "owe", "me", "for", "the", "money", "cafe",
	"tick", "##et", "##s", "##ing", "play", "40", "concert", "sam",
}

// Dim is the tiny model's vector length.
const Dim = 8

// Embeddings returns the tiny model's matrix (len(Vocab) × Dim), fixed by
// a seed.
func Embeddings() []float32 {
	r := rand.New(rand.NewPCG(42, 43))
	m := make([]float32, len(Vocab)*Dim)
	for i := range m {
		m[i] = float32(r.NormFloat64())
	}
	return m
}

// TokenizerJSON returns a tokenizer.json with the normaliser, pre-tokeniser
// and model that potion-base models use (BertNormalizer, BertPreTokenizer,
// WordPiece).
func TokenizerJSON() []byte { return WordPieceJSON(Vocab) }

// WordPieceJSON returns a potion-style tokenizer.json whose WordPiece
// vocabulary is tokens (ids in order); tokens[1] should be "[UNK]".
func WordPieceJSON(tokens []string) []byte {
	vocab := map[string]int{}
	for i, t := range tokens {
		vocab[t] = i
	}
	tj := map[string]any{
		"version":    "1.0",
		"truncation": nil,
		"padding":    nil,
		"added_tokens": []map[string]any{
			{"id": 0, "content": "[PAD]", "special": true},
			{"id": 1, "content": "[UNK]", "special": true},
			{"id": 2, "content": "[CLS]", "special": true},
			{"id": 3, "content": "[SEP]", "special": true},
			{"id": 4, "content": "[MASK]", "special": true},
		},
		"normalizer": map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
			"strip_accents": nil, "lowercase": true},
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{"type": "TemplateProcessing"},
		"decoder":        map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": vocab},
	}
	b, err := json.Marshal(tj)
	if err != nil {
		panic(err)
	}
	return b
}

// Safetensors encodes named F32 tensors with their shapes in the
// safetensors format.
func Safetensors(tensors map[string][]float32, shapes map[string][]int) []byte {
	names := make([]string, 0, len(tensors))
	for n := range tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	hdr := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	for _, n := range names {
		start := len(data)
		for _, x := range tensors[n] {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
		}
		hdr[n] = map[string]any{"dtype": "F32", "shape": shapes[n], "data_offsets": []int{start, len(data)}}
	}
	h, err := json.Marshal(hdr)
	if err != nil {
		panic(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	return append(append(out, h...), data...)
}

// ModelSafetensors returns the tiny model's model.safetensors.
func ModelSafetensors() []byte {
	return Safetensors(map[string][]float32{"embeddings": Embeddings()},
		map[string][]int{"embeddings": {len(Vocab), Dim}})
}

// Files returns every file of the tiny model directory by name.
func Files() map[string][]byte {
	return map[string][]byte{
		"model.safetensors": ModelSafetensors(),
		"tokenizer.json":    TokenizerJSON(),
		"config.json":       []byte(`{"model_type": "model2vec", "normalize": true, "hidden_dim": 8}`),
		"README.md":         []byte("---\nlicense: mit\n---\n# tiny test model\n"),
	}
}

// WriteModel writes the tiny model into dir.
func WriteModel(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, b := range Files() {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
