package imessage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Check is one diagnostic for `tidings doctor`: what was checked, whether it
// passed, what was found, and — when it failed — what the user should do.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// fullDiskAccessFix is the macOS remedy for a chat.db the process may not
// read. It names the binary exe that needs the grant, and says why an
// upgrade loses it: macOS keys the grant to the program's code signature,
// and a binary built with `go build`/`go install` carries an ad-hoc
// signature that changes with every build (docs/releases.md).
func fullDiskAccessFix(exe string) string {
	who := "the app that runs tidings (Terminal, iTerm, your MCP client, or the tidings helper)"
	if exe != "" {
		who = exe + " — or the app that runs it (Terminal, iTerm, your MCP client)"
	}
	return "Grant Full Disk Access: System Settings → Privacy & Security → Full Disk Access (`tidings doctor --open-settings` opens it), " +
		"add " + who + ", then quit and reopen that app. In bridge mode only the helper needs it. " +
		"After an upgrade, a tidings binary that is not signed the same way as the old one loses the grant: remove its entry and add the new binary again."
}

// incompleteFix is the remedy for ErrIncompleteSchema.
const incompleteFix = "This copy of the database is damaged or partial (a table or column Messages always has is missing): " +
	"point --imessage at the live ~/Library/Messages/chat.db, or use an sms.db from a new, complete iPhone backup; " +
	"a copy made by another tool may have dropped it."

// DefaultChatDB returns the platform's chat.db location for the current user
// (it exists only on a Mac signed in to Messages).
func DefaultChatDB() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "Library", "Messages", "chat.db")
}

// CheckDatabase diagnoses a chat.db or sms.db: found, readable (live, not a stale
// copy), schema capabilities, and journal mode / WAL. It never fails; every
// problem is a Check with OK false and a Fix.
func CheckDatabase(ctx context.Context, path string) []Check {
	var checks []Check
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fix := "Pass the database with --imessage PATH, an iPhone backup with --ios-backup DIR, or try `tidings demo`."
		if runtime.GOOS == "darwin" {
			fix = "Open Messages and sign in (the database appears after the first message), or " + strings.ToLower(fix[:1]) + fix[1:]
		}
		return append(checks, Check{Name: "messages database found", Detail: path + " does not exist", Fix: fix})
	case err != nil:
		return append(checks, Check{Name: "messages database found", Detail: err.Error(), Fix: permissionFix(path)})
	case st.IsDir():
		return append(checks, Check{Name: "messages database found", Detail: path + " is a folder", Fix: "Point --imessage at the chat.db file itself."})
	}
	checks = append(checks, Check{Name: "messages database found", OK: true, Detail: fmt.Sprintf("%s (%s)", path, humanBytes(st.Size()))})

	r, err := Open(ctx, path, Options{NoFallback: true})
	if err != nil {
		fix := permissionFix(path)
		switch {
		case errors.Is(err, ErrIncompleteSchema):
			fix = incompleteFix
		case errors.Is(err, ErrNotMessagesDB) || isNotADatabase(err):
			fix = "This file is not a Messages database; pass chat.db (macOS) or sms.db (iPhone backup)."
		}
		return append(checks, Check{Name: "messages database readable", Detail: err.Error(), Fix: fix})
	}
	defer r.Close()
	checks = append(checks, Check{Name: "messages database readable", OK: true, Detail: "opened read-only (mode=ro), live rows in the WAL included"})
	checks = append(checks, r.schemaCheck(ctx))
	checks = append(checks, walCheck(path, r.caps.JournalMode))
	return checks
}

func (r *Reader) schemaCheck(ctx context.Context) Check {
	have, missing := r.caps.Summary()
	n, err := r.MaxRowID(ctx)
	if err != nil {
		return Check{Name: "schema capabilities", Detail: err.Error(), Fix: "The database could be opened but not queried; run `tidings doctor` again, and report the error if it persists."}
	}
	d := fmt.Sprintf("%d message columns, newest message ROWID %d; reads: %s", r.caps.MessageColumns, n, strings.Join(have, ", "))
	if len(missing) > 0 {
		d += "; not in this schema (older OS, nothing to read): " + strings.Join(missing, ", ")
	}
	return Check{Name: "schema capabilities", OK: true, Detail: d}
}

func walCheck(path, mode string) Check {
	c := Check{Name: "journal mode", OK: true}
	st, err := os.Stat(path + "-wal")
	switch {
	case err == nil:
		c.Detail = fmt.Sprintf("%s; %s-wal present (%s): recent rows live there and are read, because the database is opened mode=ro rather than immutable",
			mode, filepath.Base(path), humanBytes(st.Size()))
	case strings.EqualFold(mode, "wal"):
		c.Detail = "wal; no -wal file right now (everything is checkpointed)"
	default:
		c.Detail = mode + " (rollback journal: a copy or backup, read as is)"
	}
	return c
}

func permissionFix(path string) string {
	exe, _ := os.Executable()
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return permissionFixFor(runtime.GOOS, path, exe)
}

func permissionFixFor(goos, path, exe string) string {
	if goos == "darwin" && strings.Contains(path, "/Library/Messages/") {
		return fullDiskAccessFix(exe)
	}
	return "Make sure this user can read the file and its folder (and the -wal/-shm files next to it)."
}

// CheckBackup diagnoses an iPhone backup folder: unencrypted, complete,
// sms.db and the address book located, then the sms.db checks.
func CheckBackup(ctx context.Context, dir string) []Check {
	b, err := OpenBackup(ctx, dir)
	if err != nil {
		fix := "Make a new backup (Finder → your iPhone → Back Up Now, or `idevicebackup2 backup DIR`) and pass its folder (named after the device UDID)."
		if errors.Is(err, ErrEncryptedBackup) {
			fix = "Make an unencrypted backup: uncheck “Encrypt local backup” in Finder, or run `idevicebackup2 encryption off`, then back up again."
		}
		return []Check{{Name: "iPhone backup", Detail: err.Error(), Fix: fix}}
	}
	defer b.Close()
	d := "unencrypted, complete; sms.db found"
	if b.DeviceName != "" {
		d = fmt.Sprintf("%s (iOS %s): %s", b.DeviceName, b.ProductVersion, d)
	}
	checks := []Check{{Name: "iPhone backup", OK: true, Detail: d}}
	if b.AddressBook != "" {
		checks = append(checks, Check{Name: "iPhone address book", OK: true, Detail: "AddressBook.sqlitedb found"})
	} else {
		checks = append(checks, Check{Name: "iPhone address book", Detail: "AddressBook.sqlitedb is not in the backup; names will be phone numbers",
			Fix: "Pass a contacts export with --contacts FILE.vcf."})
	}
	r, err := b.OpenMessages(ctx, Options{})
	if err != nil {
		return append(checks, Check{Name: "messages database readable", Detail: err.Error(), Fix: "The backup's sms.db is damaged; make a new backup."})
	}
	defer r.Close()
	checks = append(checks, Check{Name: "messages database readable", OK: true, Detail: "sms.db opened read-only"})
	return append(checks, r.schemaCheck(ctx))
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
