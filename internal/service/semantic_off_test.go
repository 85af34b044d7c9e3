package service_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// With the vector signal off because the configured embedder is an
// external endpoint that allow_external forbids (Options.SemanticOff),
// hybrid and semantic searches run full text only and say why in their
// notes, and get_status.search says the same — never "not ready yet",
// which would promise vectors that this configuration will not make
// (docs/embeddings.md, "allow_external").
func TestSearchSaysWhenTheExternalEmbedderIsOff(t *testing.T) {
	const why = "semantic search is off: the embedder is an external endpoint and allow_external = false"
	env := servicetest.Fixture(t, servicetest.Options{NoEmbed: true, SemanticOff: why})
	for _, mode := range []string{"", "hybrid", "semantic", "fulltext"} {
		r, err := env.Service.Search(ctx, service.SearchParams{Query: "dinner", Mode: mode})
		if err != nil {
			t.Fatalf("mode %q: %v", mode, err)
		}
		if r.Mode != "fulltext" {
			t.Errorf("mode %q ran as %q, want fulltext", mode, r.Mode)
		}
		said := slices.Contains(r.Notes, why)
		if mode != "fulltext" && !said {
			t.Errorf("mode %q: notes %q lack the reason", mode, r.Notes)
		}
		if mode == "fulltext" && said {
			t.Errorf("a full-text search was told about the embedder: %q", r.Notes)
		}
		for _, n := range r.Notes {
			if strings.Contains(n, "not ready") || strings.Contains(n, "no embedder is configured") {
				t.Errorf("mode %q: misleading note %q", mode, n)
			}
		}
	}
	st, err := env.Service.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Search.Note != why || st.Search.SemanticReady {
		t.Errorf("status search = %+v, want note %q", st.Search, why)
	}
}
