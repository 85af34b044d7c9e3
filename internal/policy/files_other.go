//go:build !unix

package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// stampOf has no inode, device or owner to record here.
func stampOf(path string, fi fs.FileInfo) stamp {
	return stamp{path: path, exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
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
	data, err := readLimited(f, path)
	if err != nil {
		return nil, stamp{}, err
	}
	return data, stampOf(path, fi), nil
}
