package index

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/vecscan"
	"github.com/tidings-mcp/tidings/internal/model"
)

// TestEmbedPreparedMatchesWriter: vectors quantised and coded off the
// writer (embedPrepared, two halves) are stored exactly as the writer
// would have computed them.
func TestEmbedPreparedMatchesWriter(t *testing.T) {
	db := newFakeDB()
	conv := "iMessage;-;zoe@example.com"
	db.addConv(model.Conversation{ID: conv, Identifier: "zoe@example.com", Kind: model.KindDirect, Participants: []string{"zoe@example.com"}})
	words := []string{"dinner", "tickets", "owe", "money", "flight", "lands", "late", "keys", "party", "rent"}
	for i := 0; i < 1500; i++ { // more than one batch half
		db.add(model.Message{ID: fmt.Sprintf("m%d", i), ConversationIDs: []string{conv}, Sender: "zoe@example.com",
			Time: testNow.Add(time.Duration(i-1500) * time.Minute),
			Text: fmt.Sprintf("%s %s %s", words[i%10], words[(i/10)%10], words[(i/100)%10])})
	}
	emb := &hashEmbedder{id: "h", dim: 64}
	ix := openTest(t, t.TempDir(), Options{Embedder: emb})
	ctx := context.Background()
	if _, err := ix.Sync(ctx, SyncOptions{Embed: true}, db.source(nil)); err != nil {
		t.Fatal(err)
	}
	rows, err := ix.rdb.QueryContext(ctx, "SELECT v.id, v.q, m.text FROM vectors v JOIN messages m ON m.id = v.id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	vs := ix.mem.vec
	n := 0
	for rows.Next() {
		var id int64
		var q []byte
		var text string
		if err := rows.Scan(&id, &q, &text); err != nil {
			t.Fatal(err)
		}
		v, _ := emb.Embed(ctx, []string{text})
		if want := vecscan.Quantize(v[0]); !bytes.Equal(q, want) {
			t.Fatalf("id %d: stored vector differs from vecscan.Quantize(embed(text))", id)
		}
		want := make([]uint64, vs.words)
		vs.codeStored(q, want)
		if got := vs.codes[int(id)*vs.words : int(id+1)*vs.words]; !slices.Equal(got, want) {
			t.Fatalf("id %d: code %x, want %x", id, got, want)
		}
		n++
	}
	if n != 1500 {
		t.Fatalf("%d vectors, want 1500", n)
	}
}
