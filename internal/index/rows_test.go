package index

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// failingRows is a query that returns one row and then fails while
// stepping (abs of the smallest integer overflows), so the error surfaces
// only through rows.Err — the case a hand-written loop tends to drop.
const failingRows = `SELECT x, CASE WHEN x = 2 THEN abs(-9223372036854775807 - 1) ELSE x END
FROM (SELECT 1 AS x UNION ALL SELECT 2)`

// TestEachRowReturnsTheIterationError: eachRow hands every row to the scan
// function and returns the query's error, a scan's error, or the error
// that ended the iteration.
func TestEachRowReturnsTheIterationError(t *testing.T) {
	ctx := context.Background()
	ix := openTest(t, t.TempDir(), Options{})
	n := 0
	err := eachRow(ix.rdb.QueryContext(ctx, failingRows))(func(r *sql.Rows) error {
		var a, b int64
		n++
		return r.Scan(&a, &b)
	})
	if err == nil || !strings.Contains(err.Error(), "overflow") || n != 1 {
		t.Errorf("after %d rows: err = %v, want the overflow after one row", n, err)
	}
	if err := eachRow(ix.rdb.QueryContext(ctx, "SELECT nosuchcolumn FROM meta"))(func(*sql.Rows) error { return nil }); err == nil {
		t.Error("a failed query returned no error")
	}
	var got []int64
	err = eachRow(ix.rdb.QueryContext(ctx, "SELECT 1 UNION ALL SELECT 2"))(func(r *sql.Rows) error {
		var v int64
		got = append(got, v)
		return r.Scan(&got[len(got)-1])
	})
	if err != nil || len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("rows %v, err %v; want [1 2] and no error", got, err)
	}
}

// TestLoadFailsWhenATableReadFailsPartWay: loading memory from the index
// fails when reading a table stops with an error part-way, instead of
// keeping the rows read so far as if they were all (load.go's membership
// read dropped rows.Err). message_chats is replaced by a view, read in
// rowid order without a sort, whose second row fails when read.
func TestLoadFailsWhenATableReadFailsPartWay(t *testing.T) {
	ctx := context.Background()
	ix := openTest(t, t.TempDir(), Options{})
	mustSync(t, ix, smallCorpus().source(nil))
	for _, stmt := range []string{
		"DROP TABLE message_chats",
		"CREATE TABLE chats_real(msg INTEGER PRIMARY KEY, conv INTEGER)",
		"INSERT INTO chats_real VALUES (1, 1), (2, 1)",
		`CREATE VIEW message_chats(msg, conv) AS
		SELECT msg, CASE WHEN msg = 2 THEN abs(-9223372036854775807 - 1) ELSE conv END FROM chats_real`,
	} {
		if _, err := ix.wdb.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.load(ctx); err == nil || !strings.Contains(err.Error(), "load memberships") || !strings.Contains(err.Error(), "overflow") {
		t.Errorf("load = %v, want the membership read error", err)
	}
}
