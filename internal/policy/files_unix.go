//go:build unix

package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Test hooks: the owner a hardened list must have, and the directory at
// which the ancestor check stops. Production values: root and "/".
var (
	hardenedOwner     uint32 = 0
	hardenedTrustRoot        = "/"
)

func stampOf(path string, fi fs.FileInfo) stamp {
	st := stamp{path: path, exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = uint64(sys.Ino)
		st.dev = uint64(sys.Dev)
		st.uid = sys.Uid
	}
	return st
}

func ownerOK(uid uint32, trust fileTrust) bool {
	if trust == rootFile {
		return uid == hardenedOwner
	}
	return uid == 0 || int(uid) == os.Geteuid()
}

// checkContactsDir refuses a contacts directory that is a symlink, not a
// directory, writable by group or others, or owned by someone else. A
// missing directory is fine (no policy files yet).
func checkContactsDir(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s is a symlink", ErrUnsafeFile, path)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeFile, path)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: %s is writable by group or others (mode %04o)", ErrUnsafeFile, path, fi.Mode().Perm())
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok && !ownerOK(sys.Uid, userFile) {
		return fmt.Errorf("%w: %s is owned by uid %d, not by you", ErrUnsafeFile, path, sys.Uid)
	}
	return nil
}

// readSafe opens path without following a symlink and checks the open file
// (not the path, so nothing can be swapped in between): a regular file of
// at most 1 MiB, not writable by group or others, owned as trust requires.
// A missing file returns no data and a stamp with exists=false.
func readSafe(path string, trust fileTrust) ([]byte, stamp, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if trust == rootFile {
			if err := checkAncestors(filepath.Dir(path)); err != nil {
				return nil, stamp{}, err
			}
		}
		return nil, stamp{path: path}, nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, stamp{}, fmt.Errorf("%w: %s is a symlink", ErrUnsafeFile, path)
	}
	if err != nil {
		return nil, stamp{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, stamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return nil, stamp{}, fmt.Errorf("%w: %s is not a regular file", ErrUnsafeFile, path)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return nil, stamp{}, fmt.Errorf("%w: %s is writable by group or others (mode %04o)", ErrUnsafeFile, path, fi.Mode().Perm())
	}
	sys, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, stamp{}, fmt.Errorf("%w: %s: cannot read its owner", ErrUnsafeFile, path)
	}
	if !ownerOK(sys.Uid, trust) {
		want := "you"
		if trust == rootFile {
			want = "root"
		}
		return nil, stamp{}, fmt.Errorf("%w: %s is owned by uid %d, not by %s", ErrUnsafeFile, path, sys.Uid, want)
	}
	if trust == rootFile {
		if sys.Nlink != 1 {
			return nil, stamp{}, fmt.Errorf("%w: %s has %d hard links, want 1", ErrUnsafeFile, path, sys.Nlink)
		}
		if err := checkAncestors(filepath.Dir(path)); err != nil {
			return nil, stamp{}, err
		}
	}
	if fi.Size() > maxPolicyFileSz {
		return nil, stamp{}, fmt.Errorf("%s is larger than %d bytes", path, maxPolicyFileSz)
	}
	data, err := readLimited(f, path)
	if err != nil {
		return nil, stamp{}, err
	}
	return data, stampOf(path, fi), nil
}

// checkAncestors requires dir and every directory above it (after
// resolving symlinks, up to hardenedTrustRoot) to be owned by the hardened
// owner and not writable by group or others, so nobody else can rename or
// replace the hardened list.
func checkAncestors(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", dir, err)
	}
	stop, err := filepath.EvalSymlinks(hardenedTrustRoot)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", hardenedTrustRoot, err)
	}
	for d := real; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil {
			return err
		}
		sys, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || sys.Uid != hardenedOwner {
			return fmt.Errorf("%w: directory %s is not owned by root", ErrUnsafeFile, d)
		}
		if fi.Mode().Perm()&0o022 != 0 {
			return fmt.Errorf("%w: directory %s is writable by group or others (mode %04o)", ErrUnsafeFile, d, fi.Mode().Perm())
		}
		if d == stop || d == filepath.Dir(d) {
			return nil
		}
	}
}
