package mail

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CopyMaildir copies a Maildir tree from src into dst (created), turning
// "!2," in file names into ":2,": trees kept in the repository (the demo
// data set, test fixtures) avoid ":" because Go module zips refuse it.
// Placeholder files named ".keep" are skipped.
func CopyMaildir(src fs.FS, dst string) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(strings.ReplaceAll(p, "!2,", ":2,")))
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if d.Name() == ".keep" {
			return nil
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return fmt.Errorf("copy maildir: %w", err)
		}
		return os.WriteFile(target, data, 0o600)
	})
}
