// Package filesafe holds the rules every tool that writes a file on the
// user's machine follows (save_attachment, mail_save_attachment): the
// destination must be an absolute file path whose folder exists inside one
// of the profile's file_dirs after symlinks are resolved, must not itself be
// a symlink or a non-regular file, and is written atomically with mode
// 0600, never replacing an existing file unless asked (docs/security.md,
// "Attachments").
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

// Error is a refusal the user can fix (one sentence).
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func refuse(format string, args ...any) *Error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// CheckDestination validates the destination and returns its resolved
// folder and the final path inside it.
func CheckDestination(dest string, allowed []string) (dir, path string, err error) {
	if len(allowed) == 0 {
		return "", "", refuse("no folders are allowed for saving files; a profile's file_dirs must name them")
	}
	dest = strings.TrimSpace(dest)
	switch {
	case dest == "":
		return "", "", refuse("destination is required: give the absolute path of the file to write, inside %s", strings.Join(allowed, " or "))
	case !filepath.IsAbs(dest):
		return "", "", refuse("destination must be an absolute file path (got %q)", output.Name(dest))
	case strings.HasSuffix(dest, string(filepath.Separator)):
		return "", "", refuse("destination must name a file, not a folder")
	}
	dest = filepath.Clean(dest)
	name := filepath.Base(dest)
	if name == "." || name == ".." || name == string(filepath.Separator) {
		return "", "", refuse("destination must name a file, not a folder")
	}
	rdir, err := filepath.EvalSymlinks(filepath.Dir(dest))
	if err != nil {
		return "", "", refuse("the folder %s does not exist; create it first or choose another destination", output.Name(filepath.Dir(dest)))
	}
	if fi, err := os.Stat(rdir); err != nil || !fi.IsDir() {
		return "", "", refuse("%s is not a folder", output.Name(filepath.Dir(dest)))
	}
	inside := false
	for _, a := range allowed {
		ra, err := filepath.EvalSymlinks(a)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(ra, rdir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			inside = true
			break
		}
	}
	if !inside {
		return "", "", refuse("destination is outside the folders files may be saved in (%s)", strings.Join(allowed, ", "))
	}
	path = filepath.Join(rdir, name)
	if fi, err := os.Lstat(path); err == nil {
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return "", "", refuse("destination %s is a symbolic link; choose another file name", output.Name(dest))
		case !fi.Mode().IsRegular():
			return "", "", refuse("destination %s exists and is not a regular file", output.Name(dest))
		}
	}
	return rdir, path, nil
}

// WriteAtomic writes data to path through a temporary file in dir. Without
// overwrite it links the temporary file into place, which fails if path
// exists, so a file that appears meanwhile is never replaced.
func WriteAtomic(dir, path string, data []byte, overwrite bool) (overwrote bool, err error) {
	if _, err := os.Lstat(path); err == nil && !overwrite {
		return false, refuse("%s already exists; pass overwrite: true to replace it, or choose another name", output.Name(path))
	}
	tmp, err := os.CreateTemp(dir, ".tidings-save-*")
	if err != nil {
		return false, fmt.Errorf("save file: %w", err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return false, fmt.Errorf("save file: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, fmt.Errorf("save file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, fmt.Errorf("save file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("save file: %w", err)
	}
	if !overwrite {
		if err := os.Link(name, path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return false, refuse("%s already exists; pass overwrite: true to replace it, or choose another name", output.Name(path))
			}
			// No hard links on this file system: create exclusively instead.
			return false, writeExclusive(path, data)
		}
		return false, nil
	}
	fi, statErr := os.Lstat(path)
	if statErr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return false, refuse("destination %s is a symbolic link; choose another file name", output.Name(path))
	}
	if err := os.Rename(name, path); err != nil {
		return false, fmt.Errorf("save file: %w", err)
	}
	return statErr == nil, nil
}

// writeExclusive creates path (failing if it exists) and writes data.
func writeExclusive(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return refuse("%s already exists; pass overwrite: true to replace it, or choose another name", output.Name(path))
	}
	if err != nil {
		return fmt.Errorf("save file: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("save file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("save file: %w", err)
	}
	return f.Close()
}

// ReadInside reads a file a tool attaches to something that leaves the
// machine (mail_send's attachments): an absolute path that, with every
// symlink resolved, is a regular file inside one of allowed (file_dirs),
// at most limit bytes. With no allowed folders nothing can be read.
func ReadInside(path string, allowed []string, limit int64) ([]byte, error) {
	if len(allowed) == 0 {
		return nil, refuse("no folders are allowed for attaching files; a profile's file_dirs must name them")
	}
	path = strings.TrimSpace(path)
	if !filepath.IsAbs(path) {
		return nil, refuse("attachment %q must be an absolute file path", output.Name(path))
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, refuse("attachment %s does not exist", output.Name(path))
	}
	inside := false
	for _, a := range allowed {
		ra, err := filepath.EvalSymlinks(a)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(ra, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			inside = true
			break
		}
	}
	if !inside {
		return nil, refuse("attachment %s is outside the folders files may be attached from (%s)", output.Name(path), strings.Join(allowed, ", "))
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, refuse("attachment %s is not a regular file", output.Name(path))
	}
	if fi.Size() > limit {
		return nil, refuse("attachment %s has %d bytes; at most %d may be attached", output.Name(path), fi.Size(), limit)
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, refuse("attachment %s cannot be read", output.Name(path))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read attachment: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, refuse("attachment %s is larger than %d bytes", output.Name(path), limit)
	}
	return data, nil
}
