package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// filePolicy is a PolicyPinner like service.Gate over files: blocked
// conversation ids, a version that is its fingerprint, and a switch that
// makes it fail to load. Calls to AllowConversation while it is unpinned
// and broken block everything (fail closed), as the Gate does.
type filePolicy struct {
	mu      sync.Mutex
	blocked map[string]bool
	version int
	broken  bool
	pinned  *map[string]bool
	pins    int
}

func (p *filePolicy) set(broken bool, blocked ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.broken = broken
	p.version++
	p.blocked = map[string]bool{}
	for _, b := range blocked {
		p.blocked[b] = true
	}
}

func (p *filePolicy) AllowConversation(c model.Conversation) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pinned != nil {
		return !(*p.pinned)[c.ID]
	}
	return !p.broken && !p.blocked[c.ID]
}

func (p *filePolicy) PinPolicy() (string, func(), error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pins == 0 {
		if p.broken {
			return "", nil, errors.New("blocked_chats.txt line 1: cannot parse")
		}
		b := p.blocked
		p.pinned = &b
	}
	p.pins++
	fp := fmt.Sprint("v", p.version)
	return fp, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.pins--; p.pins == 0 {
			p.pinned = nil
		}
	}, nil
}

func (p *filePolicy) PolicyFingerprint() (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken {
		return "", errors.New("broken")
	}
	return fmt.Sprint("v", p.version), nil
}

func storedGUIDs(t *testing.T, ix *Index) []string {
	t.Helper()
	rows, err := ix.rdb.Query("SELECT guid FROM messages ORDER BY guid")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var g string
		rows.Scan(&g)
		out = append(out, g)
	}
	return out
}

// TestPolicyPinnedAndNeverPurgedWhenBroken: with a policy that cannot be
// loaded, Sync and ApplyPolicy fail with ErrPolicyUnavailable and remove
// nothing; a policy that breaks while a sync runs does not change that
// sync's decisions; an unblocked thread is imported again.
func TestPolicyPinnedAndNeverPurgedWhenBroken(t *testing.T) {
	ctx := context.Background()
	zoe := "iMessage;-;zoe@example.com"
	pol := &filePolicy{}
	pol.set(false)
	db := smallCorpus()
	ix := openTest(t, t.TempDir(), Options{Policy: pol, Embedder: &hashEmbedder{id: "h", dim: 32}})
	mustSync(t, ix, db.source(nil))
	all := storedGUIDs(t, ix)
	if len(all) != 10 {
		t.Fatalf("stored %v", all)
	}
	for _, tt := range []struct {
		name string
		op   func() error
	}{
		{"sync", func() error { _, err := ix.Sync(ctx, SyncOptions{}, db.source(nil)); return err }},
		{"fast sync", func() error { _, err := ix.Sync(ctx, SyncOptions{NewOnly: true}, db.source(nil)); return err }},
		{"apply policy", func() error { _, err := ix.ApplyPolicy(ctx); return err }},
	} {
		pol.set(true)
		if err := tt.op(); !errors.Is(err, ErrPolicyUnavailable) {
			t.Errorf("%s with a broken policy: %v", tt.name, err)
		}
		if got := storedGUIDs(t, ix); !slices.Equal(got, all) {
			t.Errorf("%s with a broken policy changed the index: %v", tt.name, got)
		}
	}
	// Broken while a sync runs: the sync keeps the policy it pinned.
	pol.set(false)
	mustSync(t, ix, db.source(nil))
	breaker := &hookSource{Source: db.source(nil), before: func() { pol.set(true) }}
	if _, err := ix.Sync(ctx, SyncOptions{}, breaker); err != nil {
		t.Fatal(err)
	}
	if got := storedGUIDs(t, ix); !slices.Equal(got, all) {
		t.Errorf("a policy broken mid-sync changed the index: %v", got)
	}
	// Block Zoe, then unblock: purged, then imported again.
	pol.set(false, zoe)
	mustSync(t, ix, db.source(nil))
	if got := storedGUIDs(t, ix); slices.Contains(got, "m5") || len(got) != 7 {
		t.Fatalf("blocked: %v", got)
	}
	pol.set(false)
	mustSync(t, ix, db.source(nil))
	if got := storedGUIDs(t, ix); !slices.Equal(got, all) {
		t.Fatalf("unblocked: %v, want %v", got, all)
	}
	if r := mustSearch(t, ix, Query{Text: "dentist", Mode: ModeFulltext}); !slices.Equal(hitIDs(r), []string{"m5"}) {
		t.Fatalf("unblocked thread not searchable: %v", hitIDs(r))
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// hookSource runs before() when its Sync starts.
type hookSource struct {
	Source
	before func()
}

func (h *hookSource) Sync(ctx context.Context, req SyncRequest, w Writer) error {
	h.before()
	return h.Source.Sync(ctx, req, w)
}

// TestWatchAppliesPolicyChanges: the watcher notices a policy change with
// no file change at all, purging a blocked thread and importing it again
// when it is unblocked; while the policy is broken it changes nothing.
func TestWatchAppliesPolicyChanges(t *testing.T) {
	zoe := "iMessage;-;zoe@example.com"
	pol := &filePolicy{}
	pol.set(false)
	db := smallCorpus()
	dir := t.TempDir()
	chat := filepath.Join(dir, "chat.db")
	os.WriteFile(chat, []byte("x"), 0o600)
	ix := openTest(t, filepath.Join(dir, "idx"), Options{Policy: pol})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- ix.Watch(ctx, WatchOptions{Sources: []Source{db.source(nil)}, Paths: []string{chat}, NoNotify: true,
			Poll: 10 * time.Millisecond, FullDelay: 20 * time.Millisecond})
	}()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	has := func(g string) bool { return slices.Contains(storedGUIDs(t, ix), g) }
	waitFor("first sync", func() bool { return has("m5") })
	pol.set(false, zoe)
	waitFor("purge", func() bool { return !has("m5") })
	pol.set(true)
	before := storedGUIDs(t, ix)
	time.Sleep(100 * time.Millisecond) // ten polls; any sync fails and changes nothing
	if got := storedGUIDs(t, ix); !slices.Equal(got, before) {
		t.Fatalf("broken policy changed the index: %v → %v", before, got)
	}
	pol.set(false)
	waitFor("re-import", func() bool { return has("m5") && has("m6") && has("m10") })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
