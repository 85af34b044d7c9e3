package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The policy files' versions and bounded reads, common to every platform;
// ownership checks and stampOf are in files_unix.go and files_other.go.

// fileTrust says who must own a policy file.
type fileTrust int

const (
	userFile fileTrust = iota // the current user (or root)
	rootFile                  // root only, single link, root-owned ancestors
)

// stamp identifies a file's version cheaply (one lstat). ino, dev and uid
// are zero where the platform does not report them.
type stamp struct {
	path   string
	exists bool
	size   int64
	mtime  int64
	ino    uint64
	dev    uint64
	mode   fs.FileMode
	uid    uint32
}

// statStamp returns the current stamp of path without following symlinks.
func statStamp(path string) (stamp, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return stamp{path: path}, nil
	}
	if err != nil {
		return stamp{}, err
	}
	return stampOf(path, fi), nil
}

// readLimited reads the open policy file f (named path in errors), refusing
// one larger than maxPolicyFileSz bytes whatever its size said when
// checked.
func readLimited(f *os.File, path string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, maxPolicyFileSz+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxPolicyFileSz {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxPolicyFileSz)
	}
	return data, nil
}
