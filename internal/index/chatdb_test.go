package index

import (
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// TestRowSourceReadsEditsWhateverTheClockDid: an edit chat.db records is
// applied by the next sync whether it was stamped just before the previous
// sync began (another device's clock, a late write), after a clock that
// moved back, or after a clock that jumped ahead.
func TestRowSourceReadsEditsWhateverTheClockDid(t *testing.T) {
	const conv = "iMessage;-;zoe@example.com"
	tests := []struct {
		name string
		// firstSync is the clock at the first sync; editAt the edit's stamp;
		// secondSync the clock at the sync that must apply it.
		firstSync, editAt, secondSync time.Time
	}{
		{"edit stamped just before the previous sync", testNow, testNow.Add(-time.Second), testNow.Add(time.Minute)},
		{"edit stamped a day before the previous sync", testNow, testNow.Add(-23 * time.Hour), testNow.Add(time.Minute)},
		{"clock moved back three days", testNow, testNow.AddDate(0, 0, -3).Add(time.Second), testNow.AddDate(0, 0, -3).Add(time.Minute)},
		{"clock moved back a year", testNow, testNow.AddDate(-1, 0, 0).Add(time.Second), testNow.AddDate(-1, 0, 0).Add(time.Minute)},
		{"clock jumped a year ahead", testNow, testNow.Add(time.Second), testNow.AddDate(1, 0, 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := smallCorpus()
			db.add(model.Message{ID: "e1", ConversationIDs: []string{conv}, Sender: "zoe@example.com",
				Time: testNow.Add(-time.Hour), Text: "the marmalade jar is in the fridge"})
			ix := openTest(t, t.TempDir(), Options{})
			clock := tc.firstSync
			src := db.source(func() time.Time { return clock })
			mustSync(t, ix, src)
			db.update("e1", tc.editAt, func(m *model.Message) { m.Text = "the apricot jam is in the fridge"; m.Edited = true })
			clock = tc.secondSync
			mustSync(t, ix, src)
			if r := mustSearch(t, ix, Query{Text: "apricot", Mode: ModeFulltext}); len(r.Hits) != 1 {
				t.Errorf("edit not applied: search for the new text finds %v", hitIDs(r))
			}
			if r := mustSearch(t, ix, Query{Text: "marmalade", Mode: ModeFulltext}); len(r.Hits) != 0 {
				t.Errorf("old text still found: %v", hitIDs(r))
			}
			// And the sync after that (clock now consistent) still reads
			// changes stamped from the new clock.
			db.update("e1", tc.secondSync.Add(time.Second), func(m *model.Message) { m.Text = "the quince paste is in the fridge" })
			clock = tc.secondSync.Add(2 * time.Minute)
			mustSync(t, ix, src)
			if r := mustSearch(t, ix, Query{Text: "quince", Mode: ModeFulltext}); len(r.Hits) != 1 {
				t.Errorf("second edit not applied: %v", hitIDs(r))
			}
		})
	}
}
