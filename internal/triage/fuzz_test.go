package triage

import (
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// FuzzClassify feeds arbitrary bodies (message text is untrusted) through
// the analyser and the classifier, direct and group: no panic, a valid
// bucket, bounded reasons, the same answer twice.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"Are we still on for Thursday?", "👍", "Your code is 123456", "nvm", "let me check", "??", "",
		"FreshBowl: 30% off Reply STOP", "https://x.example/a?b=c", "Sam can you book it?", "\ufffc", "right??",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	now := testclock.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text string, group bool) {
		th := Thread{ChatID: "+14155550134", Kind: model.KindDirect, Participants: []Participant{{Handle: "+14155550134", Name: "Sam Rivera"}}}
		if group {
			th.Kind = model.KindGroup
			th.Participants = append(th.Participants, Participant{Handle: "+14155550147", Name: "Jordan"})
		}
		th.Messages = []Message{
			{ID: "a", Time: now.Add(-2 * time.Hour), FromMe: true, Text: "hi"},
			{ID: "b", Time: now.Add(-time.Hour), Sender: "+14155550134", Text: text},
		}
		opts := Options{Now: now, Owner: Owner{Names: []string{"Alex"}}}
		d1 := Classify(&th, opts)
		d2 := Classify(&th, opts)
		if !slices.Contains(Buckets, d1.Bucket) || d1.Code == "" {
			t.Fatalf("invalid decision %+v", d1)
		}
		if d1.Bucket != d2.Bucket || d1.Score != d2.Score || !slices.Equal(d1.Reasons, d2.Reasons) {
			t.Fatalf("not deterministic: %+v vs %+v", d1, d2)
		}
		if d1.Score < 0 || d1.Score > 1 {
			t.Fatalf("score %v out of [0,1]", d1.Score)
		}
		for _, r := range d1.Reasons {
			if utf8.RuneCountInString(r) > 250 {
				t.Fatalf("reason of %d runes", utf8.RuneCountInString(r))
			}
		}
	})
}
