package index

import (
	"context"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// TestReadStateFollowsTheSourceOnTheNextSync: a message read after it was
// indexed reads as read after the next sync, in history and in the unread
// counts (docs/tools.md, unread_only).
func TestReadStateFollowsTheSourceOnTheNextSync(t *testing.T) {
	const conv = "iMessage;-;ada@example.com"
	db := smallCorpus()
	db.addConv(model.Conversation{ID: conv, Identifier: "ada@example.com", Kind: model.KindDirect, Service: "iMessage", Participants: []string{"ada@example.com"}})
	db.add(model.Message{ID: "u1", ConversationIDs: []string{conv}, Sender: "ada@example.com",
		Time: testNow.Add(-time.Hour), Text: "are you free tonight?"})
	db.add(model.Message{ID: "u2", ConversationIDs: []string{conv}, FromMe: true,
		Time: testNow.Add(-30 * time.Minute), Text: "one sec"})
	ix := openTest(t, t.TempDir(), Options{})
	clock := testNow
	src := db.source(func() time.Time { return clock })
	mustSync(t, ix, src)
	ctx := context.Background()
	state := func() (read bool, unread map[string]map[string]int) {
		t.Helper()
		h, err := ix.History(ctx, HistoryQuery{Chat: conv, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range h.Messages {
			if m.ID == "u1" {
				read, found = m.IsRead, true
			}
		}
		if !found {
			t.Fatal("u1 not in history")
		}
		if unread, err = ix.Unread(ctx, testNow.Add(-24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		return read, unread
	}
	if read, unread := state(); read || unread[conv]["ada@example.com"] != 1 || len(unread[conv]) != 1 {
		t.Fatalf("before reading: is_read %v, unread %v", read, unread)
	}
	db.update("u1", testNow.Add(time.Minute), func(m *model.Message) { m.IsRead, m.TimeRead = true, testNow.Add(time.Minute) })
	clock = testNow.Add(2 * time.Minute)
	mustSync(t, ix, src)
	if read, unread := state(); !read || len(unread[conv]) != 0 {
		t.Errorf("after reading on the phone: is_read %v, unread %v", read, unread)
	}
}
