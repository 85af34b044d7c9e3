// Package filesafe holds the rules every tool that writes a file on the
// user's machine follows (save_attachment, mail_save_attachment): the
// destination must be an absolute file path whose folder exists inside one
// of the profile's file_dirs after symlinks are resolved, must not itself be
// a symlink or a non-regular file, and is written atomically with mode
// 0600, never replacing an existing file unless asked (docs/security.md,
// "Attachments").
package filesafe

import (
	"bytes"
	"fmt"
	"io"

	"github.com/tidings-mcp/tidings/internal/output"
)

// Error is a refusal the user can fix (one sentence).
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func refuse(format string, args ...any) *Error { return &Error{Msg: fmt.Sprintf(format, args...)} }

// CheckDestination validates save_attachment's and mail_save_attachment's
// destination (CheckTarget's rules under the parameter name
// "destination") and returns its resolved folder and the final path inside
// it.
func CheckDestination(dest string, allowed []string) (dir, path string, err error) {
	return CheckTarget("destination", dest, allowed)
}

// WriteAtomic writes data to path through a temporary file in dir
// (PlaceFile): without overwrite an existing file, or one that appears
// meanwhile, is never replaced.
func WriteAtomic(dir, path string, data []byte, overwrite bool) (overwrote bool, err error) {
	return PlaceFile(dir, path, bytes.NewReader(data), overwrite)
}

// ReadInside reads a file a tool attaches to something that leaves the
// machine (mail_send's attachments) under OpenInside's rules: an absolute
// path that, with every symlink resolved, is a regular file inside one of
// allowed (file_dirs), at most limit bytes, opened without following a
// final link or blocking on a FIFO. With no allowed folders nothing can be
// read.
func ReadInside(path string, allowed []string, limit int64) ([]byte, error) {
	f, err := OpenInside("attachment", path, allowed, limit)
	if err != nil {
		return nil, err
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
