package main

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/embed/embedtest"
)

// fakeHub serves the Hugging Face layout for one model: the model API with
// sizes and hashes (LFS sha256 for the weights, git blob ids for the rest)
// and /<name>/resolve/<rev>/<file>. serve may replace a file's bytes.
type fakeHub struct {
	name   string
	files  map[string][]byte
	listed map[string][]byte // what the API describes; defaults to files
	noAPI  bool
	hits   atomic.Int32
	srv    *httptest.Server
}

func newFakeHub(t *testing.T, name string) *fakeHub {
	h := &fakeHub{name: name, files: embedtest.Files()}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *fakeHub) serve(w http.ResponseWriter, r *http.Request) {
	h.hits.Add(1)
	if r.URL.Path == "/api/models/"+h.name+"/revision/main" {
		if h.noAPI {
			http.NotFound(w, r)
			return
		}
		listed := h.listed
		if listed == nil {
			listed = h.files
		}
		var sibs []map[string]any
		for name, b := range listed {
			s := map[string]any{"rfilename": name, "size": len(b)}
			if name == "model.safetensors" {
				sum := sha256.Sum256(b)
				s["lfs"] = map[string]any{"sha256": hex.EncodeToString(sum[:]), "size": len(b)}
				s["blobId"] = "0000000000000000000000000000000000000000"
			} else {
				g := sha1.New()
				fmt.Fprintf(g, "blob %d\x00", len(b))
				g.Write(b)
				s["blobId"] = hex.EncodeToString(g.Sum(nil))
			}
			sibs = append(sibs, s)
		}
		json.NewEncoder(w).Encode(map[string]any{"id": h.name, "siblings": sibs})
		return
	}
	prefix := "/" + h.name + "/resolve/main/"
	if !strings.HasPrefix(r.URL.Path, prefix) {
		http.NotFound(w, r)
		return
	}
	b, ok := h.files[strings.TrimPrefix(r.URL.Path, prefix)]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(b)
}

func pull(t *testing.T, h *fakeHub, args ...string) (string, string, string, error) {
	t.Helper()
	m, out, errb := testMain(t, map[string]string{"TIDINGS_MODELS_BASE_URL": h.srv.URL})
	home := m.Getenv("TIDINGS_HOME")
	err := m.Run(context.Background(), append([]string{"models", "pull"}, args...))
	return home, out.String(), errb.String(), err
}

func TestModelsPullInstallsAndVerifies(t *testing.T) {
	h := newFakeHub(t, "test-org/tiny-potion")
	home, out, _, err := pull(t, h, "test-org/tiny-potion")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "models", "test-org", "tiny-potion")
	if !strings.Contains(out, dir) || !strings.Contains(out, "sha256+load") {
		t.Fatalf("output %q should name %s and the verification", out, dir)
	}
	for name, want := range embedtest.Files() {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s not installed intact: %v", name, err)
		}
	}
	var man modelManifest
	b, err := os.ReadFile(filepath.Join(dir, modelsManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	if man.Dim != embedtest.Dim || man.Verified != "sha256+load" || len(man.Files) != 4 {
		t.Fatalf("manifest %+v", man)
	}
	// The installed model is what the model2vec embedder loads by name.
	e, err := embed.New(embed.Config{Name: embed.NameModel2Vec, Home: home, Model: "test-org/tiny-potion"})
	if err != nil {
		t.Fatal(err)
	}
	if e.ID() != man.ModelID {
		t.Fatalf("loaded ID %q, manifest %q", e.ID(), man.ModelID)
	}
	assertNoLeftovers(t, filepath.Join(home, "models"))

	// Listing shows it.
	m, lout, _ := testMain(t, nil)
	m.Getenv = func(k string) string {
		if k == "TIDINGS_HOME" {
			return home
		}
		return ""
	}
	if err := m.Run(context.Background(), []string{"models", "list"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lout.String(), "test-org/tiny-potion\t8 dims") {
		t.Fatalf("models list: %q", lout.String())
	}
}

func assertNoLeftovers(t *testing.T, root string) {
	t.Helper()
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".pull-") || strings.Contains(e.Name(), ".old-") {
			t.Fatalf("leftover %s in %s", e.Name(), root)
		}
	}
}

func TestModelsPullRejects(t *testing.T) {
	tampered := embedtest.Files()
	tampered["model.safetensors"] = append([]byte(nil), tampered["model.safetensors"]...)
	tampered["model.safetensors"][len(tampered["model.safetensors"])-1] ^= 0xff
	badTok := embedtest.Files()
	badTok["tokenizer.json"] = []byte(`{"model":{"type":"WordLevel"}}`)
	emptyTok := embedtest.Files()
	emptyTok["tokenizer.json"] = []byte(`{"model":{"type":"BPE","vocab":{},"merges":[]}}`)
	tests := []struct {
		name     string
		setup    func(h *fakeHub)
		contains string
	}{
		{"corrupted weights", func(h *fakeHub) { h.listed = embedtest.Files(); h.files = tampered }, "sha256"},
		{"edited tokenizer", func(h *fakeHub) {
			h.listed = embedtest.Files()
			h.files = embedtest.Files()
			h.files["tokenizer.json"] = append([]byte(" "), h.files["tokenizer.json"][1:]...)
		}, "git blob id"},
		{"unloadable tokenizer", func(h *fakeHub) { h.files = badTok }, "do not load"},
		{"tokenizer that matches nothing", func(h *fakeHub) { h.files = emptyTok }, "norm 0.000"},
		{"not a model2vec repo", func(h *fakeHub) { delete(h.files, "model.safetensors") }, "no model.safetensors"},
		{"missing file without API", func(h *fakeHub) { h.noAPI = true; delete(h.files, "tokenizer.json") }, "not found on the hub"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHub(t, "o/m")
			tt.setup(h)
			home, _, _, err := pull(t, h, "o/m")
			if err == nil || !strings.Contains(err.Error(), tt.contains) {
				t.Fatalf("err = %v, want one containing %q", err, tt.contains)
			}
			if _, err := os.Stat(filepath.Join(home, "models", "o", "m")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a failed pull left an install behind: %v", err)
			}
			assertNoLeftovers(t, filepath.Join(home, "models"))
		})
	}
}

func TestModelsPullWithoutMetadataVerifiesByLoad(t *testing.T) {
	h := newFakeHub(t, "o/m")
	h.noAPI = true
	_, out, _, err := pull(t, h, "o/m", "--revision", "main")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "(8 dimensions, load)") {
		t.Fatalf("output %q should say only the load was verified", out)
	}
}

func TestModelsPullReplacesAnEarlierInstall(t *testing.T) {
	h := newFakeHub(t, "o/m")
	m, _, _ := testMain(t, map[string]string{"TIDINGS_MODELS_BASE_URL": h.srv.URL})
	home := m.Getenv("TIDINGS_HOME")
	dir := filepath.Join(home, "models", "o", "m")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "stale.bin"), []byte("old"), 0o644)
	if err := m.Run(context.Background(), []string{"models", "pull", "o/m"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stale.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the earlier install was not replaced")
	}
	if _, err := embed.LoadModel2Vec(dir); err != nil {
		t.Fatal(err)
	}
	assertNoLeftovers(t, filepath.Join(home, "models", "o"))
}

func TestModelsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"models", "pull"},
		{"models", "pull", "../../etc"},
		{"models", "pull", "just-a-name"},
		{"models", "pull", "a/b/c"},
		{"models", "pull", "a/..b"},
		{"models", "pull", "o/m", "extra"},
		{"models", "pull", "o/m", "--base-url", "file:///etc"},
		{"models", "frob"},
		{"models", "list", "x"},
	} {
		m, _, _ := testMain(t, nil)
		var ue usageError
		if err := m.Run(context.Background(), args); !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
	}
	m, out, _ := testMain(t, nil)
	if err := m.Run(context.Background(), []string{"models"}); err != nil || !strings.Contains(out.String(), "models pull NAME") {
		t.Fatalf("models help: %v %q", err, out)
	}
}
