package contacts

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the project's SQLite driver, registered as "sqlite"
)

// appleEpoch is 2001-01-01T00:00:00Z, the reference date of Core Data and
// CFAbsoluteTime timestamps.
var appleEpoch = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// appleTime converts seconds since 2001 to a UTC time; NULL and 0 (never
// set) give the zero time.
func appleTime(v sql.NullFloat64) time.Time {
	if !v.Valid || v.Float64 == 0 || v.Float64 != v.Float64 || v.Float64 > 1e11 || v.Float64 < -1e11 {
		return time.Time{}
	}
	return appleEpoch.Add(time.Duration(v.Float64 * float64(time.Second))).UTC()
}

// openReadOnly opens a SQLite database with mode=ro, so the live WAL is
// read and nothing is ever written. The file is opened once with the OS
// first: SQLite reports a refused open as "unable to open database file",
// losing the EPERM that means "grant Full Disk Access" on macOS.
func openReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	f.Close()
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&_pragma=busy_timeout(5000)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// columns returns the upper-cased column names of a table; an absent
// table gives an empty set.
func columns(ctx context.Context, db *sql.DB, table string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		cols[strings.ToUpper(name)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	return cols, nil
}

// colOr returns expr when the column exists, else a neutral NULL literal,
// so one query works across schema versions.
func colOr(cols map[string]bool, name, expr string) string {
	if cols[strings.ToUpper(name)] {
		return expr
	}
	return "NULL"
}

// str returns a NullString's value trimmed.
func str(v sql.NullString) string {
	if !v.Valid {
		return ""
	}
	return strings.TrimSpace(strings.ToValidUTF8(v.String, "\uFFFD"))
}
