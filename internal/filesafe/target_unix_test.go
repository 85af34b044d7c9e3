//go:build unix

package filesafe

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// hostDirs builds an allowed folder with the traps of the red-team table:
// a symbolic link out of it (folder and file), a FIFO and a link to a
// device, and an outside folder with a secret.
func hostDirs(t *testing.T) (allowed, outside string) {
	t.Helper()
	root := t.TempDir()
	allowed, outside = filepath.Join(root, "allowed"), filepath.Join(root, "outside")
	for _, d := range []string{allowed, outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(outside, "secret.wav"), []byte("secret"), 0o600))
	must(os.WriteFile(filepath.Join(allowed, "ok.wav"), []byte("RIFF"), 0o600))
	must(os.WriteFile(filepath.Join(allowed, "taken.png"), []byte("old"), 0o600))
	must(os.Symlink(outside, filepath.Join(allowed, "escape")))
	must(os.Symlink(filepath.Join(outside, "secret.wav"), filepath.Join(allowed, "link.wav")))
	must(os.Symlink(filepath.Join(outside, "new.png"), filepath.Join(allowed, "dangling.png")))
	must(os.Symlink("/dev/zero", filepath.Join(allowed, "dev.wav")))
	must(syscall.Mkfifo(filepath.Join(allowed, "fifo.wav"), 0o600))
	return allowed, outside
}

// TestReadsStayInsideFileDirs: OpenInside (utilities_play_sound) opens only
// regular files inside file_dirs, after resolving every link; traversal,
// links out, FIFOs (which would block an open) and devices are refused.
func TestReadsStayInsideFileDirs(t *testing.T) {
	allowed, outside := hostDirs(t)
	dirs := []string{allowed}
	for _, tt := range []struct{ name, path, want string }{
		{"inside", filepath.Join(allowed, "ok.wav"), ""},
		{"traversal", allowed + "/../outside/secret.wav", "outside the folders"},
		{"outside", filepath.Join(outside, "secret.wav"), "outside the folders"},
		{"link to a file outside", filepath.Join(allowed, "link.wav"), "outside the folders"},
		{"through a linked folder", filepath.Join(allowed, "escape", "secret.wav"), "outside the folders"},
		{"device", filepath.Join(allowed, "dev.wav"), "outside the folders"},
		{"fifo", filepath.Join(allowed, "fifo.wav"), "not a regular file"},
		{"the allowed folder itself", allowed, "outside the folders"},
		{"a folder inside", filepath.Join(allowed, "escape") + "/..", "outside the folders"},
		{"the allowed folder's own parent", filepath.Dir(allowed), "outside the folders"},
		{"relative", "ok.wav", "absolute"},
		{"missing", filepath.Join(allowed, "nope.wav"), "does not exist"},
		{"empty", "", "path is required"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := OpenInside("path", tt.path, dirs, 1<<20)
			if f != nil {
				f.Close()
			}
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := OpenInside("path", filepath.Join(allowed, "ok.wav"), dirs, 2); err == nil || !strings.Contains(err.Error(), "above 2 bytes") {
		t.Fatalf("size limit: %v", err)
	}
	if _, err := OpenInside("path", filepath.Join(allowed, "ok.wav"), nil, 1<<20); err == nil || !strings.Contains(err.Error(), "file_dirs") {
		t.Fatalf("no file_dirs: %v", err)
	}
}

// TestWritesStayInsideFileDirs: CheckTarget + PlaceFile (the captures)
// write only a new regular file inside file_dirs; an existing file is
// replaced only with overwrite, and never a link, FIFO or device.
func TestWritesStayInsideFileDirs(t *testing.T) {
	allowed, outside := hostDirs(t)
	dirs := []string{allowed}
	for _, tt := range []struct {
		name, path string
		overwrite  bool
		want       string
	}{
		{"new file", filepath.Join(allowed, "new.png"), false, ""},
		{"existing file", filepath.Join(allowed, "taken.png"), false, "already exists"},
		{"existing file, overwrite", filepath.Join(allowed, "taken.png"), true, ""},
		{"traversal", allowed + "/../outside/x.png", false, "outside the folders"},
		{"outside", filepath.Join(outside, "x.png"), false, "outside the folders"},
		{"through a linked folder", filepath.Join(allowed, "escape", "x.png"), false, "outside the folders"},
		{"dangling link", filepath.Join(allowed, "dangling.png"), true, "symbolic link"},
		{"link to a device", filepath.Join(allowed, "dev.wav"), true, "symbolic link"},
		{"fifo", filepath.Join(allowed, "fifo.wav"), true, "not a regular file"},
		{"folder", allowed + "/", false, "not a folder"},
		{"missing folder", filepath.Join(allowed, "no", "x.png"), false, "does not exist"},
		{"relative", "x.png", false, "absolute"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, p, err := CheckTarget("path", tt.path, dirs)
			if err == nil {
				_, err = PlaceFile(dir, p, bytes.NewReader([]byte("new")), tt.overwrite)
			}
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(p); string(b) != "new" {
					t.Fatalf("file holds %q", b)
				}
				if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
					t.Fatalf("mode %v", fi.Mode())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "new.png")); err == nil {
		t.Fatal("a write escaped through the dangling link")
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.wav")); string(b) != "secret" {
		t.Fatal("the outside file changed")
	}
}
