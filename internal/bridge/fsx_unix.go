//go:build unix

package bridge

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// ErrUnsafe is wrapped by every refusal of an unsafe runtime directory or
// file: a symlink, a non-directory, another owner, group/world permission
// bits, extra hard links. The worker never chmods or chowns an existing
// object to "fix" it; it refuses and says what is wrong.
var ErrUnsafe = errors.New("unsafe bridge path")

// fileInfo is the part of a stat result the checks use.
type fileInfo struct {
	dev, ino uint64
	mode     uint32 // full st_mode
	uid      uint32
	nlink    uint64
	size     int64
	mtime    time.Time
}

func infoOf(st *unix.Stat_t) fileInfo {
	return fileInfo{
		dev: uint64(st.Dev), ino: uint64(st.Ino), mode: uint32(st.Mode), uid: st.Uid,
		nlink: uint64(st.Nlink), size: st.Size,
		mtime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)),
	}
}

func (f fileInfo) isDir() bool     { return f.mode&unix.S_IFMT == unix.S_IFDIR }
func (f fileInfo) isRegular() bool { return f.mode&unix.S_IFMT == unix.S_IFREG }
func (f fileInfo) perm() uint32    { return f.mode & 0o7777 }
func (f fileInfo) same(g fileInfo) bool {
	return f.dev == g.dev && f.ino == g.ino
}

func typeName(f fileInfo) string {
	switch f.mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFREG:
		return "a regular file"
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	}
	return "not a regular file"
}

var euid = uint32(os.Geteuid())

// checkDir applies protocol 1.2's rule for runtime directories: a real
// directory (not a symlink), owned by the current user, no group or world
// permission bits.
func checkDir(path string, fi fileInfo) error {
	switch {
	case !fi.isDir():
		return fmt.Errorf("%w: %s is %s, not a real directory", ErrUnsafe, path, typeName(fi))
	case fi.uid != euid:
		return fmt.Errorf("%w: %s is owned by uid %d, not by the current user (uid %d)", ErrUnsafe, path, fi.uid, euid)
	case fi.perm()&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %04o; it must have no group or world permissions (the helper never changes it: run chmod 700 %q yourself if this folder is yours)", ErrUnsafe, path, fi.perm(), path)
	}
	return nil
}

// dir is an open, checked runtime directory. Every file operation goes
// through its descriptor with *at system calls and O_NOFOLLOW, so a
// directory swapped for a symlink after the check cannot redirect it.
type dir struct {
	path string
	f    *os.File
	info fileInfo
}

// openDir opens and checks a runtime directory. With parent set, name is
// opened relative to it; otherwise name is an absolute path (its ancestors
// may be symlinks, as /var is on macOS; the directory itself may not).
// When create is set a missing directory is created with mode 0700.
func openDir(parent *dir, name string, create bool) (*dir, error) {
	at, path, rel := unix.AT_FDCWD, name, name
	if parent != nil {
		at, path = int(parent.f.Fd()), filepath.Join(parent.path, name)
	}
	var st unix.Stat_t
	err := unix.Fstatat(at, rel, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) && create {
		if err := unix.Mkdirat(at, rel, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		err = unix.Fstatat(at, rel, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return nil, fmt.Errorf("bridge directory %s: %w", path, err)
	}
	before := infoOf(&st)
	if err := checkDir(path, before); err != nil {
		return nil, err
	}
	fd, err := unix.Openat(at, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("stat %s: %w", path, err)
	}
	after := infoOf(&st)
	if !after.same(before) {
		f.Close()
		return nil, fmt.Errorf("%w: %s was replaced while it was being opened", ErrUnsafe, path)
	}
	if err := checkDir(path, after); err != nil {
		f.Close()
		return nil, err
	}
	return &dir{path: path, f: f, info: after}, nil
}

func (d *dir) close() error { return d.f.Close() }

func (d *dir) fd() int { return int(d.f.Fd()) }

// recheck reports whether the path still names this directory and the
// directory is still safe (owner and mode may be changed at run time).
// errMoved means the path now names another object: reopen it.
func (d *dir) recheck() error {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd(), &st); err != nil {
		return fmt.Errorf("stat %s: %w", d.path, err)
	}
	if err := checkDir(d.path, infoOf(&st)); err != nil {
		return err
	}
	if err := unix.Lstat(d.path, &st); err != nil {
		return fmt.Errorf("%w: %s: %w", errMoved, d.path, err)
	}
	if !infoOf(&st).same(d.info) {
		return fmt.Errorf("%w: %s", errMoved, d.path)
	}
	return nil
}

var errMoved = errors.New("bridge directory was replaced")

func (d *dir) lstat(name string) (fileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileInfo{}, &fs.PathError{Op: "lstat", Path: filepath.Join(d.path, name), Err: err}
	}
	return infoOf(&st), nil
}

// open opens name inside d without following a symlink in its last (and
// only) component.
func (d *dir) open(name string, flag int, perm uint32) (*os.File, error) {
	fd, err := unix.Openat(d.fd(), name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(d.path, name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

func (d *dir) remove(name string) error {
	if err := unix.Unlinkat(d.fd(), name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

func (d *dir) removeDir(name string) error {
	if err := unix.Unlinkat(d.fd(), name, unix.AT_REMOVEDIR); err != nil {
		return &fs.PathError{Op: "remove", Path: filepath.Join(d.path, name), Err: err}
	}
	return nil
}

func (d *dir) rename(from, to string) error {
	if err := unix.Renameat(d.fd(), from, d.fd(), to); err != nil {
		return &fs.PathError{Op: "rename", Path: filepath.Join(d.path, from), Err: err}
	}
	return nil
}

// names lists the directory's entries.
func (d *dir) names() ([]string, error) {
	fd, err := unix.Openat(d.fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", d.path, err)
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("list %s: %w", d.path, err)
	}
	return names, nil
}

// statFile fstats an open file.
func statFile(f *os.File) (fileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileInfo{}, fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	return infoOf(&st), nil
}

// checkPrivateFile is the rule for the worker's own files (log, lock, id
// record): a regular file with one link, owned by the current user, no
// group or world bits.
func checkPrivateFile(f *os.File) error {
	fi, err := statFile(f)
	if err != nil {
		return err
	}
	switch {
	case !fi.isRegular():
		return fmt.Errorf("%w: %s is %s", ErrUnsafe, f.Name(), typeName(fi))
	case fi.nlink != 1:
		return fmt.Errorf("%w: %s has %d hard links", ErrUnsafe, f.Name(), fi.nlink)
	case fi.uid != euid:
		return fmt.Errorf("%w: %s is owned by uid %d, not by the current user", ErrUnsafe, f.Name(), fi.uid)
	case fi.perm()&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %04o; it must have no group or world permissions", ErrUnsafe, f.Name(), fi.perm())
	}
	return nil
}

// openPrivate opens (creating with 0600 if missing) one of the worker's
// own files without following symlinks, and checks it.
func (d *dir) openPrivate(name string, flag int) (*os.File, error) {
	f, err := d.open(name, flag|unix.O_CREAT|unix.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%w: %s is a symbolic link", ErrUnsafe, filepath.Join(d.path, name))
		}
		return nil, err
	}
	if err := checkPrivateFile(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// prepare writes data to a fresh temp file tmp in d (O_EXCL after
// removing a crash leftover; mode 0600 set explicitly on the new file, so
// the umask cannot change it). A rename publishes it. No fsync: a killed
// process loses nothing that was written, and a response lost to a power
// cut is answered again (its id is recorded only after this).
func (d *dir) prepare(tmp string, data []byte) error {
	_ = d.remove(tmp)
	f, err := d.open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = d.remove(tmp)
	}
	return err
}

// writeAtomic is prepare + rename.
func (d *dir) writeAtomic(name, tmp string, data []byte) error {
	if err := d.prepare(tmp, data); err != nil {
		return err
	}
	return d.rename(tmp, name)
}

// tryLockFile takes an exclusive flock on f without blocking. The kernel
// releases it when the holder exits, however it dies.
func tryLockFile(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// isNotExist reports ENOENT from the *at helpers.
func isNotExist(err error) bool { return errors.Is(err, unix.ENOENT) || errors.Is(err, fs.ErrNotExist) }

const (
	oRDONLY   = unix.O_RDONLY
	oWRONLY   = unix.O_WRONLY
	oRDWR     = unix.O_RDWR
	oAPPEND   = unix.O_APPEND
	oNONBLOCK = unix.O_NONBLOCK
)
