package imessage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the project's SQLite driver ("sqlite")
)

// ErrNotFound is returned by lookups (a message, an attachment) that match no row.
var ErrNotFound = errors.New("not found")

// ErrNotMessagesDB means the file is a SQLite database (or not even that) but
// lacks the tables of a Messages database.
var ErrNotMessagesDB = errors.New("not a Messages database (no message/chat tables)")

// ErrIncompleteSchema means the file is a Messages database (it has a
// message or chat table) that lacks a table or a column the reader needs:
// a damaged or partial copy. Reading it anyway would fail halfway or, for
// a column such as message.date, return wrong answers without an error.
var ErrIncompleteSchema = errors.New("incomplete Messages database")

// Options configures Open. The zero value reads a live chat.db.
type Options struct {
	// Home replaces the user's home directory when attachment paths starting
	// with "~/" are resolved (tests; reading another user's copy). Empty means
	// os.UserHomeDir.
	Home string
	// Immutable opens the file with immutable=1, for copies that no process
	// writes (backups, exports). Never set it for a live chat.db: an immutable
	// read ignores the WAL, where Messages keeps its newest rows.
	Immutable bool
	// NoFallback makes a refused read-only open an error instead of a read
	// of a private copy (doctor uses it: copying a large chat.db to answer
	// "is it readable?" would be slow and would hide the real problem).
	NoFallback bool
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger

	backup *Backup // set by Backup.Open: attachments resolve through it
}

// Reader reads one Messages database. It is safe for concurrent use.
type Reader struct {
	db     *sql.DB
	path   string // the file the user named
	opened string // the file actually opened (a private copy when stale)
	tmpDir string // private copy, removed by Close
	stale  string // why results may be stale; empty when reading the live file
	sch    *schema
	caps   Capabilities
	home   string
	backup *Backup
	log    *slog.Logger
}

// openHook lets tests simulate a refused read-only open (root ignores file
// permissions, so the refusal cannot be produced with chmod in CI).
var openHook func(dsn string) error

// Open opens a chat.db or sms.db for reading. It probes the schema once and
// fails with a clear error when the file is missing, is not a database, or is
// not a Messages database. When SQLite refuses a read-only open of the live
// file (macOS privacy controls have been reported to do this), Open reads a
// private copy of db + WAL instead and Stale reports it.
func Open(ctx context.Context, path string, opts Options) (*Reader, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open messages database %s: %w", path, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open messages database: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("open messages database %s: is a directory", abs)
	}
	home := opts.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	r := &Reader{path: abs, opened: abs, home: home, backup: opts.backup, log: log}

	db, err := openDB(ctx, abs, opts.Immutable)
	if err != nil {
		if errors.Is(err, ErrNotMessagesDB) || isNotADatabase(err) || opts.NoFallback || opts.Immutable {
			return nil, fmt.Errorf("open messages database %s: %w", abs, err)
		}
		log.Warn("read-only open refused; reading a private copy", "path", abs, "err", err)
		db, err = r.openCopy(ctx, err)
		if err != nil {
			return nil, err
		}
	}
	r.db = db
	sch, caps, err := probe(ctx, db)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("open messages database %s: %w", abs, err)
	}
	r.sch, r.caps = sch, caps
	return r, nil
}

// dsn returns the SQLite URI for a read-only open of path.
func dsn(path string, immutable bool) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	q := "mode=ro"
	if immutable {
		q += "&immutable=1"
	}
	return u.String() + "?" + q
}

// openDB opens path read-only and proves that it can be read (sql.Open
// alone touches nothing). It sets no pragma that writes.
func openDB(ctx context.Context, path string, immutable bool) (*sql.DB, error) {
	d := dsn(path, immutable)
	if openHook != nil {
		if err := openHook(d); err != nil {
			return nil, err
		}
	}
	db, err := sql.Open("sqlite", d)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN ('message','chat')").Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	// One of the two is enough to be a Messages database; the schema probe
	// names what else is missing (ErrIncompleteSchema).
	if n == 0 {
		db.Close()
		return nil, ErrNotMessagesDB
	}
	return db, nil
}

func isNotADatabase(err error) bool {
	s := err.Error()
	return strings.Contains(s, "not a database") || strings.Contains(s, "SQLITE_NOTADB")
}

// openCopy copies the database and its WAL into a private temporary folder
// and opens the copy. A copy taken while Messages writes can be torn, so the
// copy is retried until the sources did not change while being copied.
func (r *Reader) openCopy(ctx context.Context, cause error) (*sql.DB, error) {
	dir, err := os.MkdirTemp("", "tidings-chatdb-")
	if err != nil {
		return nil, fmt.Errorf("open messages database %s: read-only open refused (%v) and no temporary folder for a copy: %w", r.path, cause, err)
	}
	dst := filepath.Join(dir, filepath.Base(r.path))
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		before := snapshotStat(r.path)
		lastErr = copyFiles(r.path, dst)
		if lastErr == nil && before == snapshotStat(r.path) {
			break
		}
		if lastErr == nil {
			lastErr = errors.New("database changed while it was copied")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if lastErr != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("open messages database %s: read-only open refused (%v); copying it failed: %w", r.path, cause, lastErr)
	}
	// The copy is private and nobody writes it, so a plain read-only open
	// applies its WAL (SQLite may create the -shm in our folder).
	db, err := openDB(ctx, dst, false)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("open messages database %s: read-only open refused (%v); reading a copy failed: %w", r.path, cause, err)
	}
	r.tmpDir = dir
	r.opened = dst
	r.stale = fmt.Sprintf("read from a copy taken at %s because the read-only open was refused (%v); newer messages are not seen until reopened", time.Now().UTC().Format(time.RFC3339), cause)
	return db, nil
}

// snapshotStat summarises size and mtime of the db and its WAL.
func snapshotStat(path string) string {
	var b strings.Builder
	for _, p := range []string{path, path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			fmt.Fprintf(&b, "%d/%d;", st.Size(), st.ModTime().UnixNano())
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

// copyFiles copies src and, when present, src-wal to dst and dst-wal. The
// -shm is not copied: it is an index SQLite rebuilds from the WAL.
func copyFiles(src, dst string) error {
	if err := copyFile(src, dst); err != nil {
		return err
	}
	if err := copyFile(src+"-wal", dst+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Close releases the database and removes a private copy, if one was made.
func (r *Reader) Close() error {
	var err error
	if r.db != nil {
		err = r.db.Close()
	}
	if r.tmpDir != "" {
		if rmErr := os.RemoveAll(r.tmpDir); err == nil {
			err = rmErr
		}
	}
	return err
}

// Path returns the database path the caller named.
func (r *Reader) Path() string { return r.path }

// Stale reports whether results may be stale, and why. It is true only when
// the live file could not be opened read-only and a private copy is read
// instead; callers must surface the reason to the user.
func (r *Reader) Stale() (bool, string) { return r.stale != "", r.stale }

// Capabilities returns what the schema supports, as probed at Open.
func (r *Reader) Capabilities() Capabilities { return r.caps }
