package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeEmbeddings serves /v1/embeddings: each input's vector is
// [len(text), 1, 0] (unnormalised, to check that the client normalises),
// returned in reverse order with explicit indices.
func fakeEmbeddings(t *testing.T, requests *atomic.Int32, fail func(n int32, w http.ResponseWriter) bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if fail != nil && fail(n, w) {
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sekret" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"invalid api key"}}`)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			if req.Input[i] == "" {
				t.Errorf("empty input sent")
			}
			data = append(data, item{i, []float64{float64(len(req.Input[i])), 1, 0}})
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data})
	}))
}

func newTestHTTP(t *testing.T, url string, batch int) *HTTP {
	t.Helper()
	h, err := NewHTTP(Config{Name: NameHTTP, URL: url, Model: "nomic-embed-text", APIKey: "sekret", BatchSize: batch, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	h.baseDelay, h.maxDelay = time.Millisecond, 5*time.Millisecond
	return h
}

func TestHTTPBatchesOrdersAndNormalises(t *testing.T) {
	var reqs atomic.Int32
	srv := fakeEmbeddings(t, &reqs, nil)
	defer srv.Close()
	h := newTestHTTP(t, srv.URL, 2)
	if h.Dim() != 0 {
		t.Fatalf("Dim before any response = %d, want 0", h.Dim())
	}
	texts := []string{"a", "bbb", "", "cc", "dddd"}
	vs, err := h.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if got := reqs.Load(); got != 2 { // 4 non-blank texts in batches of 2
		t.Fatalf("%d requests, want 2", got)
	}
	if h.Dim() != 3 {
		t.Fatalf("Dim = %d, want 3", h.Dim())
	}
	for i, text := range texts {
		if text == "" {
			if norm2(vs[i]) != 0 || len(vs[i]) != 3 {
				t.Fatalf("blank text: %v, want a zero vector of 3", vs[i])
			}
			continue
		}
		l := float64(len(text))
		want := l / math.Sqrt(l*l+1)
		if math.Abs(float64(vs[i][0])-want) > 1e-6 {
			t.Fatalf("%q: got %v, want first component %v", text, vs[i], want)
		}
	}
	if d, err := h.Probe(context.Background()); err != nil || d != 3 {
		t.Fatalf("Probe = %d, %v", d, err)
	}
	if !strings.Contains(h.ID(), "nomic-embed-text") {
		t.Fatalf("ID %q lacks the model", h.ID())
	}
	withUser, _ := NewHTTP(Config{URL: "http://user:secret@127.0.0.1:1/v1", Model: "m", APIKey: "k"})
	if id := withUser.ID(); strings.Contains(id, "secret") || strings.Contains(id, "user") || !strings.Contains(id, "127.0.0.1:1") {
		t.Fatalf("ID %q must name the endpoint without credentials", id)
	}
}

func TestHTTPRetriesThenSucceeds(t *testing.T) {
	for _, code := range []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			var reqs atomic.Int32
			srv := fakeEmbeddings(t, &reqs, func(n int32, w http.ResponseWriter) bool {
				if n <= 2 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(code)
					return true
				}
				return false
			})
			defer srv.Close()
			if _, err := newTestHTTP(t, srv.URL+"/v1", 8).Embed(context.Background(), []string{"x"}); err != nil {
				t.Fatal(err)
			}
			if reqs.Load() != 3 {
				t.Fatalf("%d requests, want 3", reqs.Load())
			}
		})
	}
}

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name     string
		fail     func(int32, http.ResponseWriter) bool
		wantReqs int32
		contains string
	}{
		{"persistent 500", func(_ int32, w http.ResponseWriter) bool {
			w.WriteHeader(500)
			fmt.Fprint(w, `{"error":"model is loading"}`)
			return true
		}, httpMaxAttempts, "status 500: model is loading"},
		{"400 is not retried", func(_ int32, w http.ResponseWriter) bool {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"message":"input too long"}}`)
			return true
		}, 1, "status 400: input too long"},
		{"wrong count", func(_ int32, w http.ResponseWriter) bool {
			fmt.Fprint(w, `{"data":[]}`)
			return true
		}, 1, "0 embeddings for 1 inputs"},
		{"not json", func(_ int32, w http.ResponseWriter) bool {
			fmt.Fprint(w, `<html>`)
			return true
		}, 1, "invalid embeddings response"},
		{"duplicate index", func(_ int32, w http.ResponseWriter) bool {
			fmt.Fprint(w, `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`)
			return true
		}, 1, "repeated index"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reqs atomic.Int32
			srv := fakeEmbeddings(t, &reqs, tt.fail)
			defer srv.Close()
			texts := []string{"x"}
			if tt.name == "duplicate index" {
				texts = []string{"x", "y"}
			}
			_, err := newTestHTTP(t, srv.URL, 8).Embed(context.Background(), texts)
			if err == nil || !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("err = %v, want one containing %q", err, tt.contains)
			}
			if reqs.Load() != tt.wantReqs {
				t.Fatalf("%d requests, want %d", reqs.Load(), tt.wantReqs)
			}
		})
	}
}

func TestHTTPAuthAndDimMismatch(t *testing.T) {
	var reqs atomic.Int32
	srv := fakeEmbeddings(t, &reqs, nil)
	defer srv.Close()
	h, _ := NewHTTP(Config{URL: srv.URL, Model: "m", APIKey: "wrong"})
	if _, err := h.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "invalid api key") {
		t.Fatalf("bad key: %v", err)
	}
	h2, _ := NewHTTP(Config{URL: srv.URL, Model: "m", APIKey: "sekret", Dim: 768})
	if _, err := h2.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "want 768") {
		t.Fatalf("dim mismatch: %v", err)
	}
}

func TestHTTPTimeoutAndCancel(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	h, _ := NewHTTP(Config{URL: srv.URL, Model: "m", Timeout: 50 * time.Millisecond})
	h.attempts, h.baseDelay = 2, time.Millisecond
	start := time.Now()
	_, err := h.Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Fatalf("timeout: %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("timeout not enforced")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

func TestNewHTTPValidates(t *testing.T) {
	for _, cfg := range []Config{
		{URL: "", Model: "m"},
		{URL: "ftp://x", Model: "m"},
		{URL: "http://127.0.0.1:1", Model: ""},
		{URL: "http://127.0.0.1:1", Model: "m", Dim: -1},
	} {
		if _, err := NewHTTP(cfg); err == nil {
			t.Errorf("NewHTTP(%+v) accepted", cfg)
		}
	}
	for in, want := range map[string]string{
		"http://127.0.0.1:11434":                 "http://127.0.0.1:11434/v1/embeddings",
		"http://127.0.0.1:11434/v1/":             "http://127.0.0.1:11434/v1/embeddings",
		"https://api.example.test/v1/embeddings": "https://api.example.test/v1/embeddings",
	} {
		h, err := NewHTTP(Config{URL: in, Model: "m"})
		if err != nil || h.endpoint != want {
			t.Errorf("endpoint for %q = %q, %v; want %q", in, h.endpoint, err, want)
		}
	}
}
