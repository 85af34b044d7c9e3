package index

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// historyCorpus is two threads with one person (SMS and iMessage), a group
// whose message is also linked to the iMessage thread (message_chats), and
// time ties across threads, to pin History's order and paging.
func historyCorpus() (*fakeDB, []string) {
	db := newFakeDB()
	im, sms, grp := "iMessage;-;+14155550123", "SMS;-;+14155550123", "iMessage;+;chat7"
	db.addConv(model.Conversation{ID: im, Identifier: "+14155550123", Kind: model.KindDirect, Service: "iMessage", Participants: []string{"+14155550123"}})
	db.addConv(model.Conversation{ID: sms, Identifier: "+14155550123", Kind: model.KindDirect, Service: "SMS", Participants: []string{"+14155550123"}})
	db.addConv(model.Conversation{ID: grp, Identifier: "chat7", Kind: model.KindGroup, Service: "iMessage", Participants: []string{"+14155550123", "+14155550199"}})
	var want []string // the person's history, oldest first
	for i := range 30 {
		at := testNow.Add(-time.Duration(30-i/2) * time.Hour) // pairs share a time
		conv := []string{im, sms}[i%2]
		if i%7 == 3 {
			conv = grp
		}
		id := fmt.Sprintf("h%02d", i)
		m := model.Message{ID: id, ConversationIDs: []string{conv}, Sender: "+14155550123", Time: at, Text: "message " + id, TextSource: "text"}
		if i%10 == 5 {
			m.ConversationIDs = []string{grp, im} // a group message also in the direct thread
		}
		db.add(m)
		if conv != grp || len(m.ConversationIDs) > 1 {
			want = append(want, id)
		}
	}
	return db, want
}

// TestHistoryPagesInTimeThenIDOrder: a person's history (every thread
// with them, plus messages linked to those threads from another chat) comes
// back oldest first in pages that continue exactly, ties in time in row
// order, and Before and Since bound it.
func TestHistoryPagesInTimeThenIDOrder(t *testing.T) {
	db, want := historyCorpus()
	ix := openTest(t, t.TempDir(), Options{})
	mustSync(t, ix, db.source(nil))
	ctx := context.Background()
	ids := func(h History) []string {
		var out []string
		for _, m := range h.Messages {
			out = append(out, m.ID)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		q      HistoryQuery
		expect []string
	}{
		{"all", HistoryQuery{Chat: "+14155550123", Limit: 500}, want},
		{"since", HistoryQuery{Chat: "+14155550123", Since: testNow.Add(-20 * time.Hour), Limit: 500}, want[len(want)-countFrom(db, want, testNow.Add(-20*time.Hour)):]},
		{"before", HistoryQuery{Chat: "+14155550123", Before: testNow.Add(-20 * time.Hour), Limit: 500}, want[:len(want)-countFrom(db, want, testNow.Add(-20*time.Hour))]},
		{"one thread", HistoryQuery{Chat: "SMS;-;+14155550123", Limit: 500}, onlyConv(db, want, "SMS;-;+14155550123")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ix.History(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(h); !slices.Equal(got, tc.expect) || h.More {
				t.Fatalf("History = %v (more %v), want %v", got, h.More, tc.expect)
			}
			// The same in pages of 4, newest page first.
			var pages [][]string
			q := tc.q
			q.Limit = 4
			for {
				h, err := ix.History(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				pages = append([][]string{ids(h)}, pages...)
				if !h.More {
					break
				}
				q.Cursor = h.NextCursor
			}
			if got := slices.Concat(pages...); !slices.Equal(got, tc.expect) {
				t.Fatalf("paged History = %v, want %v", got, tc.expect)
			}
		})
	}
}

// countFrom counts the messages of ids at or after t.
func countFrom(db *fakeDB, ids []string, t time.Time) int {
	n := 0
	for _, m := range db.rows {
		if slices.Contains(ids, m.ID) && !m.Time.Before(t) {
			n++
		}
	}
	return n
}

// onlyConv keeps the ids whose message is in conv.
func onlyConv(db *fakeDB, ids []string, conv string) []string {
	var out []string
	for _, id := range ids {
		for _, m := range db.rows {
			if m.ID == id && slices.Contains(m.ConversationIDs, conv) {
				out = append(out, id)
			}
		}
	}
	return out
}

// TestHistoryReadsOnlyThePage: a page of history reads the page from the
// (conversation, time) index, not every message of the conversation (which
// made a 50-message page cost ~15 ms of CPU at 200k messages and a 7-day
// review, one page per thread, ~230 ms; docs/benchmarks.md). The promise is
// pinned on SQLite's query plan: the messages are read as a bounded range
// of messages_conv_time in the page's order, with no sort of the whole
// thread and no temporary union of it.
func TestHistoryReadsOnlyThePage(t *testing.T) {
	db, _ := historyCorpus()
	dir := t.TempDir()
	ix := openTest(t, dir, Options{})
	mustSync(t, ix, db.source(nil))
	// Opened again, as a server opens a built index: EXPLAIN does not read
	// the database, so a connection opened before the first sync built the
	// secondary indexes would plan with the schema it cached then.
	ix.Close()
	ix = openTest(t, dir, Options{})
	rows, err := ix.rdb.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+historySQL, historyPlanArgs()...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type step struct {
		id, parent int
		detail     string
	}
	var plan []step
	for rows.Next() {
		var s step
		var unused int
		if err := rows.Scan(&s.id, &s.parent, &unused, &s.detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, s)
	}
	var text []string
	ranged := false
	for _, s := range plan {
		text = append(text, fmt.Sprintf("%d<-%d %s", s.id, s.parent, s.detail))
		if strings.Contains(s.detail, "SEARCH messages USING COVERING INDEX messages_conv_time (conv=? AND time>? AND time<?)") {
			ranged = true
		}
		if strings.Contains(s.detail, "UNION USING TEMP B-TREE") || (s.parent == 0 && strings.Contains(s.detail, "TEMP B-TREE FOR ORDER BY")) {
			t.Errorf("the page query sorts or unions the whole thread: %q", s.detail)
		}
	}
	if !ranged {
		t.Errorf("the page query does not read a bounded (conv, time) range of messages")
	}
	if t.Failed() {
		t.Logf("plan:\n%s", strings.Join(text, "\n"))
	}
}

// historyPlanArgs are historySQL's arguments for one conversation and no
// bounds.
func historyPlanArgs() []any {
	return []any{int64(1), int64(1 << 62), int64(1 << 62), int64(-1 << 62), 51}
}
