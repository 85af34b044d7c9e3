package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tidings-mcp/tidings/internal/index/fold"
	"github.com/tidings-mcp/tidings/internal/model"
)

// LoadContacts replaces the cards stored for one contact source (key, e.g.
// "contacts:/path/book.vcf") with cards, and refreshes the names shown for
// handles and conversations. A card's phones and emails are stored under their
// normalised key (Options.NormalizeHandle) and, for phones, their last ten
// digits, the matching rule of docs/contacts.md. It returns the number of
// cards.
func (ix *Index) LoadContacts(ctx context.Context, key string, cards []model.Contact) (int, error) {
	if ix.wdb == nil {
		return 0, errors.New("load contacts: index opened read-only")
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("load contacts: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "DELETE FROM contact_handles WHERE contact IN (SELECT id FROM contacts WHERE source = ?)", key); err != nil {
		return 0, fmt.Errorf("load contacts: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM contacts WHERE source = ?", key); err != nil {
		return 0, fmt.Errorf("load contacts: %w", err)
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO contacts(source, ext_id, name, data) VALUES(?, ?, ?, ?) ON CONFLICT(source, ext_id) DO UPDATE SET name = excluded.name, data = excluded.data RETURNING id")
	if err != nil {
		return 0, fmt.Errorf("load contacts: %w", err)
	}
	defer ins.Close()
	n := 0
	for _, c := range cards {
		name := fold.Sanitize(strings.TrimSpace(c.Name()))
		b, err := json.Marshal(c)
		if err != nil {
			return 0, fmt.Errorf("load contacts: %w", err)
		}
		var id int64
		if err := ins.QueryRowContext(ctx, key, fold.Sanitize(c.ID), name, string(b)).Scan(&id); err != nil {
			return 0, fmt.Errorf("load contact %s: %w", c.ID, err)
		}
		n++
		keys := map[string]bool{}
		for _, p := range c.Phones {
			if k := ix.opts.NormalizeHandle(p); k != "" {
				keys[k] = true
			}
			if l := last10(p); l != "" {
				keys["l10:"+l] = true
			}
		}
		for _, e := range c.Emails {
			if k := ix.opts.NormalizeHandle(e); k != "" {
				keys[k] = true
			}
		}
		for k := range keys {
			if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO contact_handles(contact, key) VALUES(?, ?)", id, k); err != nil {
				return 0, fmt.Errorf("load contacts: %w", err)
			}
		}
	}
	ix.mem.mu.Lock()
	defer ix.mem.mu.Unlock()
	gen := ix.mem.gen + 1
	if err := setMeta(ctx, tx, "gen", gen); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, ix.failMem(fmt.Errorf("load contacts: %w", err))
	}
	ix.mem.gen = gen
	// Reload names (small).
	rows, err := ix.wdb.QueryContext(ctx, "SELECT ch.key, c.name FROM contact_handles ch JOIN contacts c ON c.id = ch.contact ORDER BY c.id DESC")
	if err != nil {
		return n, fmt.Errorf("load contacts: %w", err)
	}
	defer rows.Close()
	names := map[string]string{}
	for rows.Next() {
		var k, name string
		if err := rows.Scan(&k, &name); err != nil {
			return n, fmt.Errorf("load contacts: %w", err)
		}
		if name != "" {
			names[k] = name
		}
	}
	ix.mem.names = names
	ix.mem.labels = nil
	return n, rows.Err()
}
