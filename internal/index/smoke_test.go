package index

import (
	"context"
	"testing"
)

func TestSmoke(t *testing.T) {
	db := smallCorpus()
	emb := &hashEmbedder{id: "hash/v1", dim: 64}
	ix := openTest(t, t.TempDir(), Options{Embedder: emb})
	rep := mustSync(t, ix, db.source(nil))
	t.Logf("%+v", rep)
	for _, mode := range []Mode{ModeFulltext, ModeSubstring, ModeSemantic, ModeHybrid} {
		r := mustSearch(t, ix, Query{Text: "dinner", Mode: mode, Explain: true})
		t.Logf("%s: complete=%v notes=%v texts=%q", mode, r.ScanComplete, r.Notes, hitTexts(r))
		for _, h := range r.Hits {
			t.Logf("   %s %q %+v %+v", h.MessageID, h.Snippet, h.Explain.Fulltext, h.Explain.Semantic)
		}
	}
	l, err := ix.ListConversations(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range l.Conversations {
		t.Logf("%+v", c)
	}
	h, err := ix.History(context.Background(), HistoryQuery{Chat: "+1 (415) 555-0101", DirectOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range h.Messages {
		t.Logf("%s %s %q", m.Time, m.ID, m.Text)
	}
}
