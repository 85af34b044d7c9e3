package index

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/searcheval"
)

// indexSearcher runs the retrieval evaluation against the real index.
type indexSearcher struct{ ix *Index }

func (s indexSearcher) Search(ctx context.Context, q, mode string, k int) ([]string, error) {
	r, err := s.ix.Search(ctx, Query{Text: q, Mode: Mode(mode), Limit: k, LiteralDates: true})
	if err != nil {
		return nil, err
	}
	if r.Mode != Mode(mode) {
		return nil, fmt.Errorf("%s ran as %s: %v", mode, r.Mode, r.Notes)
	}
	return hitIDs(r), nil
}

// Regression floors (measured values are logged; docs/index.md records
// them).
const (
	evalFloorParaphraseGain = 0.10 // hybrid − fulltext nDCG@10 on paraphrases
	evalFloorHybridAll      = 0.38
)

// TestRetrievalQuality scores fulltext, semantic and hybrid search of the
// index with the built-in embedder on the labelled evaluation set
// (internal/searcheval): hybrid must beat full text on paraphrased
// questions by a clear margin without losing on lexical ones.
func TestRetrievalQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	ds, err := searcheval.Load(searcheval.DefaultDistractors)
	if err != nil {
		t.Fatal(err)
	}
	db := newFakeDB()
	convs := map[string]bool{}
	at := testNow.AddDate(-1, 0, 0)
	for _, m := range ds.Messages() {
		if !convs[m.ConversationID] {
			convs[m.ConversationID] = true
			db.addConv(model.Conversation{ID: m.ConversationID, Identifier: m.ConversationID, Kind: model.KindDirect, Participants: []string{"h-" + m.ConversationID}})
		}
		sender := "h-" + m.ConversationID
		if m.From == "me" {
			sender = ""
		}
		at = at.Add(7 * time.Minute)
		db.add(model.Message{ID: m.ID, ConversationIDs: []string{m.ConversationID}, Sender: sender, FromMe: sender == "", Time: at, Text: m.Text})
	}
	emb, err := embed.NewBuiltin()
	if err != nil {
		t.Fatal(err)
	}
	ix := openTest(t, t.TempDir(), Options{Embedder: emb})
	mustSync(t, ix, db.source(nil))
	res, err := searcheval.Evaluate(context.Background(), indexSearcher{ix}, ds, searcheval.Modes)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range searcheval.Modes {
		s := res.ByType[mode]
		t.Logf("%-9s nDCG@10 lexical %.3f paraphrase %.3f all %.3f | Recall@10 lexical %.3f paraphrase %.3f all %.3f",
			mode, s[searcheval.TypeLexical].NDCG, s[searcheval.TypeParaphrase].NDCG, s[""].NDCG,
			s[searcheval.TypeLexical].Recall, s[searcheval.TypeParaphrase].Recall, s[""].Recall)
	}
	ft, hy := res.ByType[searcheval.ModeFulltext], res.ByType[searcheval.ModeHybrid]
	if gain := hy[searcheval.TypeParaphrase].NDCG - ft[searcheval.TypeParaphrase].NDCG; gain < evalFloorParaphraseGain {
		t.Errorf("hybrid gains %.3f nDCG@10 over full text on paraphrases, floor %.2f", gain, evalFloorParaphraseGain)
	}
	if hy[searcheval.TypeLexical].NDCG < ft[searcheval.TypeLexical].NDCG-0.01 {
		t.Errorf("hybrid loses on lexical queries: %.3f < full text %.3f", hy[searcheval.TypeLexical].NDCG, ft[searcheval.TypeLexical].NDCG)
	}
	if hy[""].NDCG < evalFloorHybridAll {
		t.Errorf("hybrid nDCG@10 over all queries %.3f, floor %.2f", hy[""].NDCG, evalFloorHybridAll)
	}
}
