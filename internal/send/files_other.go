//go:build !(darwin || linux || freebsd || netbsd || openbsd || dragonfly)

package send

import (
	"io/fs"
	"os"
)

// oNoFollow is not available here; paths are checked with Lstat instead.
const oNoFollow = 0

// oNonBlock: see files_unix.go.
const oNonBlock = 0

func ownedByUs(fs.FileInfo) bool { return true }

// lockFile has no cross-process lock on this platform; the in-process lock
// in Gate still serialises sends.
func lockFile(*os.File) (bool, error) { return true, nil }
