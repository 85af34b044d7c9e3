//go:build darwin || linux || freebsd || netbsd || openbsd || dragonfly

package send

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestImagePathFIFODoesNotBlock: an image_path naming a FIFO inside
// file_dirs is refused as "not a regular file" at once; a plain open for
// reading would wait for a writer forever and hold the send (the same
// rule as the device tools' reads, docs/security.md "Device services").
func TestImagePathFIFODoesNotBlock(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "photo.png")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := checkImage(fifo, []string{dir})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("err = %v", err)
	}
}
