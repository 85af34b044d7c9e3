package imessage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"
	"modernc.org/sqlite"
)

// schemaFiles are the real schema dumps of internal/imessage/schemas, oldest first.
var schemaFiles = []string{"iOS6.1.6", "iOS9.2.1", "iOS10.2", "iOS11.2", "macos15"}

// Apple's triggers call functions that Messages.app registers on its own
// connections (observed in the macOS 15 schema). No-op stand-ins let the
// fixtures delete rows through the real triggers; the reader never calls them.
func init() {
	noop := func(*sqlite.FunctionContext, []driver.Value) (driver.Value, error) { return nil, nil }
	sqlite.MustRegisterScalarFunction("after_delete_message_plugin", 2, noop)
	sqlite.MustRegisterScalarFunction("delete_attachment_path", 1, noop)
	sqlite.MustRegisterScalarFunction("before_delete_attachment_path", 2, noop)
}

// createFromSchema creates a database at path from a schema dump, exactly as
// dumped (indexes and triggers included) except for sqlite_* tables, which
// SQLite creates itself.
func createFromSchema(t testing.TB, path, schemaFile string) *sql.DB {
	t.Helper()
	ddl, err := schemas.DDL(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's own writer skips fsync; the file stays in rollback-journal
	// mode, like a copied or backed-up database.
	db, err := sql.Open("sqlite", path+"?_pragma=synchronous(OFF)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(ddl); err != nil {
		db.Close()
		t.Fatalf("create %s: %v", schemaFile, err)
	}
	return db
}

// fixture inserts rows into a database built from a real schema, silently
// dropping columns the schema lacks, the way data written by an older OS
// simply has no such column.
type fixture struct {
	t    testing.TB
	db   *sql.DB
	path string
	cols map[string]map[string]bool
	rows *chatdb.Writer // made on first use
}

func newFixture(t testing.TB, schemaFile string) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chat.db")
	db := createFromSchema(t, path, schemaFile)
	t.Cleanup(func() { db.Close() })
	f := &fixture{t: t, db: db, path: path, cols: map[string]map[string]bool{}}
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type='table'")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	for _, tb := range tables {
		set := map[string]bool{}
		rows, err := db.Query("SELECT name FROM pragma_table_info(?)", tb)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			rows.Scan(&n)
			set[n] = true
		}
		rows.Close()
		f.cols[tb] = set
	}
	return f
}

func (f *fixture) has(table, col string) bool { return f.cols[table][col] }

// writer is the fixture's chatdb.Writer.
func (f *fixture) writer() *chatdb.Writer {
	if f.rows == nil {
		f.rows = chatdb.ForTest(f.t, f.db)
	}
	return f.rows
}

// insert adds a row through chatdb (the reader's tests set era-specific
// columns by name); kv alternates column names and values. Unknown columns
// are dropped. It returns the new ROWID.
func (f *fixture) insert(table string, kv ...any) int64 {
	f.t.Helper()
	return f.writer().Insert(table, kv...)
}

// nanos reports whether this schema's era stores nanosecond dates.
func (f *fixture) nanos() bool { return f.has("message", "destination_caller_id") }

// date encodes t the way this schema's era does.
func (f *fixture) date(t time.Time) int64 {
	if f.nanos() {
		return AppleNanos(t)
	}
	return t.Unix() - appleEpoch
}

func (f *fixture) open(t testing.TB) *Reader {
	t.Helper()
	r, err := Open(context.Background(), f.path, Options{Home: "/home/tester"})
	if err != nil {
		t.Fatalf("open %s: %v", f.path, err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
