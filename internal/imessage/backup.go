package imessage

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"howett.net/plist"
)

// ErrEncryptedBackup means the iPhone backup is encrypted. Tidings reads only
// unencrypted backups; the error text tells the user how to make one.
var ErrEncryptedBackup = errors.New("the iPhone backup is encrypted; Tidings can only read unencrypted backups " +
	"(make one with Finder/iTunes with “Encrypt local backup” unchecked, or `idevicebackup2 encryption off` then `idevicebackup2 backup DIR`)")

// ErrIncompleteBackup means the folder is not a complete iPhone backup: a
// required file is missing or the backup did not finish.
var ErrIncompleteBackup = errors.New("the iPhone backup is incomplete")

// Backup domains and paths of the files Tidings reads.
const (
	homeDomain     = "HomeDomain"
	mediaDomain    = "MediaDomain"
	smsPath        = "Library/SMS/sms.db"
	addressBookDB  = "Library/AddressBook/AddressBook.sqlitedb"
	addressBookImg = "Library/AddressBook/AddressBookImages.sqlitedb"
)

// Backup is an unencrypted iPhone backup folder (Finder/iTunes or
// idevicebackup2): Manifest.db maps each (domain, relativePath) to a file
// named by the SHA-1 of "domain-relativePath" under a two-hex-digit folder.
type Backup struct {
	// Dir is the backup folder.
	Dir string
	// SMSDB is the path of sms.db inside the backup.
	SMSDB string
	// AddressBook is the path of AddressBook.sqlitedb, empty when the backup
	// holds none.
	AddressBook string
	// AddressBookImages is the path of AddressBookImages.sqlitedb, or empty.
	AddressBookImages string
	// Device, iOS version and backup date as recorded in Manifest.plist /
	// Info.plist; empty when not recorded.
	DeviceName     string
	ProductVersion string
	Date           time.Time

	manifest *sql.DB // nil for old backups without Manifest.db
}

type manifestPlist struct {
	IsEncrypted bool      `plist:"IsEncrypted"`
	Date        time.Time `plist:"Date"`
	Lockdown    struct {
		DeviceName     string `plist:"DeviceName"`
		ProductVersion string `plist:"ProductVersion"`
	} `plist:"Lockdown"`
}

type statusPlist struct {
	SnapshotState string `plist:"SnapshotState"`
	IsFullBackup  bool   `plist:"IsFullBackup"`
}

// OpenBackup checks an iPhone backup folder and locates sms.db and the
// address book through Manifest.db. It fails with ErrEncryptedBackup for an
// encrypted backup and ErrIncompleteBackup when the backup did not finish or
// lacks Manifest.db or sms.db; both errors name the problem.
func OpenBackup(ctx context.Context, dir string) (*Backup, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open iPhone backup %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open iPhone backup: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open iPhone backup %s: not a folder", abs)
	}
	b := &Backup{Dir: abs}

	var mp manifestPlist
	haveManifestPlist := false
	if data, err := os.ReadFile(filepath.Join(abs, "Manifest.plist")); err == nil {
		if _, err := plist.Unmarshal(data, &mp); err != nil {
			return nil, fmt.Errorf("open iPhone backup %s: Manifest.plist is unreadable: %v: %w", abs, err, ErrIncompleteBackup)
		}
		haveManifestPlist = true
		if mp.IsEncrypted {
			return nil, fmt.Errorf("open iPhone backup %s (Manifest.plist IsEncrypted = true): %w", abs, ErrEncryptedBackup)
		}
		b.DeviceName, b.ProductVersion, b.Date = mp.Lockdown.DeviceName, mp.Lockdown.ProductVersion, mp.Date
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open iPhone backup %s: %w", abs, err)
	}
	if data, err := os.ReadFile(filepath.Join(abs, "Status.plist")); err == nil {
		var sp statusPlist
		if _, err := plist.Unmarshal(data, &sp); err == nil && sp.SnapshotState != "" && !strings.EqualFold(sp.SnapshotState, "finished") {
			return nil, fmt.Errorf("open iPhone backup %s: Status.plist SnapshotState is %q, not \"finished\" (the backup was interrupted; run it again): %w",
				abs, sp.SnapshotState, ErrIncompleteBackup)
		}
	}

	manifestPath := filepath.Join(abs, "Manifest.db")
	if _, err := os.Stat(manifestPath); err == nil {
		db, err := sql.Open("sqlite", dsn(manifestPath, true))
		if err != nil {
			return nil, fmt.Errorf("open iPhone backup %s: Manifest.db: %w", abs, err)
		}
		db.SetMaxOpenConns(2)
		var n int
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='Files'").Scan(&n); err != nil || n == 0 {
			db.Close()
			if err != nil && isNotADatabase(err) {
				return nil, fmt.Errorf("open iPhone backup %s: Manifest.db is not a SQLite database (an encrypted backup without Manifest.plist, or a damaged one): %w", abs, ErrEncryptedBackup)
			}
			return nil, fmt.Errorf("open iPhone backup %s: Manifest.db has no Files table (%v): %w", abs, err, ErrIncompleteBackup)
		}
		b.manifest = db
	} else if _, err2 := os.Stat(filepath.Join(abs, "Manifest.mbdb")); err2 != nil {
		what := "no Manifest.db"
		if !haveManifestPlist {
			what = "no Manifest.db and no Manifest.plist (is this a backup folder? it is the one named after the device's UDID)"
		}
		return nil, fmt.Errorf("open iPhone backup %s: %s: %w", abs, what, ErrIncompleteBackup)
	}
	// Old backups (iOS 9 and earlier) have Manifest.mbdb instead of
	// Manifest.db; their files are found by hash alone.

	b.SMSDB, err = b.File(ctx, homeDomain, smsPath)
	if err != nil {
		b.Close()
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("open iPhone backup %s: sms.db (HomeDomain/%s) is not in the backup: %w", abs, smsPath, ErrIncompleteBackup)
		}
		return nil, fmt.Errorf("open iPhone backup %s: %w", abs, err)
	}
	for _, f := range []struct {
		rel string
		dst *string
	}{{addressBookDB, &b.AddressBook}, {addressBookImg, &b.AddressBookImages}} {
		p, err := b.File(ctx, homeDomain, f.rel)
		switch {
		case err == nil:
			*f.dst = p
		case errors.Is(err, ErrNotFound):
		default:
			b.Close()
			return nil, fmt.Errorf("open iPhone backup %s: %w", abs, err)
		}
	}
	return b, nil
}

// Close releases Manifest.db.
func (b *Backup) Close() error {
	if b.manifest != nil {
		err := b.manifest.Close()
		b.manifest = nil
		return err
	}
	return nil
}

// FileID returns the backup file id of a (domain, relativePath): the hex
// SHA-1 of "domain-relativePath".
func FileID(domain, relativePath string) string {
	h := sha1.Sum([]byte(domain + "-" + relativePath))
	return hex.EncodeToString(h[:])
}

// File returns the path of a file in the backup. Manifest.db is asked first;
// the hash rule is the fallback (and the only way for Manifest.mbdb
// backups). ErrNotFound when the file is not in the backup.
func (b *Backup) File(ctx context.Context, domain, relativePath string) (string, error) {
	var ids []string
	if b.manifest != nil {
		rows, err := b.manifest.QueryContext(ctx, "SELECT fileID FROM Files WHERE domain = ? AND relativePath = ? ORDER BY flags", domain, relativePath)
		if err != nil {
			return "", fmt.Errorf("look up %s-%s in Manifest.db: %w", domain, relativePath, err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return "", fmt.Errorf("look up %s-%s in Manifest.db: %w", domain, relativePath, err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return "", fmt.Errorf("look up %s-%s in Manifest.db: %w", domain, relativePath, err)
		}
	}
	ids = append(ids, FileID(domain, relativePath))
	for _, id := range ids {
		if !isHexID(id) {
			continue // never let a manifest value form a path
		}
		for _, p := range []string{filepath.Join(b.Dir, id[:2], id), filepath.Join(b.Dir, id)} {
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s-%s: %w", domain, relativePath, ErrNotFound)
}

func isHexID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// attachmentPath maps an sms.db attachment filename ("~/Library/SMS/…" or
// "/var/mobile/Library/SMS/…") to its file in the backup (MediaDomain). When
// the file is not in the backup (offloaded attachments often are not), the
// hashed path is returned anyway and opening it fails.
func (b *Backup) attachmentPath(stored string) (string, error) {
	rel := filepath.ToSlash(stored)
	switch {
	case strings.HasPrefix(rel, "~/"):
		rel = rel[2:]
	case strings.HasPrefix(rel, "/var/mobile/"):
		rel = rel[len("/var/mobile/"):]
	case strings.HasPrefix(rel, "/private/var/mobile/"):
		rel = rel[len("/private/var/mobile/"):]
	default:
		return "", fmt.Errorf("attachment path %q is not in the phone's home folder", stored)
	}
	p, err := b.File(context.Background(), mediaDomain, rel)
	if errors.Is(err, ErrNotFound) {
		id := FileID(mediaDomain, rel)
		return filepath.Join(b.Dir, id[:2], id), nil
	}
	return p, err
}

// OpenMessages opens the backup's sms.db. A backup has no live writer, so it
// is read immutable (no -shm is created in the backup folder); attachments
// resolve to their hashed files in the backup.
func (b *Backup) OpenMessages(ctx context.Context, opts Options) (*Reader, error) {
	opts.Immutable = true
	opts.backup = b
	r, err := Open(ctx, b.SMSDB, opts)
	if err != nil {
		return nil, fmt.Errorf("iPhone backup %s: %w", b.Dir, err)
	}
	return r, nil
}
