package index

import (
	"database/sql"
	"errors"
)

// errStopRows, returned by an eachRow scan function, ends the iteration
// early on purpose; callers that use it treat it as success.
var errStopRows = errors.New("stop reading rows")

// eachRow takes a query's result (rows, err: pass the QueryContext call
// straight in) and returns a function that hands every row to scan, closes
// the rows and returns the first error: the query's, a scan's, or the one
// that ended the iteration (rows.Err), which a hand-written loop tends to
// drop — a read that stops part-way must not look like a complete one.
//
//	err := eachRow(q.QueryContext(ctx, "SELECT id, kind FROM sources"))(func(r *sql.Rows) error {
//		…
//		return r.Scan(&id, &kind)
//	})
func eachRow(rows *sql.Rows, err error) func(scan func(*sql.Rows) error) error {
	return func(scan func(*sql.Rows) error) error {
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return rows.Close()
	}
}
