package filesafe

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

// The same rules for the device tools that touch the person's files:
// capture_screenshot and capture_audio write one, utilities_play_sound
// reads one (docs/security.md, "Files only where allowed"). One set of
// checks, so a file_dirs bound means the same thing to every tool that has
// one.

// CheckTarget validates a file a tool is about to write, named by its
// parameter param (save_attachment's "destination", capture's "path"). It
// returns the resolved folder and the path inside it, for PlaceFile.
func CheckTarget(param, path string, allowed []string) (dir, resolved string, err error) {
	return checkTarget(param, path, allowed)
}

// checkTarget validates a file a tool is about to write, named by the
// tool's parameter param: an absolute file path whose folder exists and,
// with every symbolic link resolved, lies inside one of allowed (the
// profile's file_dirs); an existing file there must be a regular file,
// never a link, FIFO or device. It returns the resolved folder and the
// final path inside it (docs/security.md, "Files only where allowed").
func checkTarget(param, dest string, allowed []string) (dir, path string, err error) {
	if len(allowed) == 0 {
		return "", "", refuse("no folders are allowed for saving files; a profile's file_dirs must name them")
	}
	dest = strings.TrimSpace(dest)
	switch {
	case dest == "":
		return "", "", refuse("%s is required: give the absolute path of the file to write, inside %s", param, strings.Join(allowed, " or "))
	case !filepath.IsAbs(dest):
		return "", "", refuse("%s must be an absolute file path (got %q)", param, output.Name(dest))
	case strings.HasSuffix(dest, string(filepath.Separator)):
		return "", "", refuse("%s must name a file, not a folder", param)
	}
	dest = filepath.Clean(dest)
	name := filepath.Base(dest)
	if name == "." || name == ".." || name == string(filepath.Separator) {
		return "", "", refuse("%s must name a file, not a folder", param)
	}
	rdir, err := filepath.EvalSymlinks(filepath.Dir(dest))
	if err != nil {
		return "", "", refuse("the folder %s does not exist; create it first or choose another %s", output.Name(filepath.Dir(dest)), param)
	}
	if fi, err := os.Stat(rdir); err != nil || !fi.IsDir() {
		return "", "", refuse("%s is not a folder", output.Name(filepath.Dir(dest)))
	}
	if !insideAny(rdir, allowed, true) {
		return "", "", refuse("%s is outside the folders files may be saved in (%s)", param, strings.Join(allowed, ", "))
	}
	path = filepath.Join(rdir, name)
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return "", "", refuse("%s %s is a symbolic link; choose another file name", param, output.Name(dest))
		case !fi.Mode().IsRegular():
			return "", "", refuse("%s %s exists and is not a regular file", param, output.Name(dest))
		}
	}
	return rdir, path, nil
}

// insideAny reports whether the resolved path p lies inside one of
// allowed, each resolved itself; orSame accepts p being the folder itself.
func insideAny(p string, allowed []string, orSame bool) bool {
	for _, a := range allowed {
		ra, err := filepath.EvalSymlinks(a)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(ra, p)
		if err != nil || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if rel != "." || orSame {
			return true
		}
	}
	return false
}

// PlaceFile copies src (a file the caller produced privately, read from
// its start) to path inside dir, which CheckTarget returned: through a
// temporary file in dir with mode 0600, then linked into place, which
// fails when path exists, so a file that appeared meanwhile is never
// replaced; with overwrite it is renamed over an existing regular file
// (never a symbolic link). overwrote tells which happened.
func PlaceFile(dir, path string, src io.Reader, overwrite bool) (overwrote bool, err error) {
	exists := func() error {
		return refuse("%s already exists; pass overwrite: true to replace it, or choose another name", output.Name(path))
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
		return false, refuse("%s exists and is not a regular file; choose another file name", output.Name(path))
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
		return nil, refuse("no folders are allowed for reading files; a profile's file_dirs must name them")
	}
	path = strings.TrimSpace(path)
	switch {
	case path == "":
		return nil, refuse("%s is required: give the absolute path of a file inside %s", param, strings.Join(allowed, " or "))
	case !filepath.IsAbs(path):
		return nil, refuse("%s must be an absolute file path (got %q)", param, output.Name(path))
	}
	resolved, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		return nil, refuse("%s %s does not exist", param, output.Name(path))
	}
	if !insideAny(resolved, allowed, false) {
		return nil, refuse("%s is outside the folders files may be read from (%s)", param, strings.Join(allowed, ", "))
	}
	f, err := openNoFollow(resolved)
	if err != nil {
		return nil, refuse("%s %s cannot be opened", param, output.Name(path))
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, refuse("%s %s cannot be opened", param, output.Name(path))
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, refuse("%s %s is not a regular file", param, output.Name(path))
	case fi.Size() > limit:
		f.Close()
		return nil, refuse("%s has %d bytes; files above %d bytes are not read", param, fi.Size(), limit)
	}
	return f, nil
}
