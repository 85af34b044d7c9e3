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
	err = eachRow(q.QueryContext(ctx, "SELECT chunk, data FROM docmeta WHERE ver > ? ORDER BY chunk", since))(func(r *sql.Rows) error {
		var c int
		var b []byte
		if err := r.Scan(&c, &b); err != nil {
			return err
		}
		return m.decodeChunk(c, b)
	})
	if err != nil {
		return fmt.Errorf("load docmeta: %w", err)
	}
	if err := m.loadTermRecs(ctx, q, since); err != nil {
		return err
	}
	// Memberships in further conversations (rare).
	clear(m.extra)
	err = eachRow(q.QueryContext(ctx, "SELECT msg, conv FROM message_chats ORDER BY msg"))(func(r *sql.Rows) error {
		var id, c int64
		if err := r.Scan(&id, &c); err != nil {
			return err
		}
		m.extra[uint32(id)] = append(m.extra[uint32(id)], uint32(c))
		return nil
	})
	if err != nil {
		return fmt.Errorf("load memberships: %w", err)
	}
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
	m.trecs, m.tupd, m.tdirty = n.trecs, n.tupd, n.tdirty
	m.docs, m.totalLen, m.maxID = n.docs, n.totalLen, n.maxID
	m.voc = n.voc
	m.convByID, m.handleStr, m.handleKey, m.handleByS, m.names = n.convByID, n.handleStr, n.handleKey, n.handleByS, n.names
	m.sourceKind = n.sourceKind
	m.labels = nil
	m.vec = n.vec
}

func (ix *Index) loadTerms(ctx context.Context, q queryer) error {
	v := newVocab()
	err := eachRow(q.QueryContext(ctx, "SELECT term, df FROM terms"))(func(r *sql.Rows) error {
		var t string
		var n int32
		if err := r.Scan(&t, &n); err != nil {
			return err
		}
		if n > 0 {
			v.df[t] = n
		}
		return nil
	})
	if err != nil {
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
	err := eachRow(q.QueryContext(ctx, "SELECT id, handle, norm FROM handles"))(func(r *sql.Rows) error {
		var id int64
		var h, n string
		if err := r.Scan(&id, &h, &n); err != nil {
			return err
		}
		m.handleStr[uint32(id)], m.handleKey[uint32(id)], m.handleByS[h] = h, n, uint32(id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("load handles: %w", err)
	}
	m.sourceKind = map[int64]string{}
	err = eachRow(q.QueryContext(ctx, "SELECT id, kind FROM sources"))(func(r *sql.Rows) error {
		var id int64
		var k string
		if err := r.Scan(&id, &k); err != nil {
			return err
		}
		m.sourceKind[id] = k
		return nil
	})
	if err != nil {
		return fmt.Errorf("load sources: %w", err)
	}
	m.convByID = map[uint32]*convInfo{}
	err = eachRow(q.QueryContext(ctx, `SELECT c.id, c.source, s.kind, c.guid, c.row_id, c.identifier, c.kind, c.display_name, c.service,
	c.archived, c.msg_count, c.last_time FROM conversations c JOIN sources s ON s.id = c.source`))(func(r *sql.Rows) error {
		ci := &convInfo{}
		var id int64
		var kind string
		if err := r.Scan(&id, &ci.source, &ci.c.Source, &ci.c.ID, &ci.c.RowID, &ci.c.Identifier, &kind, &ci.c.DisplayName,
			&ci.c.Service, &ci.c.Archived, &ci.msgCount, &ci.lastTime); err != nil {
			return err
		}
		ci.id = uint32(id)
		ci.c.Kind = model.ConversationKind(kind)
		ci.allowed = true
		m.convByID[ci.id] = ci
		return nil
	})
	if err != nil {
		return fmt.Errorf("load conversations: %w", err)
	}
	err = eachRow(q.QueryContext(ctx, "SELECT conv, handle FROM participants ORDER BY conv, pos"))(func(r *sql.Rows) error {
		var c, h int64
		if err := r.Scan(&c, &h); err != nil {
			return err
		}
		if ci := m.convByID[uint32(c)]; ci != nil {
			ci.handles = append(ci.handles, uint32(h))
			ci.c.Participants = append(ci.c.Participants, m.handleStr[uint32(h)])
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load participants: %w", err)
	}
	m.names = map[string]string{}
	err = eachRow(q.QueryContext(ctx, "SELECT ch.key, c.name FROM contact_handles ch JOIN contacts c ON c.id = ch.contact ORDER BY c.id DESC"))(func(r *sql.Rows) error {
		var k, n string
		if err := r.Scan(&k, &n); err != nil {
			return err
		}
		if n != "" {
			m.names[k] = n
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load contact names: %w", err)
	}
	return nil
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
