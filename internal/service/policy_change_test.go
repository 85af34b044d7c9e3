package service_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/imessageindex"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// policyEnv is the hand-built chat.db synced through the real reader into
// an index whose Policy is the service's Gate over the policy files in
// home/contacts.
type policyEnv struct {
	home string
	gate *service.Gate
	ix   *index.Index
	svc  *service.Service
	src  index.Source
}

func newPolicyEnv(t *testing.T, blocked []string) *policyEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	chatDB, _ := servicetest.BuildFixture(t, dir)
	e := &policyEnv{home: filepath.Join(t.TempDir(), "home")}
	servicetest.WritePolicy(t, e.home, policy.ModeBlocklist, blocked, nil)
	store, err := policy.NewStore(e.home, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.gate = service.NewGate(store)
	now := func() time.Time { return servicetest.Now }
	if e.ix, err = index.Open(ctx, filepath.Join(e.home, "index.db"), index.Options{Policy: e.gate, Now: now}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.ix.Close() })
	r, err := imessage.Open(ctx, chatDB, imessage.Options{Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	e.src = imessageindex.Source(r, "imessage", now)
	if e.svc, err = service.New(service.Options{Index: e.ix, Gate: e.gate, Now: now}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *policyEnv) sync(t *testing.T) (index.SyncReport, error) {
	t.Helper()
	return e.ix.Sync(context.Background(), index.SyncOptions{}, e.src)
}

// writeBlocked rewrites blocked_chats.txt (and, through the file's new
// mtime and size, makes the policy store reload it).
func (e *policyEnv) writeBlocked(t *testing.T, lines ...string) {
	t.Helper()
	servicetest.WritePolicy(t, e.home, policy.ModeBlocklist, lines, nil)
	bumpMtime(t, filepath.Join(e.home, policy.ContactsDir, policy.BlockedFile))
	if _, err := e.gate.Refresh(); err != nil {
		t.Fatal(err)
	}
}

// breakPolicy makes the policy unreadable: an entry that does not parse.
func (e *policyEnv) breakPolicy(t *testing.T) {
	t.Helper()
	p := filepath.Join(e.home, policy.ContactsDir, policy.BlockedFile)
	if err := os.WriteFile(p, []byte("mom\n"), 0o600); err != nil { // free text under 6 characters is refused
		t.Fatal(err)
	}
	bumpMtime(t, p)
	if _, err := e.gate.Refresh(); err == nil {
		t.Fatal("the broken policy still loads")
	}
}

func bumpMtime(t *testing.T, p string) {
	t.Helper()
	at := time.Now().Add(time.Duration(time.Now().UnixNano()%1000+1) * time.Second)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// snapshot is what the index holds: every message id and text, per
// conversation.
func (e *policyEnv) snapshot(t *testing.T) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	for _, chat := range []string{servicetest.HostilePhone, servicetest.BlockedPhone, servicetest.FrenchPhone, servicetest.GroupChatID, servicetest.JamieFoxPhone} {
		h, err := e.ix.History(ctx, index.HistoryQuery{Chat: chat, Limit: 500})
		if errors.Is(err, index.ErrNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range h.Messages {
			out[chat] = append(out[chat], m.ID+"|"+m.Text)
		}
	}
	return out
}

// stored lists the rows of the index database itself (message guids and
// texts, conversation guids), read with a separate connection, whatever
// the policy shows.
func (e *policyEnv) stored(t *testing.T) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(e.home, "index.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT 'm:' || guid || '|' || text FROM messages UNION ALL SELECT 'c:' || guid FROM conversations ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func (e *policyEnv) searchIDs(t *testing.T, q string) []string {
	t.Helper()
	r, err := e.svc.Search(context.Background(), service.SearchParams{Query: q, Mode: "fulltext", Limit: 50})
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var ids []string
	for _, h := range r.Hits {
		ids = append(ids, h.MessageID)
	}
	slices.Sort(ids)
	return ids
}

// brokenDuringSync breaks the policy after the sync has started and
// before the source delivers anything.
type brokenDuringSync struct {
	index.Source
	e *policyEnv
	t *testing.T
}

func (b brokenDuringSync) Sync(ctx context.Context, req index.SyncRequest, w index.Writer) error {
	b.e.breakPolicy(b.t)
	return b.Source.Sync(ctx, req, w)
}

// TestBrokenPolicyNeverPurges: while the read policy cannot be loaded, the
// service refuses every read and says why, and neither a sync, nor a purge
// request, nor a policy that breaks in the middle of a sync removes
// anything from the index. Once the policy loads again, everything is as
// before.
func TestBrokenPolicyNeverPurges(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		breakIt func(t *testing.T, e *policyEnv) error
	}{
		{"sync while broken", func(t *testing.T, e *policyEnv) error {
			e.breakPolicy(t)
			_, err := e.sync(t)
			return err
		}},
		{"apply policy while broken", func(t *testing.T, e *policyEnv) error {
			e.breakPolicy(t)
			_, err := e.ix.ApplyPolicy(ctx)
			return err
		}},
		{"broken in the middle of a sync", func(t *testing.T, e *policyEnv) error {
			_, err := e.ix.Sync(ctx, index.SyncOptions{}, brokenDuringSync{e.src, e, t})
			if err != nil {
				return err
			}
			_, err = e.sync(t) // the next one finds it broken
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newPolicyEnv(t, []string{servicetest.BlockedPhone})
			if _, err := e.sync(t); err != nil {
				t.Fatal(err)
			}
			before, stored := e.snapshot(t), e.stored(t)
			if len(before) < 4 || len(before[servicetest.BlockedPhone]) != 0 || len(stored) < 20 {
				t.Fatalf("fixture: %v", before)
			}
			if err := tt.breakIt(t, e); !errors.Is(err, index.ErrPolicyUnavailable) {
				t.Errorf("err = %v, want one wrapping index.ErrPolicyUnavailable", err)
			}
			// Reads show nothing now (fail closed), but nothing was
			// removed from the database.
			if during := e.stored(t); !slices.Equal(during, stored) {
				t.Errorf("the database changed while the policy was broken: %d rows before, %d during", len(stored), len(during))
			}
			// The service refuses, saying why.
			_, err := e.svc.Search(ctx, service.SearchParams{Query: "gym"})
			var se *service.Error
			if !errors.As(err, &se) || !errors.Is(err, service.ErrPolicy) || !strings.Contains(se.Msg, "read policy could not be loaded") {
				t.Fatalf("search with a broken policy: %v", err)
			}
			// Fixed: the index is exactly as it was.
			e.writeBlocked(t, servicetest.BlockedPhone)
			if _, err := e.sync(t); err != nil {
				t.Fatal(err)
			}
			if after := e.snapshot(t); !equalSnap(after, before) {
				t.Fatalf("index changed:\nbefore %v\nafter  %v", before, after)
			}
			if got := e.searchIDs(t, "gym"); len(got) == 0 {
				t.Fatal("search finds nothing after the policy was fixed")
			}
			if err := e.ix.Verify(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func equalSnap(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestUnblockReimports: blocking a thread purges it; unblocking it brings
// it back at the next sync, with the same message ids and texts, although
// the source's watermark had long passed its messages.
func TestUnblockReimports(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		// first: blocked from the start (never imported) or imported,
		// then blocked (purged).
		neverImported bool
		// how the unblock reaches the index: a sync, or the service's
		// policy watcher (ApplyPolicy) followed by a sync.
		viaService bool
	}{
		{"purged, then unblocked", false, false},
		{"purged, then unblocked through the service", false, true},
		{"skipped from the start, then unblocked", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var e *policyEnv
			if tt.neverImported {
				e = newPolicyEnv(t, []string{servicetest.BlockedPhone, servicetest.FrenchPhone})
			} else {
				e = newPolicyEnv(t, []string{servicetest.BlockedPhone})
			}
			if _, err := e.sync(t); err != nil {
				t.Fatal(err)
			}
			full := newPolicyEnv(t, []string{servicetest.BlockedPhone}) // the reference: Camille allowed throughout
			if _, err := full.sync(t); err != nil {
				t.Fatal(err)
			}
			wantAll := full.snapshot(t)
			want := wantAll[servicetest.FrenchPhone]
			wantSearch := full.searchIDs(t, "samedi")
			if len(want) != 2 || len(wantSearch) != 2 {
				t.Fatalf("reference: %v %v", want, wantSearch)
			}
			if !tt.neverImported {
				if got := e.snapshot(t)[servicetest.FrenchPhone]; !slices.Equal(got, want) {
					t.Fatalf("imported: %v", got)
				}
				// Block Camille: purged.
				e.writeBlocked(t, servicetest.BlockedPhone, servicetest.FrenchPhone)
				if _, err := e.sync(t); err != nil {
					t.Fatal(err)
				}
			}
			// Her chat and the group she is in are gone, from the
			// database too.
			if got := e.snapshot(t); got[servicetest.FrenchPhone] != nil || got[servicetest.GroupChatID] != nil {
				t.Fatalf("blocked threads still there: %v", got)
			}
			for _, row := range e.stored(t) {
				if strings.Contains(row, "fx-camille") || strings.Contains(row, "fx-group-") {
					t.Fatalf("blocked thread's message still stored: %s", row)
				}
			}
			if got := e.searchIDs(t, "samedi"); got != nil {
				t.Fatalf("blocked thread found: %v", got)
			}
			// Unblock: the next sync imports it again.
			e.writeBlocked(t, servicetest.BlockedPhone)
			if tt.viaService {
				if _, err := e.svc.Search(ctx, service.SearchParams{Query: "samedi"}); err != nil { // applies the new policy
					t.Fatal(err)
				}
			}
			if _, err := e.sync(t); err != nil {
				t.Fatal(err)
			}
			if got := e.snapshot(t); !equalSnap(got, wantAll) {
				t.Fatalf("after unblocking:\n%v\nwant (never blocked)\n%v", got, wantAll)
			}
			if got := e.searchIDs(t, "samedi"); !slices.Equal(got, wantSearch) {
				t.Fatalf("search after unblocking: %v, want %v", got, wantSearch)
			}
			// Still blocked: the other thread.
			if got := e.snapshot(t)[servicetest.BlockedPhone]; got != nil {
				t.Fatalf("the still-blocked thread came back: %v", got)
			}
			if err := e.ix.Verify(ctx); err != nil {
				t.Fatal(err)
			}
			// A sync with the policy unchanged reads nothing again.
			rep, err := e.sync(t)
			if err != nil {
				t.Fatal(err)
			}
			if s := rep.Sources[0]; s.Added+s.Unchanged+s.Updated != 0 {
				t.Fatalf("an unchanged policy re-read the source: %+v", s)
			}
		})
	}
}
