package index

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIndexImportsNoSource pins docs/architecture.md's layering: sources
// read foreign formats, the index stores and queries model values, and the
// adapters between them (internal/imessage/imessageindex,
// internal/android/androidindex) import both, so the index and every
// package it links import no source. The import graph is read from the
// source files with go/build (no go list): each module import maps to its
// folder under the module root.
func TestIndexImportsNoSource(t *testing.T) {
	const module = "github.com/tidings-mcp/tidings/"
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// via[p] is the package that first imported p, to name the path.
	via := map[string]string{module + "internal/index": ""}
	queue := []string{module + "internal/index"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		pkg, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, module))), 0)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		for _, imp := range pkg.Imports {
			if _, seen := via[imp]; seen || !strings.HasPrefix(imp, module) {
				continue
			}
			via[imp] = p
			queue = append(queue, imp)
		}
	}
	for _, source := range []string{"internal/imessage", "internal/android", "internal/contacts"} {
		t.Run(source, func(t *testing.T) {
			for p := range via {
				rel := strings.TrimPrefix(p, module)
				if rel != source && !strings.HasPrefix(rel, source+"/") {
					continue
				}
				chain := []string{p}
				for q := via[p]; q != ""; q = via[q] {
					chain = append(chain, q)
				}
				slices.Reverse(chain)
				t.Errorf("internal/index links source package %s: %s", rel, strings.Join(chain, " → "))
			}
		})
	}
}
