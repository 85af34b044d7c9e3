package service_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"image"
	imgpng "image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage"
	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/imessageindex"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/service"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// overrideResolver answers AttachmentResolver from a table (row id → what
// the source says), falling back to the real chat.db reader.
type overrideResolver struct {
	rows map[int64]model.Attachment
	next service.AttachmentResolver
}

func (o overrideResolver) Attachment(ctx context.Context, rowID int64) (model.Attachment, error) {
	if a, ok := o.rows[rowID]; ok {
		return a, nil
	}
	return o.next.Attachment(ctx, rowID)
}

// TestAttachmentPolicyOnItsOwnConversation opens the index WITHOUT a read
// policy, so the index itself hides nothing, and checks that the service
// still applies the policy to the attachment's own conversation, and that
// a file found through the source is the same attachment (by guid), not
// merely one with the same type and name.
func TestAttachmentPolicyOnItsOwnConversation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	chatDB, _ := servicetest.BuildFixture(t, dir)
	png, err := os.ReadFile(filepath.Join(dir, "Attachments", "a1-climbgnp.exe.png"))
	if err != nil {
		t.Fatal(err)
	}
	var ob bytes.Buffer // another picture, not the one the person asked for
	if err := imgpng.Encode(&ob, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	other := ob.Bytes()
	otherPath := filepath.Join(dir, "other.png")
	if err := os.WriteFile(otherPath, other, 0o600); err != nil {
		t.Fatal(err)
	}
	// Two attachments without a file name in chat.db (the index holds no
	// path for them): the source resolves them by row id.
	db, err := sql.Open("sqlite", chatDB)
	if err != nil {
		t.Fatal(err)
	}
	at := servicetest.Now.Add(-90 * time.Minute).Sub(time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)).Nanoseconds()
	w := chatdb.ForTest(t, db)
	for _, id := range []int64{10, 11} {
		w.Attachment(chatdb.Attachment{ROWID: id, GUID: fmt.Sprintf("fx-att-%d", id), UTI: "public.png", MIME: "image/png", TransferState: 5,
			TransferName: "pic.png", TotalBytes: 10})
	}
	w.Message(chatdb.Message{ROWID: 500, GUID: "fx-nopath", Text: "\ufffc\ufffc", Handle: 1, Service: "iMessage", Date: at,
		HasAttachments: true, Chats: []int64{1}})
	w.Attach(500, 10)
	w.Attach(500, 11)
	db.Close()

	home := filepath.Join(t.TempDir(), "home")
	servicetest.WritePolicy(t, home, policy.ModeBlocklist, []string{servicetest.BlockedPhone}, nil)
	store, err := policy.NewStore(home, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return servicetest.Now }
	ix, err := index.Open(ctx, filepath.Join(home, "index.db"), index.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	r, err := imessage.Open(ctx, chatDB, imessage.Options{Home: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := ix.Sync(ctx, index.SyncOptions{}, imessageindex.Source(r, "imessage", now)); err != nil {
		t.Fatal(err)
	}
	res := overrideResolver{next: r, rows: map[int64]model.Attachment{
		10: {ID: "fx-att-10", RowID: 10, MimeType: "image/png", Filename: "pic.png", Path: filepath.Join(dir, "Attachments", "a1-climbgnp.exe.png")},
		// Row 11 of the source is another attachment that happens to
		// share the type and name: it must not be taken for fx-att-11.
		11: {ID: "fx-att-elsewhere", RowID: 11, MimeType: "image/png", Filename: "pic.png", Path: otherPath},
	}}
	svc, err := service.New(service.Options{Index: ix, Gate: service.NewGate(store), Attachments: res, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		id       string
		want     []byte
		notFound bool
	}{
		{"allowed thread, file known to the index", "1", png, false},
		{"blocked thread, index without a policy", "4", nil, true},
		{"no path in the index, source has the same attachment", "10", png, false},
		{"no path in the index, source row is another attachment", "11", nil, true},
		{"unknown attachment", "999", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			img, err := svc.AttachmentImage(ctx, service.AttachmentParams{AttachmentID: tt.id})
			if tt.notFound {
				if !errors.Is(err, service.ErrNotFound) {
					t.Fatalf("got %d bytes, err %v; want not found", len(img.Data), err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(img.Data, tt.want) {
				t.Fatalf("got %d bytes, want the attachment's %d", len(img.Data), len(tt.want))
			}
		})
	}
}
