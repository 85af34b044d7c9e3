package mail

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyMaildir copies testdata/maildir into a temp dir, renaming "!2,"
// back to ":2,": the committed names avoid ":", which a Go module zip
// refuses in file names.
func copyMaildir(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "Maildir")
	if err := CopyMaildir(os.DirFS("testdata/maildir"), dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

// mustRead reads a file of the copied Maildir by a name fragment.
func findFile(t *testing.T, root, frag string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, frag) {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no file %q under %s", frag, root)
	}
	return found
}
