//go:build !unix

package policy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

type fileTrust int

const (
	userFile fileTrust = iota
	rootFile
)

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

func stampOf(path string, fi fs.FileInfo) stamp {
	return stamp{path: path, exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
}

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

func checkContactsDir(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a plain directory", ErrUnsafeFile, path)
	}
	return nil
}

// readSafe on systems without unix ownership checks only refuses symlinks
// and non-regular files; hardened mode is refused outright.
func readSafe(path string, trust fileTrust) ([]byte, stamp, error) {
	if trust == rootFile {
		return nil, stamp{}, fmt.Errorf("%w: hardened mode needs unix file ownership", ErrUnsafeFile)
	}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, stamp{path: path}, nil
	}
	if err != nil {
		return nil, stamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return nil, stamp{}, fmt.Errorf("%w: %s is not a regular file", ErrUnsafeFile, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, stamp{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPolicyFileSz+1))
	if err != nil {
		return nil, stamp{}, err
	}
	if len(data) > maxPolicyFileSz {
		return nil, stamp{}, fmt.Errorf("%s is larger than %d bytes", path, maxPolicyFileSz)
	}
	return data, stampOf(path, fi), nil
}
