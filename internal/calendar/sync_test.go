package calendar

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// mirror dumps what a search store holds: every object as
// account|collection|href|etag|comp, sorted, and the FTS row count.
func mirror(t *testing.T, ix *SyncIndex) ([]string, int) {
	t.Helper()
	rows, err := ix.db.Query("SELECT account, collection, href, etag, comp FROM cal_objects")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a, c, h, e, k string
		if err := rows.Scan(&a, &c, &h, &e, &k); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join([]string{a, c, h, e, k}, "|"))
	}
	sort.Strings(out)
	var n int
	if err := ix.db.QueryRow("SELECT count(*) FROM cal_fts").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return out, n
}

func openIndex(t *testing.T) *SyncIndex {
	t.Helper()
	ix, err := OpenSyncIndex(context.Background(), filepath.Join(t.TempDir(), "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func titles(t *testing.T, st *Store, ix *SyncIndex, comp, q string) []string {
	t.Helper()
	ctx := context.Background()
	l, err := st.Collections(ctx, comp)
	if err != nil {
		t.Fatal(err)
	}
	objs, _, err := ix.search(ctx, l.Collections, comp, q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		for _, c := range o.Cal.Children {
			if c.Name == comp {
				out = append(out, propText(c, "SUMMARY"))
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestSyncFollowsServerEdits: the first sync mirrors the set (less the
// blocked person's invitation), a second one with nothing changed fetches
// nothing, and after an add, a modify and a delete on Radicale a re-sync
// fetches just those and ends where a fresh full sync ends — by
// sync-token, and again by the ETag listing when the server refuses a
// stale token.
func TestSyncFollowsServerEdits(t *testing.T) {
	r, st := radicaleSet(t)
	ctx := context.Background()
	ix := openIndex(t)
	rep, err := ix.Sync(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	objects := len(setObjects(t)) + 1 // the set and the plumber to-do
	if rep.Collections != 2 || rep.Written != objects-1 || rep.Blocked != 1 || len(rep.Problems) != 0 {
		t.Fatalf("first sync = %+v, want 2 collections, %d written, 1 blocked", rep, objects-1)
	}
	if got := titles(t, st, ix, Events, "standup"); len(got) != 1 || got[0] != "Standup" {
		t.Errorf("search standup = %q", got)
	}
	if got := titles(t, st, ix, Todos, "plumb"); len(got) != 1 {
		t.Errorf("search plumb (prefix) = %q, want the plumber to-do", got)
	}
	rep, err = ix.Sync(ctx, st)
	if err != nil || rep.Unchanged != 2 || rep.Fetched != 0 {
		t.Fatalf("unchanged re-sync = %+v %v, want 2 unchanged collections and nothing fetched", rep, err)
	}

	edit := func(t *testing.T, n int) {
		r.put(t, "alice", "/alice/work/dentist.ics", wrapCal("", "BEGIN:VEVENT\r\nUID:dentist@set\r\nDTSTAMP:20260101T000000Z\r\n"+
			"SUMMARY:Dentist "+string(rune('A'+n))+"\r\nDTSTART:20260318T080000Z\r\nDTEND:20260318T090000Z\r\nEND:VEVENT\r\n"))
		board := strings.Replace(setObjects(t)["monthly@set"], "SUMMARY:Board call", "SUMMARY:Board meeting "+string(rune('A'+n)), 1)
		r.put(t, "alice", "/alice/work/monthly.ics", board)
	}
	for i, c := range []struct {
		name  string
		stale bool
	}{{"sync-token", false}, {"etag listing after a refused token", true}} {
		t.Run(c.name, func(t *testing.T) {
			edit(t, i)
			if i == 0 {
				r.do(t, "alice", http.MethodDelete, "/alice/work/tokyo.ics", "", "", http.StatusOK, http.StatusNoContent)
			} else {
				r.do(t, "alice", http.MethodDelete, "/alice/work/dentist.ics", "", "", http.StatusOK, http.StatusNoContent)
			}
			if c.stale {
				if _, err := ix.db.Exec(`UPDATE cal_collections SET state = '{"ctag":"x","token":"http://radicale.org/ns/sync/0000"}'`); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := ix.Sync(ctx, st)
			if err != nil || len(rep.Problems) != 0 {
				t.Fatalf("re-sync = %+v %v", rep, err)
			}
			wantWritten := 2 // the new dentist and the modified board call
			if c.stale {
				// Only the modified board call; the dentist is gone (the
				// listing fetches the never-stored blocked invitation
				// again, and stores it no more than before).
				wantWritten = 1
			}
			if rep.Written != wantWritten || rep.Deleted != 1 {
				t.Errorf("re-sync = %+v, want %d written, 1 deleted", rep, wantWritten)
			}
			fresh := openIndex(t)
			if _, err := fresh.Sync(ctx, st); err != nil {
				t.Fatal(err)
			}
			got, gotFTS := mirror(t, ix)
			want, wantFTS := mirror(t, fresh)
			if strings.Join(got, "\n") != strings.Join(want, "\n") || gotFTS != wantFTS || gotFTS != len(got) {
				t.Errorf("re-synced store differs from a fresh sync:\n got %d objects, %d fts\n%s\nwant %d objects, %d fts\n%s",
					len(got), gotFTS, strings.Join(got, "\n"), len(want), wantFTS, strings.Join(want, "\n"))
			}
			if got := titles(t, st, ix, Events, "board call"); len(got) != 0 {
				t.Errorf("the old title is still found: %q", got)
			}
			if got := titles(t, st, ix, Events, "board meeting "+string(rune('a'+i))); len(got) != 1 {
				t.Errorf("the new title is not found: %q", got)
			}
			if got := titles(t, st, ix, Events, "tokyo"); len(got) != 0 {
				t.Errorf("a deleted event is still found: %q", got)
			}
		})
	}
}

// TestCancelledSyncLosesAndDuplicatesNothing: a sync cancelled after any
// number of written objects (inside the first collection, between the
// two, during a re-sync of edits) leaves a store that the next sync
// brings to exactly what a fresh sync holds.
func TestCancelledSyncLosesAndDuplicatesNothing(t *testing.T) {
	r, st := radicaleSet(t)
	total := len(setObjects(t)) // events written in the Work calendar, +1 to-do
	for _, c := range []struct {
		name   string
		after  int
		resync bool
	}{
		{"after the first object", 1, false},
		{"in the middle of a calendar", 3, false},
		{"after the last event", total - 1, false},
		{"in the second collection", total, false},
		{"during a re-sync of edits", 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix := openIndex(t)
			if c.resync {
				if _, err := ix.Sync(context.Background(), st); err != nil {
					t.Fatal(err)
				}
				r.put(t, "alice", "/alice/work/cancel-a.ics", wrapCal("", "BEGIN:VEVENT\r\nUID:cancel-a@set\r\nDTSTAMP:20260101T000000Z\r\n"+
					"SUMMARY:Added A\r\nDTSTART:20260319T080000Z\r\nEND:VEVENT\r\n"))
				r.put(t, "alice", "/alice/work/cancel-b.ics", wrapCal("", "BEGIN:VEVENT\r\nUID:cancel-b@set\r\nDTSTAMP:20260101T000000Z\r\n"+
					"SUMMARY:Added B\r\nDTSTART:20260319T090000Z\r\nEND:VEVENT\r\n"))
				r.do(t, "alice", http.MethodDelete, "/alice/work/run.ics", "", "", http.StatusOK, http.StatusNoContent)
				t.Cleanup(func() {
					r.do(t, "alice", http.MethodDelete, "/alice/work/cancel-a.ics", "", "", http.StatusOK, http.StatusNoContent)
					r.do(t, "alice", http.MethodDelete, "/alice/work/cancel-b.ics", "", "", http.StatusOK, http.StatusNoContent)
					r.put(t, "alice", "/alice/work/run.ics", setObjects(t)["run@set"])
				})
			}
			ctx, cancel := context.WithCancel(context.Background())
			var n atomic.Int64
			ix.afterWrite = func(int) {
				if n.Add(1) == int64(c.after) {
					cancel()
				}
			}
			if _, err := ix.Sync(ctx, st); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled sync = %v, want context.Canceled", err)
			}
			cancel()
			ix.afterWrite = nil
			if _, err := ix.Sync(context.Background(), st); err != nil {
				t.Fatal(err)
			}
			fresh := openIndex(t)
			if _, err := fresh.Sync(context.Background(), st); err != nil {
				t.Fatal(err)
			}
			got, gotFTS := mirror(t, ix)
			want, wantFTS := mirror(t, fresh)
			if strings.Join(got, "\n") != strings.Join(want, "\n") || gotFTS != wantFTS {
				t.Errorf("after cancel + re-run:\n got %d objects, %d fts\n%s\nwant %d objects, %d fts\n%s",
					len(got), gotFTS, strings.Join(got, "\n"), len(want), wantFTS, strings.Join(want, "\n"))
			}
		})
	}
}

// TestSearchStoreHoldsNoSecretOrBlockedInvitation: after a sync, neither
// the 2FA code of a description nor the blocked person's invitation is
// anywhere in the store's files, and the search still finds the event by
// its words, redacted.
func TestSearchStoreHoldsNoSecretOrBlockedInvitation(t *testing.T) {
	_, st := radicaleSet(t)
	dir := t.TempDir()
	ix, err := OpenSyncIndex(context.Background(), filepath.Join(dir, "calendar.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if got := titles(t, st, ix, Events, "verification"); len(got) != 1 {
		t.Errorf("search verification = %q, want the bank appointment", got)
	}
	for _, q := range []string{"482913", "coffee", "4471"} {
		if got := titles(t, st, ix, Events, q); len(got) != 0 {
			t.Errorf("search %q = %q, want nothing", q, got)
		}
	}
	ix.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "calendar.db*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"482913", "mallory", "Door code 4471"} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds %q", filepath.Base(f), secret)
			}
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "calendar.db"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("calendar.db mode = %v %v, want 0600", fi.Mode(), err)
	}
}

// TestICSSyncReadsOnlyWhatChanged: an ICS file is not read while its
// mtime and size stand, not rewritten when only its mtime moved, and
// rewritten object by object when it changed; an ICS URL is asked with
// its validators and a 304 changes nothing.
func TestICSSyncReadsOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	var all strings.Builder
	all.WriteString(zonesICS(t))
	for _, s := range set {
		ics := s.ics("")
		all.WriteString(strings.TrimSuffix(strings.TrimPrefix(ics, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tidings test//EN\r\n"), "END:VCALENDAR\r\n"))
	}
	text := wrapCal("", all.String())
	path := filepath.Join(t.TempDir(), "set.ics")
	must(t, os.WriteFile(path, []byte(text), 0o600))

	var gets, notModified, version atomic.Int64
	var served atomic.Value
	served.Store(text)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		etag := `"v` + string(rune('0'+version.Load())) + `"`
		if r.Header.Get("If-None-Match") == etag {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		_, _ = w.Write([]byte(served.Load().(string)))
	}))
	t.Cleanup(srv.Close)
	url, err := NewICSURL("feed", srv.URL+"/set.ics")
	if err != nil {
		t.Fatal(err)
	}
	st := &Store{Backends: []Backend{NewICSFile("file", path), url}, Loc: mustZone(t, userZone), Now: testclock.Anchor}
	ix := openIndex(t)
	rep, err := ix.Sync(ctx, st)
	if err != nil || rep.Written != 2*len(set) {
		t.Fatalf("first sync = %+v %v, want %d written", rep, err, 2*len(set))
	}
	rep, err = ix.Sync(ctx, st)
	if err != nil || rep.Unchanged != 2 || rep.Fetched != 0 || notModified.Load() != 1 {
		t.Fatalf("second sync = %+v %v (304s %d), want both unchanged, the URL answering 304", rep, err, notModified.Load())
	}
	later := time.Unix(0, 0).Add(1000 * time.Hour) // any mtime other than the file's
	must(t, os.Chtimes(path, later, later))
	rep, err = ix.Sync(ctx, st)
	if err != nil || rep.Unchanged != 2 || rep.Written != 0 {
		t.Fatalf("sync after touch = %+v %v, want the same hash: unchanged", rep, err)
	}
	edited := strings.Replace(text, "SUMMARY:Morning run", "SUMMARY:Evening run", 1)
	must(t, os.WriteFile(path, []byte(edited), 0o600))
	served.Store(edited)
	version.Add(1)
	rep, err = ix.Sync(ctx, st)
	if err != nil || rep.Written != 2 || rep.Deleted != 0 {
		t.Fatalf("sync after an edit = %+v %v, want the one changed object rewritten in each", rep, err)
	}
	if got := titles(t, st, ix, Events, "evening"); len(got) != 2 {
		t.Errorf("search evening = %q, want the edited event from the file and the URL", got)
	}
}

// TestQueryParametersSearchTheSyncedStore: calendars_list_events and
// reminders_list with query answer from the search store through a real
// MCP client: matching occurrences only, redacted and wrapped, the
// blocked invitation absent.
func TestQueryParametersSearchTheSyncedStore(t *testing.T) {
	_, st := radicaleSet(t)
	st.SearchPath = filepath.Join(t.TempDir(), "calendar.db")
	cs := clients(t, nil, CalendarService(st, Options{}), RemindersService(st))["stdio"]
	var ev eventsResult
	if msg, _ := call(t, cs, "calendars_list_events", map[string]any{"query": "standup", "date_from": "2026-03-01", "date_to": "2026-04-30"}, &ev); msg != "" {
		t.Fatal(msg)
	}
	if len(ev.Events) != 7 { // 8 Mondays, one EXDATE; the moved one is titled "Standup (moved)"
		t.Errorf("standup occurrences = %d, want 7: %+v", len(ev.Events), ev.Events)
	}
	for _, e := range ev.Events {
		if !strings.HasPrefix(e.Title, "Standup") {
			t.Errorf("query standup listed %q", e.Title)
		}
	}
	ev = eventsResult{}
	call(t, cs, "calendars_list_events", map[string]any{"query": "verification code", "date_from": "2026-03-01", "date_to": "2026-04-30"}, &ev)
	if len(ev.Events) != 1 || strings.Contains(ev.Events[0].Description, "482913") || !strings.HasPrefix(ev.Events[0].Description, sanitize.OpenTag) {
		t.Errorf("query verification code = %+v, want the bank appointment, redacted and wrapped", ev.Events)
	}
	ev = eventsResult{}
	call(t, cs, "calendars_list_events", map[string]any{"query": "coffee", "date_from": "2026-03-01", "date_to": "2026-04-30"}, &ev)
	if len(ev.Events) != 0 {
		t.Errorf("query coffee listed the blocked person's invitation: %+v", ev.Events)
	}
	var rem eventsResult
	call(t, cs, "reminders_list", map[string]any{"query": "plumber"}, &rem)
	if len(rem.Rem) != 1 || strings.Contains(rem.Rem[0].Notes, "4471") {
		t.Errorf("reminders query plumber = %+v", rem.Rem)
	}
	if msg, _ := call(t, cs, "reminders_list", map[string]any{"query": "?!"}, nil); !strings.Contains(msg, "at least one word") {
		t.Errorf("a query without words = %q, want one clear sentence", msg)
	}
}

// BenchmarkSyncRadicale measures the sync against a real Radicale
// holding benchEvents events (docs/benchmarks.md, "Calendar sync"): a
// first sync into an empty store, a re-sync with nothing changed, and a
// re-sync after 10 modifications, 5 additions and 5 deletions.
func BenchmarkSyncRadicale(b *testing.B) {
	const benchEvents = 500
	r := startRadicale(b)
	r.mkcalendar(b, "alice", "work", "Work", "VEVENT")
	for i := range benchEvents {
		r.put(b, "alice", benchHref(i), benchEvent(i, "Meeting"))
	}
	st := &Store{Backends: []Backend{r.backend(b, "alice", "alice")}, Loc: time.UTC, Now: testclock.Anchor}
	ctx := context.Background()
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			ix, err := OpenSyncIndex(ctx, filepath.Join(b.TempDir(), "calendar.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if rep, err := ix.Sync(ctx, st); err != nil || rep.Written != benchEvents {
				b.Fatalf("%+v %v", rep, err)
			}
			b.StopTimer()
			ix.Close()
			b.StartTimer()
		}
	})
	ix, err := OpenSyncIndex(ctx, filepath.Join(b.TempDir(), "calendar.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Sync(ctx, st); err != nil {
		b.Fatal(err)
	}
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			if rep, err := ix.Sync(ctx, st); err != nil || rep.Unchanged != 1 {
				b.Fatalf("%+v %v", rep, err)
			}
		}
	})
	round := 0
	b.Run("after-edits", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			round++
			for i := range 10 {
				r.put(b, "alice", benchHref(i), benchEvent(i, fmt.Sprintf("Meeting v%d", round)))
			}
			for i := range 5 {
				r.put(b, "alice", benchHref(benchEvents+round*5+i), benchEvent(benchEvents+round*5+i, "Added"))
				r.do(b, "alice", http.MethodDelete, benchHref(benchEvents-1-round*5-i), "", "", http.StatusOK, http.StatusNoContent)
			}
			b.StartTimer()
			if _, err := ix.Sync(ctx, st); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchHref(i int) string { return fmt.Sprintf("/alice/work/bench-%d.ics", i) }

// benchEvent is a weekly event with a description, i hours after the
// set's first day.
func benchEvent(i int, title string) string {
	start := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour) // literal date: inside the set's window, like the set
	return wrapCal("", fmt.Sprintf("BEGIN:VEVENT\r\nUID:bench-%d@set\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:%s %d\r\n"+
		"DTSTART:%s\r\nDURATION:PT1H\r\nRRULE:FREQ=WEEKLY;COUNT=10\r\nLOCATION:Room %d\r\n"+
		"DESCRIPTION:Agenda item %d: budget, hiring and the roadmap.\r\nEND:VEVENT\r\n", i, title, i, start.Format("20060102T150405Z"), i%40, i))
}

// TestFTSQueryKeepsTheUsersWordsLiteral: FTS5 syntax in a query (quotes,
// NEAR, column filters, operators, a lone star) is read as words, never
// as FTS5 syntax: no query fails and none matches more than its words.
func TestFTSQueryKeepsTheUsersWordsLiteral(t *testing.T) {
	ix := openIndex(t)
	st := &Store{Backends: []Backend{newMemory("a", Collection{Name: "Work", Href: "/a/w/", Components: []string{Events}})},
		Loc: time.UTC, Now: testclock.Anchor}
	m := st.Backends[0].(*memory)
	for i, title := range []string{"Dentist appointment", "Board NEAR call", "title: notes"} {
		cal := parseICS(t, wrapCal("", fmt.Sprintf("BEGIN:VEVENT\r\nUID:q%d\r\nDTSTAMP:20260101T000000Z\r\nSUMMARY:%s\r\nDTSTART:20260301T100000Z\r\nEND:VEVENT\r\n", i, title)))
		if _, err := m.Put(context.Background(), m.cols[0], fmt.Sprintf("q%d.ics", i), cal, Cond{IfNoneMatch: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ix.Sync(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    string
		want int
	}{
		{`"dentist`, 1},
		{`NEAR(board call)`, 1},
		{`title: notes`, 1},
		{`dentist OR board`, 0}, // OR is a word here, and no title holds it
		{`-dentist`, 1},
		{`* board`, 1},
		{`{title location} : dentist`, 0}, // three literal words; no title holds all three
	} {
		if got := titles(t, st, ix, Events, c.q); len(got) != c.want {
			t.Errorf("query %q = %q, want %d match(es)", c.q, got, c.want)
		}
	}
}
