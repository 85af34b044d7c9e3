package index

import (
	"context"
	"database/sql"
)

// txStmts runs statements inside one transaction, preparing each query
// text once: the driver would otherwise parse every statement on every
// call, which dominated the bulk-load profile.
type txStmts struct {
	tx *sql.Tx
	m  map[string]*sql.Stmt
}

func newTxStmts(tx *sql.Tx) *txStmts { return &txStmts{tx: tx, m: map[string]*sql.Stmt{}} }

func (s *txStmts) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.m[q]; ok {
		return st, nil
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
