package index

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// TestReadTexts reads back texts that look like the record format (commas,
// digits, minus signs), multi-byte characters, empty text and a subject
// (search_extra), and compares them with a plain query.
func TestReadTexts(t *testing.T) {
	db := newFakeDB()
	conv := "iMessage;-;zoe@example.com"
	db.addConv(model.Conversation{ID: conv, Identifier: "zoe@example.com", Kind: model.KindDirect, Participants: []string{"zoe@example.com"}})
	texts := []string{"12,34,-1,5,", "héllo wörld 🎉🎉", "", "line one\nline two, three", "-1", ",,,", "plain"}
	for i, text := range texts {
		m := model.Message{ID: fmt.Sprintf("m%d", i), ConversationIDs: []string{conv}, Sender: "zoe@example.com",
			Time: testNow.Add(time.Duration(i) * time.Minute), Text: text}
		if i%2 == 1 {
			m.Subject = fmt.Sprintf("subject %d, with -1,", i)
		}
		if text == "" {
			m.Attachments = []model.Attachment{{ID: "a", Filename: "x.jpg", MimeType: "image/jpeg"}}
		}
		db.add(m)
	}
	ix := openTest(t, t.TempDir(), Options{})
	ctx := context.Background()
	if _, err := ix.Sync(ctx, SyncOptions{}, db.source(nil)); err != nil {
		t.Fatal(err)
	}
	want := map[int64]storedText{}
	var ids []int64
	rows, err := ix.rdb.QueryContext(ctx, "SELECT id, time, text, search_extra FROM messages")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r storedText
		var extra sql.NullString
		if err := rows.Scan(&r.id, &r.time, &r.text, &extra); err != nil {
			t.Fatal(err)
		}
		r.extra = extra.String
		want[r.id] = r
		ids = append(ids, r.id)
	}
	rows.Close()
	if len(ids) != len(texts) {
		t.Fatalf("%d stored messages, want %d", len(ids), len(texts))
	}
	got := map[int64]storedText{}
	if err := ix.readTexts(ctx, append(ids, 999999), func(r storedText) { got[r.id] = r }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("got %d records, want %d", len(got), len(want))
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("id %d: got %+v, want %+v", id, got[id], w)
		}
	}
	if err := ix.readTexts(ctx, nil, func(storedText) { t.Error("record for no ids") }); err != nil {
		t.Error(err)
	}
	slices.Sort(ids)
	inRange := map[int64]storedText{}
	if err := ix.readTextRange(ctx, ids[1], ids[len(ids)-2], func(r storedText) { inRange[r.id] = r }); err != nil {
		t.Fatal(err)
	}
	if len(inRange) != len(ids)-2 {
		t.Errorf("range: %d records, want %d", len(inRange), len(ids)-2)
	}
	for _, id := range ids[1 : len(ids)-1] {
		if inRange[id] != want[id] {
			t.Errorf("range, id %d: got %+v, want %+v", id, inRange[id], want[id])
		}
	}
}
