package index

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// TestInsertBufferNullShapes writes groups whose rows have NULLs in
// different columns (all NULL, some NULL, none) and reads every column back.
func TestInsertBufferNullShapes(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{})
	ctx := context.Background()
	row := func(id int64) []any {
		r := []any{int64(1), fmt.Sprintf("g%d", id), id, int64(1), int64(0), id%2 == 0, "text", nil, "iMessage",
			1000 + id, nil, nil, nil, nil, fmt.Sprintf("text %d", id), nil, nil, nil, int64(0), int64(0),
			nil, nil, nil, nil, nil, true, id * 31}
		switch id % 5 {
		case 1:
			r[7], r[10] = "detail", 2000+id // detail, time_read
		case 2:
			r[20], r[21] = "reply", id // reply_to, reply_to_part
		case 3:
			r[24] = `{"x":1}` // extra
		}
		return r
	}
	want := map[int64][]any{}
	for _, n := range []int{8, 3, 8, 1, 5} { // full groups and a partial flush
		tx, err := ix.wdb.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var b insertBuffer
		base := int64(len(want)) + 1
		for i := int64(0); i < int64(n); i++ {
			id := base + i
			if n == 3 && i == 1 {
				id += 1000 // ids need not be consecutive
			}
			r := row(id)
			want[id] = append([]any{id}, r...)
			if err := b.add(ctx, tx, id, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.flush(ctx, tx); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := ix.wdb.QueryContext(ctx, "SELECT id, "+messageCols+" FROM messages")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := 0
	for rows.Next() {
		vals := make([]any, messageColCount)
		ptrs := make([]any, messageColCount)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		id := vals[0].(int64)
		w, ok := want[id]
		if !ok {
			t.Fatalf("unexpected row %d", id)
		}
		for c := range vals {
			if !sameValue(vals[c], w[c]) {
				t.Errorf("row %d column %d: got %#v, want %#v", id, c, vals[c], w[c])
			}
		}
		got++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got != len(want) {
		t.Errorf("%d rows, want %d", got, len(want))
	}
}

// sameValue compares a scanned value with the value that was bound.
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case bool:
		g, ok := got.(int64)
		return ok && (g != 0) == w
	case string:
		switch g := got.(type) {
		case string:
			return g == w
		case []byte:
			return string(g) == w
		}
		return false
	case int64:
		g, ok := got.(int64)
		return ok && g == w
	}
	var ns sql.NullString
	return ns.Scan(got) == nil && ns.String == fmt.Sprint(want)
}
