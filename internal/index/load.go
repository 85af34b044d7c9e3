package index

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/tidings-mcp/tidings/internal/model"
)

// load reads the in-memory state from the database in one read
// transaction (a consistent snapshot).
func (ix *Index) load(ctx context.Context) error {
	tx, err := ix.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("load index: %w", err)
	}
	defer tx.Rollback()
	ix.mem.mu.Lock()
	defer ix.mem.mu.Unlock()
	return ix.loadLocked(ctx, tx, true)
}

// loadLocked (re)loads memory from q. full reloads everything; otherwise
// only docmeta and vector chunks newer than mem.gen are read. Callers hold
// mem.mu.
func (ix *Index) loadLocked(ctx context.Context, q queryer, full bool) error {
	m := ix.mem
	gen, err := getMetaInt(ctx, q, "gen")
	if err != nil {
		return err
	}
	since := m.gen
	if full || since < 0 {
		fresh := newMemState()
		fresh.vec = m.vec
		m.replaceWith(fresh)
		since = -1
	}
	for _, k := range []struct {
		key string
		dst *int64
	}{{"docs", &m.docs}, {"total_len", &m.totalLen}} {
		v, err := getMetaInt(ctx, q, k.key)
		if err != nil {
			return err
		}
		*k.dst = v
	}
	// docmeta chunks.
	rows, err := q.QueryContext(ctx, "SELECT chunk, data FROM docmeta WHERE ver > ? ORDER BY chunk", since)
	if err != nil {
		return fmt.Errorf("load docmeta: %w", err)
	}
	for rows.Next() {
		var c int
		var b []byte
		if err := rows.Scan(&c, &b); err != nil {
			rows.Close()
			return fmt.Errorf("load docmeta: %w", err)
		}
		if err := m.decodeChunk(c, b); err != nil {
			rows.Close()
			return err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load docmeta: %w", err)
	}
	// Memberships in further conversations (rare).
	clear(m.extra)
	rows, err = q.QueryContext(ctx, "SELECT msg, conv FROM message_chats ORDER BY msg")
	if err != nil {
		return fmt.Errorf("load memberships: %w", err)
	}
	for rows.Next() {
		var id, c int64
		if err := rows.Scan(&id, &c); err != nil {
			rows.Close()
			return err
		}
		m.extra[uint32(id)] = append(m.extra[uint32(id)], uint32(c))
	}
	rows.Close()
	if err := ix.loadConversations(ctx, q); err != nil {
		return err
	}
	if full || since < 0 || gen != m.gen {
		if err := ix.loadTerms(ctx, q); err != nil {
			return err
		}
	}
	if err := ix.vecLoadLocked(ctx, q, since); err != nil {
		return err
	}
	m.gen = gen
	m.labels = nil
	return nil
}

func (m *memState) replaceWith(n *memState) {
	m.gen = n.gen
	m.times, m.convs, m.senders, m.flags = n.times, n.convs, n.senders, n.flags
	m.extra, m.chunkMax, m.chunkMin, m.envDirty, m.dirty = n.extra, n.chunkMax, n.chunkMin, true, n.dirty
	m.docs, m.totalLen, m.maxID = n.docs, n.totalLen, n.maxID
	m.voc = n.voc
	m.convByID, m.handleStr, m.handleKey, m.handleByS, m.names = n.convByID, n.handleStr, n.handleKey, n.handleByS, n.names
	m.sourceKind = n.sourceKind
	m.labels = nil
	m.vec = n.vec
}

func (ix *Index) loadTerms(ctx context.Context, q queryer) error {
	v := newVocab()
	rows, err := q.QueryContext(ctx, "SELECT term, df FROM terms")
	if err != nil {
		return fmt.Errorf("load terms: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int32
		if err := rows.Scan(&t, &n); err != nil {
			return fmt.Errorf("load terms: %w", err)
		}
		if n > 0 {
			v.df[t] = n
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load terms: %w", err)
	}
	ix.mem.voc = v
	return nil
}

// loadConversations reloads conversations, participants, handles and
// contact names (all small).
func (ix *Index) loadConversations(ctx context.Context, q queryer) error {
	m := ix.mem
	m.handleStr, m.handleKey, m.handleByS = map[uint32]string{}, map[uint32]string{}, map[string]uint32{}
	rows, err := q.QueryContext(ctx, "SELECT id, handle, norm FROM handles")
	if err != nil {
		return fmt.Errorf("load handles: %w", err)
	}
	for rows.Next() {
		var id int64
		var h, n string
		if err := rows.Scan(&id, &h, &n); err != nil {
			rows.Close()
			return fmt.Errorf("load handles: %w", err)
		}
		m.handleStr[uint32(id)], m.handleKey[uint32(id)], m.handleByS[h] = h, n, uint32(id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load handles: %w", err)
	}
	m.sourceKind = map[int64]string{}
	rows, err = q.QueryContext(ctx, "SELECT id, kind FROM sources")
	if err != nil {
		return fmt.Errorf("load sources: %w", err)
	}
	for rows.Next() {
		var id int64
		var k string
		if err := rows.Scan(&id, &k); err != nil {
			rows.Close()
			return fmt.Errorf("load sources: %w", err)
		}
		m.sourceKind[id] = k
	}
	rows.Close()
	m.convByID = map[uint32]*convInfo{}
	rows, err = q.QueryContext(ctx, `SELECT c.id, c.source, s.kind, c.guid, c.row_id, c.identifier, c.kind, c.display_name, c.service,
	c.archived, c.msg_count, c.last_time FROM conversations c JOIN sources s ON s.id = c.source`)
	if err != nil {
		return fmt.Errorf("load conversations: %w", err)
	}
	for rows.Next() {
		ci := &convInfo{}
		var id int64
		var kind string
		if err := rows.Scan(&id, &ci.source, &ci.c.Source, &ci.c.ID, &ci.c.RowID, &ci.c.Identifier, &kind, &ci.c.DisplayName,
			&ci.c.Service, &ci.c.Archived, &ci.msgCount, &ci.lastTime); err != nil {
			rows.Close()
			return fmt.Errorf("load conversations: %w", err)
		}
		ci.id = uint32(id)
		ci.c.Kind = model.ConversationKind(kind)
		ci.allowed = true
		m.convByID[ci.id] = ci
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load conversations: %w", err)
	}
	rows, err = q.QueryContext(ctx, "SELECT conv, handle FROM participants ORDER BY conv, pos")
	if err != nil {
		return fmt.Errorf("load participants: %w", err)
	}
	for rows.Next() {
		var c, h int64
		if err := rows.Scan(&c, &h); err != nil {
			rows.Close()
			return fmt.Errorf("load participants: %w", err)
		}
		if ci := m.convByID[uint32(c)]; ci != nil {
			ci.handles = append(ci.handles, uint32(h))
			ci.c.Participants = append(ci.c.Participants, m.handleStr[uint32(h)])
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load participants: %w", err)
	}
	m.names = map[string]string{}
	rows, err = q.QueryContext(ctx, "SELECT ch.key, c.name FROM contact_handles ch JOIN contacts c ON c.id = ch.contact ORDER BY c.id DESC")
	if err != nil {
		return fmt.Errorf("load contact names: %w", err)
	}
	for rows.Next() {
		var k, n string
		if err := rows.Scan(&k, &n); err != nil {
			rows.Close()
			return fmt.Errorf("load contact names: %w", err)
		}
		if n != "" {
			m.names[k] = n
		}
	}
	rows.Close()
	return rows.Err()
}

// refreshTx brings memory up to date inside a write transaction when
// another process has written since (meta gen differs).
func (ix *Index) refreshTx(ctx context.Context, tx *sql.Tx) error {
	gen, err := getMetaInt(ctx, tx, "gen")
	if err != nil {
		return err
	}
	ix.mem.mu.RLock()
	same := ix.mem.gen == gen
	ix.mem.mu.RUnlock()
	if same {
		return nil
	}
	ix.mem.mu.Lock()
	defer ix.mem.mu.Unlock()
	if ix.mem.gen == gen {
		return nil
	}
	ix.log.Debug("index changed by another process; reloading", "gen", gen, "had", ix.mem.gen)
	return ix.loadLocked(ctx, tx, false)
}

// refresh brings memory up to date before a query when another process
// (a running `tidings serve`, say) has written since.
func (ix *Index) refresh(ctx context.Context) error {
	gen, err := getMetaInt(ctx, ix.rdb, "gen")
	if err != nil {
		return err
	}
	ix.mem.mu.RLock()
	same := ix.mem.gen == gen
	ix.mem.mu.RUnlock()
	if same {
		return nil
	}
	tx, err := ix.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("refresh index: %w", err)
	}
	defer tx.Rollback()
	ix.mem.mu.Lock()
	defer ix.mem.mu.Unlock()
	if ix.mem.gen == gen {
		return nil
	}
	return ix.loadLocked(ctx, tx, false)
}
