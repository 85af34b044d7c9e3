// Package embed turns message text into vectors for semantic search.
//
// Three embedders share one interface: the built-in one (the default: works
// offline with no download, learns from the user's own corpus on top of a
// compact English lexicon derived from WordNet), a Model2Vec-format static
// model read from disk (model.safetensors + tokenizer.json, fetched with
// `tidings models pull`), and any OpenAI-compatible /v1/embeddings endpoint.
// All return L2-normalised float32 vectors, so cosine similarity is a dot
// product.
package embed

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Embedder maps texts to unit-length vectors. Implementations are safe for
// concurrent use.
type Embedder interface {
	// ID is a stable identity that includes the implementation, its version
	// and every parameter that changes the vectors (model, dimensions,
	// fitted state). Vectors made under different IDs are not comparable:
	// when the ID changes the index must re-embed.
	ID() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed returns one vector per text, in order. A text with no words
	// yields the zero vector; every other vector has unit length.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Fitter is an Embedder that learns from the user's own corpus. The index
// calls Fit once over its messages, persists MarshalBinary's output, and
// restores it with UnmarshalBinary on the next start instead of fitting
// again. Fit and UnmarshalBinary change ID.
type Fitter interface {
	Embedder
	// Fit learns from docs, which yields message texts until it returns or
	// yield returns false. It may sample; it must not retain the texts.
	Fit(ctx context.Context, docs func(yield func(string) bool)) error
	MarshalBinary() ([]byte, error)
	UnmarshalBinary(data []byte) error
}

// Embedder names accepted by Config.Name.
const (
	NameBuiltin   = "builtin"
	NameModel2Vec = "model2vec"
	NameHTTP      = "http"
)

// External reports whether the embedder called name sends message text out
// of this process: the http embedder does, to whatever listens at its URL,
// loopback included; builtin and model2vec compute locally. With
// allow_external = false an external embedder is not built at all
// (docs/embeddings.md, "allow_external").
func External(name string) bool { return name == NameHTTP }

// DefaultName is the embedder used when nothing is configured.
const DefaultName = NameBuiltin

// Config selects and parameterises an embedder.
type Config struct {
	// Name is "builtin" (default when empty), "model2vec" or "http".
	Name string `toml:"name"`
	// ModelDir is the model2vec model directory (model.safetensors +
	// tokenizer.json), e.g. $TIDINGS_HOME/models/minishlab/potion-base-8M.
	// When empty, New resolves Model against Home (see ResolveModelDir).
	ModelDir string `toml:"model_dir"`
	// Home is TIDINGS_HOME, used to find pulled models by name.
	Home string `toml:"-"`
	// URL is the http embedder's base URL, e.g. http://127.0.0.1:11434/v1
	// (…/v1/embeddings is appended unless the URL already ends with
	// /embeddings).
	URL string `toml:"url"`
	// Model is the model name sent to the http endpoint, or for model2vec
	// a pulled model's name ("minishlab/potion-base-8M") or folder.
	Model string `toml:"model"`
	// APIKey is sent as a bearer token when set. It comes from the
	// environment (config's api_key_env), never from a file.
	APIKey string `toml:"-"`
	// Timeout bounds one HTTP request (default 30 s).
	Timeout time.Duration `toml:"timeout"`
	// BatchSize is the number of texts per HTTP request (default 64).
	BatchSize int `toml:"batch_size"`
	// Dim is the expected vector length of the http embedder; 0 means learn
	// it from the first response.
	Dim int `toml:"dim"`
}

// ErrUnknownEmbedder is returned by New for an unrecognised Config.Name.
var ErrUnknownEmbedder = errors.New("unknown embedder")

// New builds the embedder cfg names. The built-in embedder is returned
// unfitted; if it implements Fitter, the caller fits it or restores state.
func New(cfg Config) (Embedder, error) {
	switch cfg.Name {
	case "", NameBuiltin:
		b, err := NewBuiltin()
		if err != nil {
			return nil, err
		}
		return b, nil
	case NameModel2Vec:
		dir := cfg.ModelDir
		if dir == "" && cfg.Model != "" && cfg.Home != "" {
			dir = ResolveModelDir(cfg.Home, cfg.Model)
		}
		if dir == "" {
			return nil, errors.New("model2vec embedder: no model configured (set the model to a name pulled with 'tidings models pull NAME', or to a folder)")
		}
		m, err := LoadModel2Vec(dir)
		if err != nil {
			return nil, err
		}
		return m, nil
	case NameHTTP:
		h, err := NewHTTP(cfg)
		if err != nil {
			return nil, err
		}
		return h, nil
	default:
		return nil, fmt.Errorf("%w %q (want %s, %s or %s)", ErrUnknownEmbedder, cfg.Name, NameBuiltin, NameModel2Vec, NameHTTP)
	}
}
