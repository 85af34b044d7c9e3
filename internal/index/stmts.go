package index

import (
	"context"
	"database/sql"
	"sync"
)

// txStmts runs statements inside one transaction, preparing each query
// text once: the driver would otherwise parse every statement on every
// call, which dominated the bulk-load profile. With a stmtCache, texts
// used in an earlier transaction are not parsed again either.
type txStmts struct {
	tx    *sql.Tx
	m     map[string]*sql.Stmt
	cache *stmtCache
}

func newTxStmts(tx *sql.Tx) *txStmts { return &txStmts{tx: tx, m: map[string]*sql.Stmt{}} }

// newTxStmts returns statements for tx that reuse the write connection's
// statement cache (see stmtCache).
func (ix *Index) newTxStmts(tx *sql.Tx) *txStmts {
	s := newTxStmts(tx)
	s.cache = &ix.wstmts
	return s
}

func (s *txStmts) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.m[q]; ok {
		return st, nil
	}
	if s.cache != nil {
		if st := s.cache.get(q); st != nil {
			ts := s.tx.StmtContext(ctx, st)
			s.m[q] = ts
			return ts, nil
		}
		s.cache.want(q)
	}
	st, err := s.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.m[q] = st
	return st, nil
}

func (s *txStmts) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (s *txStmts) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext prepares like the others; a preparation error surfaces
// from Scan through the unprepared path.
func (s *txStmts) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return s.tx.QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

func (s *txStmts) close() {
	for _, st := range s.m {
		st.Close()
	}
}

// stmtCache holds statements prepared on the write pool, whose one
// connection every write transaction uses: a transaction reuses them
// (sql.Tx.StmtContext finds them prepared on its connection) instead of
// parsing its statements again. A text is prepared here only between
// transactions (warm): preparing on the pool while a transaction holds its
// only connection would wait forever. Bounded: a batch writes new message
// rows in a few dozen statement shapes (see insertSQL).
type stmtCache struct {
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	pending map[string]bool
}

// maxCachedStmts bounds the statements kept prepared on the write
// connection (each holds a compiled program in the driver's memory).
const maxCachedStmts = 96

func (c *stmtCache) get(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[q]
}

// want records a text used by a transaction for the next warm.
func (c *stmtCache) want(q string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m)+len(c.pending) >= maxCachedStmts {
		return
	}
	if c.pending == nil {
		c.pending = map[string]bool{}
	}
	c.pending[q] = true
}

// warm prepares the wanted texts on db. It must be called with no
// transaction open on db (it needs the connection). A text that fails to
// prepare is left to the transactions, which report the error.
func (c *stmtCache) warm(ctx context.Context, db *sql.DB) {
	c.mu.Lock()
	var qs []string
	for q := range c.pending {
		qs = append(qs, q)
	}
	clear(c.pending)
	c.mu.Unlock()
	for _, q := range qs {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]*sql.Stmt{}
		}
		if _, dup := c.m[q]; dup {
			st.Close()
		} else {
			c.m[q] = st
		}
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m, c.pending = nil, nil
}
