package service

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/policy"
)

// DossierStore keeps living dossiers between calls (one JSON document per
// person, with the conversations it was built from). [OpenDossierStore]
// is the SQLite implementation.
type DossierStore interface {
	// Load returns a stored dossier, or nil and no error when there is none.
	Load(ctx context.Context, key string) ([]byte, error)
	// Save stores a dossier, replacing any previous one.
	Save(ctx context.Context, key string, conversations []string, upTo time.Time, data []byte) error
	// Purge deletes the dossiers for which remove returns true, so no trace
	// of their text is left in the file, and returns how many it deleted.
	Purge(ctx context.Context, remove func(key string, conversations []string) bool) (int, error)
	// Keys lists the stored dossiers.
	Keys(ctx context.Context) ([]string, error)
	// Count returns the number of stored dossiers.
	Count(ctx context.Context) (int, error)
}

// dossierTable is the service's own table in the index database. The
// index reserves a dossiers table keyed by its internal conversation ids,
// which a per-person dossier spanning several conversations does not fit,
// so the service keeps its own; it has no conv column, and Purge here
// (driven by the read policy, see Service.applyPolicy) removes what the
// index's purge does not know about.
const dossierTable = `CREATE TABLE IF NOT EXISTS service_dossiers(
	key           TEXT PRIMARY KEY,
	conversations TEXT NOT NULL,
	data          TEXT NOT NULL,
	up_to         INTEGER NOT NULL,
	updated       INTEGER NOT NULL
)`

// SQLStore is a DossierStore in a SQLite database: the index file itself
// (same 0600 file, same WAL), through a connection of its own.
type SQLStore struct {
	db  *sql.DB
	now func() time.Time
}

// OpenDossierStore opens (creating its table if needed) the dossier store
// in the SQLite database at path, normally the index's index.db. Deleted
// dossiers are overwritten on disk (secure_delete), like purged threads.
func OpenDossierStore(ctx context.Context, path string, now func() time.Time) (*SQLStore, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "secure_delete(ON)")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open dossier store: %w", err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, dossierTable); err != nil {
		db.Close()
		return nil, fmt.Errorf("open dossier store: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &SQLStore{db: db, now: now}, nil
}

// Close closes the store's connection.
func (s *SQLStore) Close() error { return s.db.Close() }

// Load implements DossierStore.
func (s *SQLStore) Load(ctx context.Context, key string) ([]byte, error) {
	var data string
	err := s.db.QueryRowContext(ctx, "SELECT data FROM service_dossiers WHERE key = ?", key).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load dossier: %w", err)
	}
	return []byte(data), nil
}

// Save implements DossierStore.
func (s *SQLStore) Save(ctx context.Context, key string, conversations []string, upTo time.Time, data []byte) error {
	if conversations == nil {
		conversations = []string{}
	}
	cj, err := json.Marshal(conversations)
	if err != nil {
		return fmt.Errorf("save dossier: %w", err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO service_dossiers(key, conversations, data, up_to, updated) VALUES(?, ?, ?, ?, ?)
ON CONFLICT(key) DO UPDATE SET conversations = excluded.conversations, data = excluded.data, up_to = excluded.up_to, updated = excluded.updated`,
		key, string(cj), string(data), upTo.UnixMilli(), s.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("save dossier: %w", err)
	}
	return nil
}

// Purge implements DossierStore.
func (s *SQLStore) Purge(ctx context.Context, remove func(key string, conversations []string) bool) (int, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT key, conversations FROM service_dossiers")
	if err != nil {
		return 0, fmt.Errorf("purge dossiers: %w", err)
	}
	var doomed []string
	for rows.Next() {
		var key, cj string
		if err := rows.Scan(&key, &cj); err != nil {
			rows.Close()
			return 0, fmt.Errorf("purge dossiers: %w", err)
		}
		var convs []string
		if json.Unmarshal([]byte(cj), &convs) != nil || remove(key, convs) {
			doomed = append(doomed, key)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("purge dossiers: %w", err)
	}
	for _, k := range doomed {
		if _, err := s.db.ExecContext(ctx, "DELETE FROM service_dossiers WHERE key = ?", k); err != nil {
			return 0, fmt.Errorf("purge dossiers: %w", err)
		}
	}
	if len(doomed) > 0 {
		// Move the zeroed pages out of the WAL into the file now.
		if _, err := s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return len(doomed), fmt.Errorf("purge dossiers: %w", err)
		}
	}
	return len(doomed), nil
}

// Keys implements DossierStore.
func (s *SQLStore) Keys(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT key FROM service_dossiers ORDER BY key")
	if err != nil {
		return nil, fmt.Errorf("list dossiers: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("list dossiers: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// Count implements DossierStore.
func (s *SQLStore) Count(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM service_dossiers").Scan(&n); err != nil {
		return 0, fmt.Errorf("count dossiers: %w", err)
	}
	return n, nil
}

// policyMark prefixes the policy fingerprint a dossier records among its
// conversations (see storeAdapter); it is never a conversation id.
const policyMark = "policy:"

// purgeDossiers removes stored dossiers built from a conversation the
// policy now hides, or under another policy (a person blocked since may
// have written in one of their conversations); they are rebuilt from what
// remains when next asked.
func (s *Service) purgeDossiers(ctx context.Context, p *policy.Policy) (int, error) {
	if s.dossiers == nil {
		return 0, nil
	}
	fp := p.Fingerprint()
	return s.dossiers.Purge(ctx, func(_ string, convs []string) bool {
		marked := false
		for _, id := range convs {
			if mark, ok := strings.CutPrefix(id, policyMark); ok {
				if mark != fp {
					return true
				}
				marked = true
				continue
			}
			if !s.visibleConv(ctx, p, id) {
				return true
			}
		}
		// A dossier saved before policies were recorded is rebuilt once.
		return !marked
	})
}
