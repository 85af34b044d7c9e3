package main

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// countingEmbedder is an OpenAI-compatible /v1/embeddings endpoint on
// loopback that counts every request it receives: the proof that
// allow_external = false means no traffic, loopback included.
type countingEmbedder struct {
	srv *httptest.Server
	n   atomic.Int64
}

func newCountingEmbedder(t *testing.T) *countingEmbedder {
	e := &countingEmbedder{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.n.Add(1)
		var body struct {
			Input []string `json:"input"`
		}
		raw, _ := io.ReadAll(r.Body)
		json.Unmarshal(raw, &body)
		data := make([]map[string]any, len(body.Input))
		for i, s := range body.Input {
			v := make([]float64, 8)
			for j, c := range s {
				v[(j+int(c))%8] += 1
			}
			var norm float64
			for _, x := range v {
				norm += x * x
			}
			if norm == 0 {
				v[0], norm = 1, 1
			}
			for j := range v {
				v[j] /= math.Sqrt(norm)
			}
			data[i] = map[string]any{"index": i, "embedding": v}
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data, "model": "count"})
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// With allow_external = false — from config.toml's environment variable
// or from the profile — an http embedder on loopback receives nothing:
// not while `tidings index` syncs and embeds, not while `tidings serve`
// syncs, and not when search_messages runs (its query would otherwise be
// embedded there). search_messages stays registered with openWorldHint
// false and says that it matched words only, as get_status.search does.
// With it allowed, the same setup does reach the endpoint (the control
// that shows the counter can count) and search_messages declares
// openWorldHint true (docs/security.md, "Open world").
func TestExternalEmbedderGetsNoTrafficWhenDisallowed(t *testing.T) {
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	denyProfile := filepath.Join(t.TempDir(), "profile.toml")
	os.WriteFile(denyProfile, []byte("allow_external = false\n"), 0o600)
	for _, tc := range []struct {
		name      string
		env       map[string]string
		serveArgs []string
		allowed   bool
	}{
		{"allowed (control)", nil, nil, true},
		{"config allow_external = false", map[string]string{"TIDINGS_ALLOW_EXTERNAL": "false"}, nil, false},
		{"profile allow_external = false", nil, []string{"--profile", denyProfile}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emb := newCountingEmbedder(t)
			env := map[string]string{"TIDINGS_NOW": servicetest.Now.Format(time.RFC3339), "TIDINGS_EMBEDDER": "http",
				"TIDINGS_EMBEDDER_URL": emb.srv.URL + "/v1", "TIDINGS_EMBEDDER_MODEL": "count"}
			for k, v := range tc.env {
				env[k] = v
			}
			if tc.serveArgs == nil { // the profile is serve's; `tidings index` has none
				m, _, errb := testMain(t, env)
				if err := m.Run(context.Background(), []string{"index", "--imessage", chatDB}); err != nil {
					t.Fatalf("index: %v\n%s", err, errb)
				}
				if n := emb.n.Load(); (n > 0) != tc.allowed {
					t.Fatalf("after tidings index: %d embedder requests (allowed %v)", n, tc.allowed)
				}
			}
			c := startClient(t, env, append([]string{"--imessage", chatDB, "--contacts", vcf}, tc.serveArgs...)...)
			for _, tl := range c.tools() {
				if tl.Name == "search_messages" {
					if hint := *tl.Annotations.OpenWorldHint; hint != tc.allowed {
						t.Errorf("search_messages openWorldHint %v, want %v", hint, tc.allowed)
					}
				}
			}
			r := c.waitFor("search_messages", map[string]any{"query": "dinner", "mode": "hybrid"}, func(r callResult) bool {
				return !r.IsErr && (!tc.allowed || r.Out["mode"] == "hybrid")
			})
			notes, _ := json.Marshal(r.Out["notes"])
			st := c.mustCall("get_status", map[string]any{})
			search, _ := json.Marshal(st["search"])
			if tc.allowed {
				if emb.n.Load() == 0 {
					t.Errorf("allowed: the embedder was never called; the counter proves nothing")
				}
				return
			}
			if n := emb.n.Load(); n != 0 {
				t.Errorf("%d requests reached the embedder with allow_external = false", n)
			}
			if r.Out["mode"] != "fulltext" || !strings.Contains(string(notes), "allow_external = false") {
				t.Errorf("search: mode %v, notes %s", r.Out["mode"], notes)
			}
			if !strings.Contains(string(search), "allow_external = false") {
				t.Errorf("get_status.search = %s", search)
			}
		})
	}
}
