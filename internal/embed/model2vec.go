package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Model2VecMaxTokens is the number of tokens per text that contribute to
// its vector, as in the reference implementation's default.
const Model2VecMaxTokens = 512

// model2VecMaxBytes bounds the text tokenised per input: 512 tokens never
// need more, and message text is untrusted.
const model2VecMaxBytes = 32 << 10

// clip cuts s to at most model2VecMaxBytes at a rune boundary.
func clip(s string) string {
	if len(s) <= model2VecMaxBytes {
		return s
	}
	cut := model2VecMaxBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Model2Vec is a static embedding model in the Model2Vec layout: a
// model.safetensors file with an "embeddings" matrix (vocabulary × dim; F32,
// F16, BF16, F64 or I8), optional per-token "weights" and optional
// "mapping" from token id to row, plus a Hugging Face tokenizer.json. A
// text's vector is the mean of its tokens' rows (unknown tokens dropped),
// L2-normalised.
type Model2Vec struct {
	tok     *tokenizer
	emb     []float32
	rows    int
	dim     int
	weights []float32
	mapping []int64
	id      string
}

// Model files a Model2Vec directory must contain.
const (
	Model2VecWeightsFile   = "model.safetensors"
	Model2VecTokenizerFile = "tokenizer.json"
)

// LoadModel2Vec reads a Model2Vec model from dir.
func LoadModel2Vec(dir string) (*Model2Vec, error) {
	wb, err := os.ReadFile(filepath.Join(dir, Model2VecWeightsFile))
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	tb, err := os.ReadFile(filepath.Join(dir, Model2VecTokenizerFile))
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	m, err := NewModel2Vec(wb, tb)
	if err != nil {
		return nil, fmt.Errorf("model2vec %s: %w", dir, err)
	}
	return m, nil
}

// NewModel2Vec builds a model from the bytes of model.safetensors and
// tokenizer.json.
func NewModel2Vec(safetensors, tokenizerJSON []byte) (*Model2Vec, error) {
	ts, err := parseSafetensors(safetensors)
	if err != nil {
		return nil, err
	}
	tok, err := parseTokenizer(tokenizerJSON)
	if err != nil {
		return nil, err
	}
	e, ok := ts["embeddings"]
	if !ok {
		// Sentence Transformers' StaticEmbedding module names it so.
		e, ok = ts["embedding.weight"]
	}
	if !ok {
		return nil, errors.New(`safetensors: no "embeddings" tensor`)
	}
	if len(e.shape) != 2 || e.f32 == nil || e.shape[0] == 0 || e.shape[1] == 0 {
		return nil, fmt.Errorf("safetensors: embeddings must be a non-empty float matrix, got %s %v", e.dtype, e.shape)
	}
	m := &Model2Vec{tok: tok, emb: e.f32, rows: e.shape[0], dim: e.shape[1]}
	if w, ok := ts["weights"]; ok {
		if w.f32 == nil || len(w.f32) != tok.vocabSize && len(w.f32) != m.rows {
			return nil, fmt.Errorf("safetensors: weights has %d values for %d tokens", len(w.f32), tok.vocabSize)
		}
		m.weights = w.f32
	}
	if mp, ok := ts["mapping"]; ok {
		if mp.i64 == nil {
			return nil, fmt.Errorf("safetensors: mapping must be an integer tensor, got %s", mp.dtype)
		}
		for _, r := range mp.i64 {
			if r < 0 || r >= int64(m.rows) {
				return nil, fmt.Errorf("safetensors: mapping row %d outside %d embeddings", r, m.rows)
			}
		}
		m.mapping = mp.i64
	} else if tok.vocabSize > m.rows {
		return nil, fmt.Errorf("tokenizer has %d tokens but the model only %d embeddings", tok.vocabSize, m.rows)
	}
	h := sha256.New()
	h.Write(safetensors)
	h.Write(tokenizerJSON)
	m.id = fmt.Sprintf("model2vec/%s/d%d", hex.EncodeToString(h.Sum(nil)[:8]), m.dim)
	return m, nil
}

// ID implements Embedder: a hash of the model and tokenizer files.
func (m *Model2Vec) ID() string { return m.id }

// Dim implements Embedder.
func (m *Model2Vec) Dim() int { return m.dim }

// Tokens returns the token ids the model uses for text (unknown tokens
// dropped, at most Model2VecMaxTokens).
func (m *Model2Vec) Tokens(text string) []int {
	var ids []int
	m.tok.encode(clip(text), func(id int) {
		if id != m.tok.unkID && len(ids) < Model2VecMaxTokens {
			ids = append(ids, id)
		}
	})
	return ids
}

// Embed implements Embedder.
func (m *Model2Vec) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	slab := make([]float32, len(texts)*m.dim)
	for i, t := range texts {
		if i&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		acc := slab[i*m.dim : (i+1)*m.dim : (i+1)*m.dim]
		n := 0
		m.tok.encode(clip(t), func(id int) {
			if id == m.tok.unkID || n >= Model2VecMaxTokens || id < 0 {
				return
			}
			row := id
			if m.mapping != nil {
				if id >= len(m.mapping) {
					return
				}
				row = int(m.mapping[id])
			}
			if row >= m.rows {
				return
			}
			n++
			w := float32(1)
			if m.weights != nil {
				if id < len(m.weights) {
					w = m.weights[id]
				} else {
					w = m.weights[row]
				}
			}
			v := m.emb[row*m.dim : (row+1)*m.dim]
			for j, x := range v {
				acc[j] += w * x
			}
		})
		normalize(acc)
		out[i] = acc
	}
	return out, nil
}

// ReadModelConfig returns config.json of a model directory, if present;
// it is informational (e.g. the base model name).
func ReadModelConfig(dir string) (map[string]any, error) {
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, err
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("config.json: %w", err)
	}
	return c, nil
}

// ModelsDir is the folder under TIDINGS_HOME that `tidings models pull`
// installs into: $TIDINGS_HOME/models/<owner>/<name>.
const ModelsDir = "models"

// ResolveModelDir maps a configured model to its folder: a path to an
// existing directory is used as is; anything else is taken as a hub name
// ("minishlab/potion-base-8M") pulled into home's models folder.
func ResolveModelDir(home, model string) string {
	if st, err := os.Stat(model); err == nil && st.IsDir() && (filepath.IsAbs(model) || strings.HasPrefix(model, ".")) {
		return model
	}
	return filepath.Join(home, ModelsDir, filepath.FromSlash(model))
}
