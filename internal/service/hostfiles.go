package service

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidings-mcp/tidings/internal/output"
)

// The host-file rules of save_attachment, for the other tools that touch
// the person's files: capture_screenshot and capture_audio write one,
// utilities_play_sound reads one (docs/security.md, "Files only where
// allowed"). One set of checks, so a file_dirs bound means the same thing
// to every tool that has one.

// CheckTarget validates a file a tool is about to write, named by its
// parameter param (save_attachment's rules: absolute, inside allowed with
// every symbolic link resolved, the folder exists, an existing file is a
// regular file and no link). It returns the resolved folder and the path
// inside it, for PlaceFile.
func CheckTarget(param, path string, allowed []string) (dir, resolved string, err error) {
	return checkTarget(param, path, allowed)
}

// PlaceFile copies src (a file the caller produced privately, read from
// its start) to path inside dir, which CheckTarget returned: through a
// temporary file in dir with mode 0600, then linked into place, which
// fails when path exists, so a file that appeared meanwhile is never
// replaced; with overwrite it is renamed over an existing regular file
// (never a symbolic link). overwrote tells which happened.
func PlaceFile(dir, path string, src io.Reader, overwrite bool) (overwrote bool, err error) {
	exists := func() error {
		return userErr("%s already exists; pass overwrite: true to replace it, or choose another name", output.Name(path))
	}
	if _, err := os.Lstat(path); err == nil && !overwrite {
		return false, exists()
	}
	tmp, err := os.CreateTemp(dir, ".tidings-save-*")
	if err != nil {
		return false, fmt.Errorf("write file: %w", err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write file: %w", err)
	}
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("write file: %w", err)
	}
	if !overwrite {
		err := os.Link(name, path)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, fs.ErrExist):
			return false, exists()
		}
		// No hard links on this file system: create exclusively instead.
		in, err := os.Open(name)
		if err != nil {
			return false, fmt.Errorf("write file: %w", err)
		}
		defer in.Close()
		out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return false, exists()
		}
		if err != nil {
			return false, fmt.Errorf("write file: %w", err)
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			os.Remove(path)
			return false, fmt.Errorf("write file: %w", err)
		}
		return false, out.Close()
	}
	fi, statErr := os.Lstat(path)
	if statErr == nil && !fi.Mode().IsRegular() {
		return false, userErr("%s exists and is not a regular file; choose another file name", output.Name(path))
	}
	if err := os.Rename(name, path); err != nil {
		return false, fmt.Errorf("write file: %w", err)
	}
	return statErr == nil, nil
}

// OpenInside opens a file a tool reads for the person, named by its
// parameter param: an absolute path that, with every symbolic link
// resolved, is a regular file inside one of allowed (the profile's
// file_dirs) and at most limit bytes. The open follows no final link and
// never blocks on a FIFO; the returned file is what was checked, so a
// path swapped afterwards changes nothing. The caller closes it.
func OpenInside(param, path string, allowed []string, limit int64) (*os.File, error) {
	if len(allowed) == 0 {
		return nil, userErr("no folders are allowed for reading files; a profile's file_dirs must name them")
	}
	path = strings.TrimSpace(path)
	switch {
	case path == "":
		return nil, userErr("%s is required: give the absolute path of a file inside %s", param, strings.Join(allowed, " or "))
	case !filepath.IsAbs(path):
		return nil, userErr("%s must be an absolute file path (got %q)", param, output.Name(path))
	}
	resolved, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		return nil, userErr("%s %s does not exist", param, output.Name(path))
	}
	if !insideAny(resolved, allowed, false) {
		return nil, userErr("%s is outside the folders files may be read from (%s)", param, strings.Join(allowed, ", "))
	}
	f, err := openNoFollow(resolved)
	if err != nil {
		return nil, userErr("%s %s cannot be opened", param, output.Name(path))
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, userErr("%s %s cannot be opened", param, output.Name(path))
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, userErr("%s %s is not a regular file", param, output.Name(path))
	case fi.Size() > limit:
		f.Close()
		return nil, userErr("%s has %d bytes; files above %d bytes are not read", param, fi.Size(), limit)
	}
	return f, nil
}
