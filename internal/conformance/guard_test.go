package conformance

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// TestBaselineOnlyTasks pins the rule that the expected-failures baseline
// may list only tasks-extension scenarios.
func TestBaselineOnlyTasks(t *testing.T) {
	f, err := os.Open("testdata/expected-failures.yml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		entry, ok := strings.CutPrefix(line, "- ")
		if !ok {
			continue
		}
		n++
		if !strings.HasPrefix(entry, "tasks-") {
			t.Errorf("baseline lists %q, which is not a tasks-extension scenario", entry)
		}
	}
	if n == 0 {
		t.Error("baseline has no entries; the tasks scenarios fail and must be listed")
	}
}

// TestFixturesNeverInProduct checks that the product binary does not link
// this package and that no fixture name appears in the product inventory.
func TestFixturesNeverInProduct(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/tidings-mcp/tidings/cmd/tidings").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if strings.Contains(string(out), "internal/conformance") {
		t.Error("cmd/tidings depends on internal/conformance")
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := NewServer(nil).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	product := map[string]bool{}
	for _, tl := range mcpserver.Inventory() {
		product[tl.Name] = true
	}
	for _, tl := range res.Tools {
		if product[tl.Name] {
			t.Errorf("fixture tool %q is also a product tool", tl.Name)
		}
	}
	if len(res.Tools) < 20 {
		t.Errorf("fixture server lists only %d tools", len(res.Tools))
	}
}
