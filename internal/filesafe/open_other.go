//go:build !unix

package filesafe

import (
	"io/fs"
	"os"
)

// openNoFollow refuses a symbolic link by its Lstat, then opens the file
// (no O_NOFOLLOW outside unix).
func openNoFollow(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, errSymlink
	}
	return os.Open(path)
}

var errSymlink = &fs.PathError{Op: "open", Err: fs.ErrInvalid}
