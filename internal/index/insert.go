package index

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// rowsPerInsert is how many new messages one INSERT statement carries:
// multi-row statements spend the driver's per-statement cost once per group.
const rowsPerInsert = 8

// insertBuffer groups new message rows into multi-row INSERTs.
type insertBuffer struct {
	args []any
	n    int
}

// add queues the row of a new message (id, then the messageCols values)
// and writes a full group.
func (b *insertBuffer) add(ctx context.Context, tx queryer, id int64, row []any) error {
	b.args = append(b.args, id)
	b.args = append(b.args, row...)
	b.n++
	if b.n == rowsPerInsert {
		return b.flush(ctx, tx)
	}
	return nil
}

// flush writes the queued rows in one statement. A column that is NULL in
// every queued row is written as a NULL literal instead of a bound
// parameter: most messages have no subject, edit, reply, effect or extra
// fields, and each bound value costs the driver a locked call (binding
// the NULLs was a seventh of the bulk load's insert time).
func (b *insertBuffer) flush(ctx context.Context, tx queryer) error {
	if b.n == 0 {
		return nil
	}
	const cols = messageColCount
	var nulls uint32 // bit c: column c is NULL in every row
	for c := 0; c < cols; c++ {
		all := true
		for r := 0; r < b.n && all; r++ {
			all = b.args[r*cols+c] == nil
		}
		if all {
			nulls |= 1 << c
		}
	}
	q, nulls := insertSQL(b.n, nulls)
	args := b.args
	if nulls != 0 {
		k := 0
		for i, a := range b.args {
			if nulls&(1<<(i%cols)) == 0 {
				args[k] = a
				k++
			}
		}
		args = args[:k]
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("insert messages: %w", err)
	}
	clear(b.args)
	b.args, b.n = b.args[:0], 0
	return nil
}

// insertSQLs caches the statement texts by row count and NULL-column mask;
// only so many shapes are kept (each is prepared once per batch), beyond
// that every column is bound.
var insertSQLs struct {
	sync.Mutex
	m map[uint64]string
}

const maxInsertShapes = 256

// insertSQL returns the INSERT for rows rows whose columns with a bit set
// in nulls are NULL literals, and the mask it used: once maxInsertShapes
// shapes exist a new one binds every column (mask 0).
func insertSQL(rows int, nulls uint32) (string, uint32) {
	insertSQLs.Lock()
	defer insertSQLs.Unlock()
	if insertSQLs.m == nil {
		insertSQLs.m = map[uint64]string{}
	}
	key := uint64(rows)<<32 | uint64(nulls)
	if q, ok := insertSQLs.m[key]; ok {
		return q, nulls
	}
	if len(insertSQLs.m) >= maxInsertShapes {
		nulls, key = 0, uint64(rows)<<32
		if q, ok := insertSQLs.m[key]; ok {
			return q, 0
		}
	}
	var row strings.Builder
	row.WriteByte('(')
	for c := 0; c < messageColCount; c++ {
		if c > 0 {
			row.WriteByte(',')
		}
		if nulls&(1<<c) != 0 {
			row.WriteString("NULL")
		} else {
			row.WriteByte('?')
		}
	}
	row.WriteByte(')')
	r := row.String()
	q := "INSERT INTO messages(id, " + messageCols + ") VALUES " + r + strings.Repeat(","+r, rows-1)
	insertSQLs.m[key] = q
	return q, nulls
}
