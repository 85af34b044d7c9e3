package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// HTTP calls an OpenAI-compatible embeddings endpoint (OpenAI, Ollama's
// /v1, llama.cpp server, vLLM, LM Studio …). Texts are sent in batches;
// a request that fails with 429, 5xx or a network error is retried with
// exponential backoff (honouring Retry-After); vectors are L2-normalised.
type HTTP struct {
	endpoint  string
	model     string
	apiKey    string
	batch     int
	client    *http.Client
	dim       atomic.Int64
	fixedDim  bool
	attempts  int
	baseDelay time.Duration
	maxDelay  time.Duration
}

// HTTP defaults.
const (
	DefaultHTTPTimeout   = 30 * time.Second
	DefaultHTTPBatchSize = 64
	httpMaxAttempts      = 5
	httpMaxResponse      = 256 << 20
)

// NewHTTP validates cfg and returns the embedder; it does not contact the
// server (see Probe).
func NewHTTP(cfg Config) (*HTTP, error) {
	if cfg.URL == "" {
		return nil, errors.New("http embedder: url is not set")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("http embedder: url %q is not an http(s) URL", cfg.URL)
	}
	if cfg.Model == "" {
		return nil, errors.New("http embedder: model is not set")
	}
	ep := strings.TrimRight(cfg.URL, "/")
	if !strings.HasSuffix(ep, "/embeddings") {
		if !strings.HasSuffix(ep, "/v1") {
			ep += "/v1"
		}
		ep += "/embeddings"
	}
	h := &HTTP{endpoint: ep, model: cfg.Model, apiKey: cfg.APIKey, batch: cfg.BatchSize,
		attempts: httpMaxAttempts, baseDelay: 250 * time.Millisecond, maxDelay: 8 * time.Second}
	if h.batch <= 0 {
		h.batch = DefaultHTTPBatchSize
	}
	t := cfg.Timeout
	if t <= 0 {
		t = DefaultHTTPTimeout
	}
	h.client = &http.Client{Timeout: t}
	if cfg.Dim < 0 {
		return nil, fmt.Errorf("http embedder: dim %d is negative", cfg.Dim)
	}
	if cfg.Dim > 0 {
		h.dim.Store(int64(cfg.Dim))
		h.fixedDim = true
	}
	return h, nil
}

// ID implements Embedder: model and endpoint (without any user:password
// part, which must not reach status output). The dimension is not part of
// it because a model has one dimension.
func (h *HTTP) ID() string {
	ep := h.endpoint
	if u, err := url.Parse(ep); err == nil && u.User != nil {
		u.User = nil
		ep = u.String()
	}
	return "http/" + h.model + "@" + ep
}

// Dim implements Embedder: the configured dimension, else the one learned
// from the first successful response (0 before it; see Probe).
func (h *HTTP) Dim() int { return int(h.dim.Load()) }

// Probe embeds one short text to learn and return the dimension.
func (h *HTTP) Probe(ctx context.Context) (int, error) {
	if _, err := h.Embed(ctx, []string{"dimension probe"}); err != nil {
		return 0, err
	}
	return h.Dim(), nil
}

// Embed implements Embedder. Blank texts get the zero vector without a
// request (endpoints reject empty input).
func (h *HTTP) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var idx []int
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		vecs, err := h.post(ctx, batch)
		if err != nil {
			return err
		}
		for k, i := range idx {
			out[i] = vecs[k]
		}
		idx, batch = idx[:0], batch[:0]
		return nil
	}
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			continue
		}
		idx = append(idx, i)
		batch = append(batch, t)
		if len(batch) == h.batch {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	d := h.Dim()
	for i := range out {
		if out[i] == nil {
			out[i] = make([]float32, d)
		}
	}
	return out, nil
}

// httpStatusError is a non-2xx answer.
type httpStatusError struct {
	code int
	body string
}

func (e *httpStatusError) Error() string {
	if e.body == "" {
		return fmt.Sprintf("status %d", e.code)
	}
	return fmt.Sprintf("status %d: %s", e.code, e.body)
}

func (h *HTTP) post(ctx context.Context, batch []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"model": h.model, "input": batch, "encoding_format": "float"})
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 1; attempt <= h.attempts; attempt++ {
		vecs, retryAfter, err := h.once(ctx, body, len(batch))
		if err == nil {
			return vecs, nil
		}
		lastErr = err
		var se *httpStatusError
		retry := ctx.Err() == nil
		if errors.As(err, &se) {
			retry = retry && (se.code == http.StatusTooManyRequests || se.code >= 500)
		} else if errors.Is(err, errBadResponse) {
			retry = false
		}
		if !retry || attempt == h.attempts {
			break
		}
		delay := h.baseDelay << (attempt - 1)
		if retryAfter > 0 {
			delay = retryAfter
		}
		delay = min(delay, h.maxDelay)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("http embedder %s: %w (after: %v)", h.endpoint, ctx.Err(), lastErr)
		case <-time.After(delay):
		}
	}
	return nil, fmt.Errorf("http embedder %s (model %s): %w", h.endpoint, h.model, lastErr)
}

var errBadResponse = errors.New("invalid embeddings response")

func (h *HTTP) once(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if h.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.apiKey)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, httpMaxResponse))
	if err != nil {
		return nil, 0, fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		var ra time.Duration
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			ra = time.Duration(s) * time.Second
		}
		return nil, ra, &httpStatusError{resp.StatusCode, errorMessage(raw)}
	}
	var r struct {
		Data []struct {
			Index     *int      `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", errBadResponse, err)
	}
	if len(r.Data) != n {
		return nil, 0, fmt.Errorf("%w: %d embeddings for %d inputs", errBadResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for k, d := range r.Data {
		i := k
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i >= n || out[i] != nil {
			return nil, 0, fmt.Errorf("%w: bad or repeated index %d", errBadResponse, i)
		}
		if len(d.Embedding) == 0 {
			return nil, 0, fmt.Errorf("%w: empty embedding", errBadResponse)
		}
		want := int(h.dim.Load())
		if want == 0 && !h.fixedDim {
			h.dim.CompareAndSwap(0, int64(len(d.Embedding)))
			want = int(h.dim.Load())
		}
		if len(d.Embedding) != want {
			return nil, 0, fmt.Errorf("%w: embedding of %d dimensions, want %d", errBadResponse, len(d.Embedding), want)
		}
		v := make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, 0, fmt.Errorf("%w: non-finite value", errBadResponse)
			}
			v[j] = float32(x)
		}
		normalize(v)
		out[i] = v
	}
	return out, 0, nil
}

// errorMessage extracts {"error":{"message":…}} or {"error":"…"} from an
// error body, else a short prefix of it.
func errorMessage(raw []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && len(e.Error) > 0 {
		var s string
		if json.Unmarshal(e.Error, &s) == nil {
			return s
		}
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &o) == nil && o.Message != "" {
			return o.Message
		}
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
