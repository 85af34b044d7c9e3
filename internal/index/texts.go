package index

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// storedText is what the ranking and substring stages read of a message.
type storedText struct {
	id    int64
	time  int64
	text  string
	extra string // search_extra ("" when NULL)
}

// readTexts reads the text, search_extra and time of the messages with
// the given ids (in no particular order; missing ids are absent). All rows
// come back as one aggregated value: a driver row per message cost a
// locked call per column and step, about half of reading them. Each record
// is "id,time,len(text),len(extra)," followed by the text and extra bytes
// (extra's length is -1 for NULL).
func (ix *Index) readTexts(ctx context.Context, ids []int64, fn func(storedText)) error {
	if len(ids) == 0 {
		return nil
	}
	return ix.queryTexts(ctx, "id IN (SELECT value FROM json_each(?))", func(r storedText) {
		ix.textsRead.Add(1)
		fn(r)
	}, idsJSON(ids))
}

// readTextRange is readTexts for every message with lo <= id <= hi: a
// range is read in order along the table, without a lookup per id.
func (ix *Index) readTextRange(ctx context.Context, lo, hi int64, fn func(storedText)) error {
	if lo > hi {
		return nil
	}
	return ix.queryTexts(ctx, "id BETWEEN ? AND ?", fn, lo, hi)
}

func (ix *Index) queryTexts(ctx context.Context, where string, fn func(storedText), args ...any) error {
	rows, err := ix.rquery(ctx, `SELECT group_concat(id || ',' || time || ',' || length(CAST(text AS BLOB)) || ',' ||
	ifnull(length(CAST(search_extra AS BLOB)), -1) || ',' || text || ifnull(search_extra, ''), '')
FROM messages WHERE `+where, args...)
	if err != nil {
		return fmt.Errorf("read messages: %w", err)
	}
	defer rows.Close()
	var all []byte
	if rows.Next() {
		if err := rows.Scan(&all); err != nil {
			return fmt.Errorf("read messages: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read messages: %w", err)
	}
	// One string for the whole answer; each text is a substring of it.
	s := string(all)
	for len(s) > 0 {
		var f [4]int64
		for i := range f {
			j := indexByte(s, ',')
			if j < 0 {
				return fmt.Errorf("read messages: malformed record")
			}
			v, err := strconv.ParseInt(s[:j], 10, 64)
			if err != nil {
				return fmt.Errorf("read messages: malformed record: %w", err)
			}
			f[i], s = v, s[j+1:]
		}
		tl, el := f[2], max(f[3], 0)
		if tl < 0 || tl+el > int64(len(s)) {
			return fmt.Errorf("read messages: malformed record")
		}
		fn(storedText{id: f[0], time: f[1], text: s[:tl], extra: s[tl : tl+el]})
		s = s[tl+el:]
	}
	return nil
}

// indexByte finds c among the first bytes of s: an id, a time or a
// length is at most 20 characters.
func indexByte(s string, c byte) int {
	return strings.IndexByte(s[:min(len(s), 24)], c)
}
