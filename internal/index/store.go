package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the project's SQLite driver (driver name "sqlite")
)

// Options configure an Index. The zero value is usable: no embedder (full
// text only), every thread allowed, the real clock.
type Options struct {
	// Embedder turns text into vectors for semantic and hybrid search; nil
	// disables them (searches say so). A Fitter is fitted on the corpus on
	// the first sync and its state is stored in the index.
	Embedder Embedder
	// Policy decides which threads may be stored; nil allows all.
	Policy Policy
	// Now is the clock for relative dates ("last week") and sync times; nil
	// means time.Now. Commands pass config.Config.Now (TIDINGS_NOW).
	Now func() time.Time
	// Location interprets relative dates ("yesterday"); nil means time.Local.
	Location *time.Location
	// NormalizeHandle maps a handle to the key used to match contacts and
	// filters: E.164 for phones, lower case for emails. nil uses a simple
	// built-in normaliser (digits, last 10 digits); the contacts package
	// provides a libphonenumber-based one.
	NormalizeHandle func(handle string) string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// ReadOnly opens the index for queries only: no migrations, no sync.
	ReadOnly bool
	// VectorMemory bounds the memory of the int8 vectors kept for
	// re-ranking semantic candidates (default 96 MiB): each distinct vector
	// once (dim bytes plus bookkeeping) and 4 bytes per message, outside the
	// Go heap. That is about 650k distinct vectors of the built-in embedder;
	// messages with the same words share one. Beyond it, candidates are
	// re-ranked from the database: less memory, slower queries.
	VectorMemory int64
	// Tuning overrides search limits; zero fields take the defaults.
	Tuning Tuning
}

// Tuning holds search limits. They bound work per query; whenever one cuts
// a scan short the answer says so (ScanComplete false).
type Tuning struct {
	// TermCap is how many postings of one query term fulltext search reads
	// (newest first) before it stops and reports an incomplete scan.
	TermCap int
	// RerankDepth is how many fulltext candidates are re-scored with exact
	// BM25 from their text.
	RerankDepth int
	// VectorCandidates is how many binary-code candidates are re-ranked
	// exactly (800: recall@10 0.988 against an exact scan, measured on
	// 100k messages with the built-in embedder).
	VectorCandidates int
	// SubstringScan caps the messages a substring search verifies.
	SubstringScan int
	// FuseDepth is how many hits of each signal hybrid search fuses.
	FuseDepth int
}

func (t Tuning) withDefaults() Tuning {
	if t.TermCap <= 0 {
		t.TermCap = 20000
	}
	if t.RerankDepth <= 0 {
		t.RerankDepth = 200
	}
	if t.VectorCandidates <= 0 {
		t.VectorCandidates = 800
	}
	if t.SubstringScan <= 0 {
		t.SubstringScan = 50000
	}
	if t.FuseDepth <= 0 {
		t.FuseDepth = 100
	}
	return t
}

// Index is an open index. Its methods are safe for concurrent use; writes
// (Sync, Purge, embedding) are serialised internally, and queries run
// concurrently with them.
type Index struct {
	path string
	opts Options
	log  *slog.Logger
	now  func() time.Time
	tune Tuning

	wdb *sql.DB // the one write connection (nil when ReadOnly)
	rdb *sql.DB // read connections

	writeMu sync.Mutex // serialises writers in this process

	rstmts sync.Map  // query text → *sql.Stmt prepared on rdb
	wstmts stmtCache // statements of write transactions, prepared on wdb

	mem *memState // in-memory columns, vocabulary, caches

	// textsRead counts the message texts readTexts returned: what the
	// ranking costs in row reads (TestFulltextReadsOnlyThePageTexts).
	textsRead atomic.Int64
	// textScoring makes full-text ranking read every candidate's text
	// instead of its term record: the reference the record scores are
	// compared with (TestRecordScoresEqualTextScores). Tests only.
	textScoring bool

	hiddenMu sync.Mutex
	hidden   *hiddenTerms // the last hiddenTermsLocked answer (hidden.go)

	embedMu     sync.Mutex
	embBaseID   string       // Embedder.ID before any fitted state was restored
	embRestored int64        // fit_docs of the Fitter state restored (0: none)
	prefit      *prefitState // a fit computed ahead of the embedding pass (embedMu)
	embedWake   chan struct{}
	bg          sync.WaitGroup
	closeOnce   sync.Once
	closed      chan struct{}
}

// ErrClosed is returned by methods called after Close.
var ErrClosed = errors.New("index closed")

// Open opens (creating if needed) the index database at path. The folder is
// created with mode 0700 and the database files with 0600: an index is a
// copy of message content.
func Open(ctx context.Context, path string, opts Options) (*Index, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	if opts.NormalizeHandle == nil {
		opts.NormalizeHandle = NormalizeHandle
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.VectorMemory == 0 {
		opts.VectorMemory = 96 << 20
	}
	ix := &Index{path: path, opts: opts, log: opts.Logger, now: opts.Now, tune: opts.Tuning.withDefaults(),
		embedWake: make(chan struct{}, 1), closed: make(chan struct{})}
	if opts.Embedder != nil {
		ix.embBaseID = opts.Embedder.ID()
	}
	if !opts.ReadOnly {
		if err := prepareFiles(path); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	var err error
	if !opts.ReadOnly {
		ix.wdb, err = openDB(path, false, 1, writeCacheKiB)
		if err != nil {
			return nil, err
		}
		if err := ix.migrate(ctx); err != nil {
			ix.wdb.Close()
			return nil, err
		}
		// SQLite creates -wal and -shm lazily; tighten them now they exist.
		tightenFiles(path)
	}
	ix.rdb, err = openDB(path, true, 16, 2<<10)
	if err != nil {
		if ix.wdb != nil {
			ix.wdb.Close()
		}
		return nil, err
	}
	if opts.ReadOnly {
		var v int
		if err := ix.rdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			ix.Close()
			return nil, fmt.Errorf("open index: %w", err)
		}
		if v != len(migrations) {
			ix.Close()
			return nil, fmt.Errorf("open index: schema version %d, this build needs %d (run 'tidings index' to upgrade)", v, len(migrations))
		}
	}
	ix.mem = newMemState()
	if err := ix.load(ctx); err != nil {
		ix.Close()
		return nil, err
	}
	ix.restoreEmbedder(ctx)
	return ix, nil
}

// writeCacheKiB is the write connection's page cache. Bulk loads append
// (their pages are written once and not read again), so a small cache is
// as fast as a large one: at 1M messages 4 MiB and 16 MiB took the same
// CPU time, and 4 MiB kept 25 MB less resident.
const writeCacheKiB = 4 << 10

// openDB opens a connection pool. The write pool takes the write lock at
// BEGIN (_txlock=immediate) so a transaction never fails half-way on a lock
// upgrade; both wait up to 10 s for a busy database. cacheKiB is each
// connection's page cache: writeCacheKiB for the writer, 2 MiB for each
// reader (queries touch few pages; the memory budget is tight).
func openDB(path string, read bool, conns int, cacheKiB int) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(0)")
	q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", cacheKiB))
	q.Add("_pragma", "temp_store(MEMORY)")
	if read {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		// Freed space is zeroed on every write, not only in a purge: an
		// earlier version of a row a sync rewrote would otherwise stay in
		// a page's free space and outlive the purge of its thread.
		q.Add("_pragma", "secure_delete(1)")
		q.Set("_txlock", "immediate")
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	// Readers: a search may hold one connection while it reads through
	// another (substring verification), so the pool is larger than the
	// number of cores; only 4 stay open when idle.
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(min(conns, 4))
	db.SetConnMaxIdleTime(0)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	return db, nil
}

// prepareFiles creates the index folder (0700) and file (0600), and refuses
// an existing folder or file that others can read.
func prepareFiles(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create index folder: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("index folder: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		// Our own folder (we may have created it under a lax umask): fix it.
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("index folder %s is readable by others and cannot be fixed: %w", dir, err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create index file: %w", err)
	}
	f.Close()
	tightenFiles(path)
	return nil
}

// tightenFiles sets mode 0600 on the database and its WAL and shared-memory
// files.
func tightenFiles(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0o600 {
			_ = os.Chmod(p, 0o600)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
	}
}

func (ix *Index) migrate(ctx context.Context) error {
	var v int
	if err := ix.wdb.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("index schema version %d is newer than this build (%d): upgrade tidings", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		tx, err := ix.wdb.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate index: %w", err)
		}
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate index to version %d: %w", i+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", i+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate index to version %d: %w", i+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate index to version %d: %w", i+1, err)
		}
	}
	return nil
}

// rstmt returns a statement prepared once on the read pool (the driver
// would otherwise parse the query on every call).
func (ix *Index) rstmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := ix.rstmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := ix.rdb.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := ix.rstmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// rquery runs a read query through a cached statement.
func (ix *Index) rquery(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := ix.rstmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// Path returns the index database path.
func (ix *Index) Path() string { return ix.path }

// Close waits for background work to stop and closes the database.
func (ix *Index) Close() error {
	ix.closeOnce.Do(func() { close(ix.closed) })
	ix.bg.Wait()
	var err error
	if ix.wdb != nil {
		ix.wstmts.close()
		// Fold the WAL back so the folder holds one file at rest.
		_, _ = ix.wdb.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
		err = ix.wdb.Close()
	}
	ix.rstmts.Range(func(_, v any) bool {
		v.(*sql.Stmt).Close()
		return true
	})
	if ix.rdb != nil {
		if e := ix.rdb.Close(); err == nil {
			err = e
		}
	}
	return err
}

func (ix *Index) isClosed() bool {
	select {
	case <-ix.closed:
		return true
	default:
		return false
	}
}

// queryer is the part of *sql.DB and *sql.Tx the helpers need.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getMetaInt(ctx context.Context, q queryer, key string) (int64, error) {
	var v sql.NullInt64
	err := q.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read meta %s: %w", key, err)
	}
	return v.Int64, nil
}

func getMetaString(ctx context.Context, q queryer, key string) (string, error) {
	var v sql.NullString
	err := q.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read meta %s: %w", key, err)
	}
	return v.String, nil
}

func setMeta(ctx context.Context, q queryer, key string, value any) error {
	if _, err := q.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value); err != nil {
		return fmt.Errorf("write meta %s: %w", key, err)
	}
	return nil
}
