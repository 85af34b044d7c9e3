package index

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// TestMessageJoinedToBlockedThread: a row chat.db joins to a blocked
// thread and an allowed one belongs to the blocked thread and is never
// served from the other — whether it is joined at its first import or on
// a later incremental sync.
func TestMessageJoinedToBlockedThread(t *testing.T) {
	const allowed, blocked = "iMessage;+;chat100", "iMessage;-;zoe@example.com"
	db := smallCorpus()
	db.add(model.Message{ID: "joined-first", ConversationIDs: []string{allowed, blocked}, FromMe: true,
		Time: testNow.Add(-2 * time.Minute), Text: "quokka itinerary"})
	db.add(model.Message{ID: "joined-later", ConversationIDs: []string{allowed}, FromMe: true,
		Time: testNow.Add(-time.Minute), Text: "wombat itinerary"})
	pol := &blockPolicy{blocked: map[string]bool{blocked: true}}
	ix := openTest(t, t.TempDir(), Options{Policy: pol})
	mustSync(t, ix, db.source(nil))
	ids := func() []string {
		h, err := ix.History(context.Background(), HistoryQuery{Chat: allowed, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range h.Messages {
			out = append(out, m.ID)
		}
		return out
	}
	if got := ids(); slices.Contains(got, "joined-first") || !slices.Contains(got, "joined-later") {
		t.Fatalf("allowed thread after the first sync = %v, want joined-later and not joined-first", got)
	}
	db.update("joined-later", testNow, func(m *model.Message) { m.ConversationIDs = []string{allowed, blocked} })
	mustSync(t, ix, db.source(nil))
	if got := ids(); slices.Contains(got, "joined-later") {
		t.Errorf("allowed thread after chat.db joined the row to the blocked thread = %v", got)
	}
	if r := mustSearch(t, ix, Query{Text: "itinerary", Mode: ModeFulltext}); len(r.Hits) != 0 {
		t.Errorf("search finds %v", hitIDs(r))
	}
}

// TestPolicyChangeDropsJoinedMessage: when a thread becomes blocked, a
// message it shares with an allowed thread goes with it (ApplyPolicy, no
// sync needed).
func TestPolicyChangeDropsJoinedMessage(t *testing.T) {
	const allowed, other = "iMessage;+;chat100", "iMessage;-;zoe@example.com"
	db := smallCorpus()
	db.add(model.Message{ID: "shared", ConversationIDs: []string{other, allowed}, FromMe: true,
		Time: testNow.Add(-time.Minute), Text: "quokka itinerary"})
	db.add(model.Message{ID: "shared2", ConversationIDs: []string{allowed, other}, FromMe: true,
		Time: testNow.Add(-time.Minute), Text: "wombat itinerary"})
	pol := &blockPolicy{blocked: map[string]bool{}}
	ix := openTest(t, t.TempDir(), Options{Policy: pol})
	mustSync(t, ix, db.source(nil))
	pol.blocked[other] = true
	if _, err := ix.ApplyPolicy(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := ix.History(context.Background(), HistoryQuery{Chat: allowed, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range h.Messages {
		if m.ID == "shared" || m.ID == "shared2" {
			t.Errorf("%s is still shown in %s after its other thread was blocked", m.ID, allowed)
		}
	}
	if r := mustSearch(t, ix, Query{Text: "itinerary", Mode: ModeSubstring}); len(r.Hits) != 0 {
		t.Errorf("search finds %v", hitIDs(r))
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}
