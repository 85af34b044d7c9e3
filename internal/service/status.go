package service

import (
	"context"
	"time"
)

// Status is the service's part of get_status: counts, freshness and
// settings only, never message content or policy entries.
type Status struct {
	Policy   PolicyStatus   `json:"policy"`
	Search   SearchStatus   `json:"search"`
	Sources  []SourceSync   `json:"synced_sources"`
	Contacts ContactsStatus `json:"contacts"`
	// Dossiers counts the stored living dossiers (-1 when not kept).
	Dossiers int `json:"dossiers"`
}

// PolicyStatus describes the read policy.
type PolicyStatus struct {
	// Mode is blocklist or allowlist; empty when the policy cannot be
	// loaded (Error says why; nothing is readable meanwhile).
	Mode     string `json:"mode"`
	Hardened bool   `json:"hardened"`
	// HardenedAllowlist is the root-owned allowlist file of hardened mode
	// (a path, never its entries).
	HardenedAllowlist string `json:"hardened_allowlist,omitempty"`
	BlockedEntries    int    `json:"blocked_entries"`
	AllowedEntries    int    `json:"allowed_entries"`
	Error             string `json:"error,omitempty"`
}

// SearchStatus says which embedder semantic search uses and whether its
// vectors are ready.
type SearchStatus struct {
	Embedder      string `json:"embedder"`
	SemanticReady bool   `json:"semantic_ready"`
	Vectors       int    `json:"vectors"`
	Searchable    int64  `json:"searchable"`
	Note          string `json:"note,omitempty"`
}

// SourceSync is one synced source and how fresh it is.
type SourceSync struct {
	Key      string    `json:"key"`
	Kind     string    `json:"kind"`
	SyncedAt time.Time `json:"synced_at,omitzero"`
	// AgeSeconds is how long ago it was synced (by the service clock).
	AgeSeconds *float64 `json:"age_seconds,omitempty"`
}

// ContactsStatus describes the address book in use.
type ContactsStatus struct {
	Configured bool `json:"configured"`
	People     int  `json:"people"`
	Cards      int  `json:"cards"`
}

// Status reports the policy, search and source state.
func (s *Service) Status(ctx context.Context) (Status, error) {
	st := Status{Sources: []SourceSync{}, Dossiers: -1}
	if p, err := s.gate.Refresh(); err != nil {
		st.Policy.Error = "the read policy cannot be loaded, so nothing is readable until it is fixed: " + err.Error()
	} else {
		in := p.Info()
		st.Policy = PolicyStatus{Mode: string(in.Mode), Hardened: in.Hardened, HardenedAllowlist: in.Files.HardenedAllowlist,
			BlockedEntries: in.BlockedEntries, AllowedEntries: in.AllowedEntries}
		s.applyPolicy(ctx, p)
	}
	is, err := s.ix.Status(ctx)
	if err != nil {
		return st, err
	}
	v := is.Vectors
	st.Search = SearchStatus{Embedder: v.Embedder, SemanticReady: v.Ready, Vectors: v.Vectors, Searchable: v.Searchable}
	switch {
	case s.semanticOff != "":
		st.Search.Note = s.semanticOff
	case v.Embedder == "":
		st.Search.Note = "no embedder: search matches words only (full text)"
	case !v.Ready:
		st.Search.Note = "semantic search is not ready yet: searches use full text only until every message is embedded"
	}
	now := s.now()
	for _, src := range is.Sources {
		ss := SourceSync{Key: src.Key, Kind: src.Kind, SyncedAt: s.ts(src.SyncedAt)}
		if !src.SyncedAt.IsZero() {
			age := now.Sub(src.SyncedAt).Seconds()
			ss.AgeSeconds = &age
		}
		st.Sources = append(st.Sources, ss)
	}
	if b, err := s.contactBook(ctx); err == nil && b != nil {
		bs := b.Stats()
		st.Contacts = ContactsStatus{Configured: true, People: bs.People, Cards: bs.Cards}
	}
	if s.dossiers != nil {
		if n, err := s.dossiers.Count(ctx); err == nil {
			st.Dossiers = n
		}
	}
	return st, nil
}
