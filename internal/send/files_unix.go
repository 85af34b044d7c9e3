//go:build darwin || linux || freebsd || netbsd || openbsd || dragonfly

package send

import (
	"io/fs"
	"os"
	"syscall"
)

// oNoFollow makes an open fail when the last path element is a symlink.
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock keeps an open for reading from waiting on a FIFO (a FIFO then
// fails the regular-file check instead of holding the send).
const oNonBlock = syscall.O_NONBLOCK

// ownedByUs reports whether fi belongs to the effective user.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid()
}

// lockFile takes an exclusive advisory lock on f without blocking; ok is
// false when another process (or another descriptor) holds it.
func lockFile(f *os.File) (ok bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		return false, nil
	}
	return err == nil, err
}
