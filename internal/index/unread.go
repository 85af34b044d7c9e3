package index

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Unread counts, per conversation id and sender handle (so a caller can
// leave out people it hides), the unread incoming messages at or
// after since: not from the owner, read flag clear (chat.db is_read,
// Android read), not a reaction, group event, unsent or recently deleted
// row. Only conversations the read policy allows and that were active
// since then are counted. A message read on the phone after it was
// indexed is cleared by the next sync (the flag is part of its hash).
func (ix *Index) Unread(ctx context.Context, since time.Time) (map[string]map[string]int, error) {
	if err := ix.refresh(ctx); err != nil {
		return nil, err
	}
	ms := since.UnixMilli()
	var ids []int64
	ix.mem.mu.RLock()
	for _, ci := range ix.mem.convByID {
		if ci.lastTime >= ms && ix.visible(ci) {
			ids = append(ids, int64(ci.id))
		}
	}
	ix.mem.mu.RUnlock()
	out := map[string]map[string]int{}
	if len(ids) == 0 {
		return out, nil
	}
	st, err := ix.rstmt(ctx, `SELECT conv, sender, count(*) FROM messages
WHERE conv IN (SELECT value FROM json_each(?)) AND time >= ? AND from_me = 0 AND flags & ? = 0
AND kind NOT IN ('reaction', 'group_event') GROUP BY conv, sender`)
	if err != nil {
		return nil, fmt.Errorf("unread: %w", err)
	}
	err = eachRow(st.QueryContext(ctx, idsJSON(ids), ms, mfRead|mfUnsent|mfRecentlyDeleted))(func(r *sql.Rows) error {
		var conv, sender int64
		var n int
		if err := r.Scan(&conv, &sender, &n); err != nil {
			return err
		}
		ix.mem.mu.RLock()
		if ci := ix.mem.convByID[uint32(conv)]; ci != nil {
			if out[ci.c.ID] == nil {
				out[ci.c.ID] = map[string]int{}
			}
			out[ci.c.ID][ix.mem.handleStr[uint32(sender)]] += n
		}
		ix.mem.mu.RUnlock()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("unread: %w", err)
	}
	return out, nil
}
