package index

import (
	"context"
	"fmt"
	"os"
	"time"
)

// SourceState describes one synced source (no content).
type SourceState struct {
	Key      string    `json:"key"`
	Kind     string    `json:"kind"`
	SyncedAt time.Time `json:"synced_at,omitzero"`
}

// Status describes the index for get_status and doctor. It holds counts
// and times only, never message content.
type Status struct {
	Path          string        `json:"path"`
	SizeBytes     int64         `json:"size_bytes"`
	Conversations int64         `json:"conversations"`
	Messages      int64         `json:"messages"`
	Searchable    int64         `json:"searchable"`
	Contacts      int64         `json:"contacts"`
	Terms         int           `json:"terms"`
	Sources       []SourceState `json:"sources"`
	// LastSync is the newest completed sync of any source.
	LastSync time.Time `json:"last_sync,omitzero"`
	// NewestMessage is the time of the newest indexed message.
	NewestMessage time.Time    `json:"newest_message,omitzero"`
	Vectors       VectorStatus `json:"vectors"`
}

// Status reports the index's size, counts and freshness.
func (ix *Index) Status(ctx context.Context) (Status, error) {
	if err := ix.refresh(ctx); err != nil {
		return Status{}, err
	}
	st := Status{Path: ix.path, Sources: []SourceState{}}
	for _, p := range []string{ix.path, ix.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			st.SizeBytes += fi.Size()
		}
	}
	q := ix.rdb
	// Counts and the newest time come from the in-memory columns (a scan
	// of one byte per message), not a table scan.
	var newest int64
	ix.mem.mu.RLock()
	for id, f := range ix.mem.flags {
		if f&fLive != 0 {
			st.Messages++
			if t := ix.mem.times[id]; t > newest {
				newest = t
			}
		}
	}
	ix.mem.mu.RUnlock()
	if newest > 0 {
		st.NewestMessage = time.UnixMilli(newest).UTC()
	}
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM contacts").Scan(&st.Contacts); err != nil {
		return st, fmt.Errorf("index status: %w", err)
	}
	rows, err := q.QueryContext(ctx, "SELECT key, kind, coalesce(synced_at, 0) FROM sources ORDER BY id")
	if err != nil {
		return st, fmt.Errorf("index status: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var s SourceState
		var at int64
		if err := rows.Scan(&s.Key, &s.Kind, &at); err != nil {
			return st, fmt.Errorf("index status: %w", err)
		}
		if at > 0 {
			s.SyncedAt = time.UnixMilli(at).UTC()
			if s.SyncedAt.After(st.LastSync) {
				st.LastSync = s.SyncedAt
			}
		}
		st.Sources = append(st.Sources, s)
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("index status: %w", err)
	}
	ix.mem.mu.RLock()
	for _, ci := range ix.mem.convByID {
		if ix.visible(ci) {
			st.Conversations++
		}
	}
	st.Searchable = ix.mem.docs
	st.Terms = len(ix.mem.voc.df)
	ix.mem.mu.RUnlock()
	st.Vectors = ix.VectorStatus()
	return st, nil
}
