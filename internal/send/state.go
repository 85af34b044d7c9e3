package send

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File names inside $TIDINGS_HOME.
const (
	keyFile   = "send.key"    // 32 random bytes, 0600: the nonce HMAC key
	nonceDir  = "nonces"      // one file per unused nonce, 0600 in a 0700 folder
	auditFile = "audit.jsonl" // append-only record of previews, confirmations, sends
	lockName  = "send.lock"   // serialises sends across processes
	keySize   = 32
)

// privateDir makes sure path is a real directory (not a symlink) owned by
// this user with no group or other permissions, creating it 0700 when it is
// missing. An existing directory is never chmod-ed: a folder someone made
// readable is reported, not silently repaired.
func privateDir(path string) error {
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s is a symlink; the send gate needs a real directory there", path)
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", path)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s has mode %04o; run chmod 700 on it (the send gate refuses folders others can read or write)", path, fi.Mode().Perm())
	case !ownedByUs(fi):
		return fmt.Errorf("%s belongs to another user", path)
	}
	return nil
}

// checkPrivateFile verifies an open file: regular, ours, mode 0600 or
// stricter.
func checkPrivateFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", f.Name(), err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", f.Name())
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("%s has mode %04o; run chmod 600 on it (the send gate refuses files others can read or write)", f.Name(), fi.Mode().Perm())
	case !ownedByUs(fi):
		return fmt.Errorf("%s belongs to another user", f.Name())
	}
	return nil
}

// loadOrCreateKey returns the per-install HMAC key, creating it (32 random
// bytes, mode 0600, O_EXCL so two processes never both create one) on
// first use. A key file that is a symlink, too open, or the wrong size is an
// error: nonces signed with a key others can read would prove nothing.
func loadOrCreateKey(home string) ([]byte, error) {
	path := filepath.Join(home, keyFile)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err == nil {
		key := make([]byte, keySize)
		if _, err := rand.Read(key); err != nil {
			f.Close()
			os.Remove(path)
			return nil, fmt.Errorf("send key: %w", err)
		}
		if _, err := f.Write(key); err != nil {
			f.Close()
			os.Remove(path)
			return nil, fmt.Errorf("write send key: %w", err)
		}
		if err := f.Close(); err != nil {
			os.Remove(path)
			return nil, fmt.Errorf("write send key: %w", err)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("create send key: %w", err)
	}
	f, err = os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, fmt.Errorf("open send key: %w", err)
	}
	defer f.Close()
	if err := checkPrivateFile(f); err != nil {
		return nil, fmt.Errorf("send key: %w", err)
	}
	key, err := io.ReadAll(io.LimitReader(f, keySize+1))
	if err != nil {
		return nil, fmt.Errorf("read send key: %w", err)
	}
	if len(key) != keySize {
		return nil, fmt.Errorf("send key %s has %d bytes, want %d; delete it to create a new one (pending previews become invalid)", path, len(key), keySize)
	}
	return key, nil
}

// writePrivateFile creates path exclusively with mode 0600 and writes data.
func writePrivateFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}
