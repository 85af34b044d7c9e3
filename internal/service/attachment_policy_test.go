package service_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"image"
	imgpng "image/png"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage"
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
	for _, q := range []string{
		"INSERT INTO attachment (ROWID, guid, created_date, filename, uti, mime_type, transfer_state, is_outgoing, transfer_name, total_bytes) VALUES (10, 'fx-att-10', 0, NULL, 'public.png', 'image/png', 5, 0, 'pic.png', 10)",
		"INSERT INTO attachment (ROWID, guid, created_date, filename, uti, mime_type, transfer_state, is_outgoing, transfer_name, total_bytes) VALUES (11, 'fx-att-11', 0, NULL, 'public.png', 'image/png', 5, 0, 'pic.png', 10)",
		"INSERT INTO message (ROWID, guid, text, handle_id, service, date, is_from_me, cache_has_attachments) VALUES (500, 'fx-nopath', '\ufffc\ufffc', 1, 'iMessage', " + itoa(at) + ", 0, 1)",
		"INSERT INTO chat_message_join (chat_id, message_id, message_date) VALUES (1, 500, " + itoa(at) + ")",
		"INSERT INTO message_attachment_join (message_id, attachment_id) VALUES (500, 10), (500, 11)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
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

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
