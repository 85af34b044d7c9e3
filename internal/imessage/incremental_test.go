package imessage

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/model"
)

func TestIncrementalSync(t *testing.T) {
	for _, schema := range schemaFiles {
		t.Run(schema, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, schema)
			s := populate(f)
			r := f.open(t)
			watermark, err := r.MaxRowID(ctx)
			if err != nil || watermark == 0 {
				t.Fatalf("MaxRowID = %d, %v", watermark, err)
			}
			var delWatermark int64
			if r.Capabilities().DeletedLog {
				if err := r.Deleted(ctx, 0, func(d Deletion) error { delWatermark = d.RowID; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			syncTime := at(100)

			// New rows after the watermark.
			id1 := f.insert("message", "guid", "NEW-1", "text", "new one", "handle_id", s.alice, "date", f.date(at(101)))
			f.insert("chat_message_join", "chat_id", s.direct, "message_id", id1)
			id2 := f.insert("message", "guid", "NEW-2", "text", "new two", "is_from_me", 1, "date", f.date(at(102)))
			f.insert("chat_message_join", "chat_id", s.group, "message_id", id2)
			var got []string
			if err := r.Messages(ctx, watermark, func(m model.Message) error { got = append(got, m.ID); return nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, []string{"NEW-1", "NEW-2"}) {
				t.Errorf("after watermark: %v", got)
			}
			if n, _ := r.MaxRowID(ctx); n != id2 {
				t.Errorf("MaxRowID = %d, want %d", n, id2)
			}

			// Changes to old rows since the sync time.
			caps := r.Capabilities()
			var wantChanged []string
			mustExec(t, f, "UPDATE message SET is_read = 1, date_read = ? WHERE guid = 'M-GROUP-IN'", f.date(at(103)))
			wantChanged = append(wantChanged, "M-GROUP-IN")
			if caps.Edits {
				mustExec(t, f, "UPDATE message SET date_edited = ? WHERE guid = 'M-SENT'", f.date(at(104)))
				wantChanged = append(wantChanged, "M-SENT")
			}
			if caps.Retractions {
				mustExec(t, f, "UPDATE message SET date_retracted = ?, text = NULL WHERE guid = 'M-GROUP-ME'", f.date(at(105)))
				wantChanged = append(wantChanged, "M-GROUP-ME")
			}
			if caps.RecentlyDeleted {
				// Recently deleted long ago: not a change since syncTime.
				// Move M-FAILED there now: a change.
				// Messages' order: into the recoverable join first, then out of
				// the chat (the trigger deletes a message that is in neither).
				f.insert("chat_recoverable_message_join", "chat_id", s.direct, "message_id", rowIDOf(t, f, "M-FAILED"), "delete_date", f.date(at(106)))
				mustExec(t, f, "DELETE FROM chat_message_join WHERE message_id = (SELECT ROWID FROM message WHERE guid = 'M-FAILED')")
				wantChanged = append(wantChanged, "M-FAILED")
			}
			var changed []string
			err = r.Changed(ctx, syncTime, func(m model.Message) error {
				changed = append(changed, m.ID)
				switch m.ID {
				case "M-SENT":
					if !m.Edited || !m.TimeEdited.Equal(at(104)) {
						t.Errorf("edited row: %+v", m)
					}
				case "M-GROUP-ME":
					if !m.Unsent || !m.TimeUnsent.Equal(at(105)) {
						t.Errorf("unsent row: %+v", m)
					}
				case "M-FAILED":
					if !m.RecentlyDeleted || !slices.Equal(m.ConversationIDs, []string{gDirect}) {
						t.Errorf("recently deleted row: %+v", m)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(changed)
			slices.Sort(wantChanged)
			// NEW-1/NEW-2 carry no change dates; rows older than syncTime
			// (M-PLAIN read at at(2), M-UNSENT retracted at at(18)) must not
			// come back.
			if !slices.Equal(changed, wantChanged) {
				t.Errorf("Changed(since) = %v, want %v", changed, wantChanged)
			}

			// A receipt for a message sent before the lookback is not a change.
			oldID := f.insert("message", "guid", "M-ANCIENT", "text", "old", "handle_id", s.alice, "date", f.date(syncTime.Add(-ChangedLookback-time.Hour)),
				"is_read", 1, "date_read", f.date(at(107)))
			f.insert("chat_message_join", "chat_id", s.direct, "message_id", oldID)
			var seen []string
			r.Changed(ctx, syncTime, func(m model.Message) error { seen = append(seen, m.ID); return nil })
			if slices.Contains(seen, "M-ANCIENT") {
				t.Errorf("a receipt for a message older than ChangedLookback was reported")
			}
			rd, err := r.RecentlyDeleted(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if caps.RecentlyDeleted != (len(rd) == 2) || (caps.RecentlyDeleted && !slices.Contains(rd, rowIDOf(t, f, "M-FAILED"))) {
				t.Errorf("RecentlyDeleted = %v", rd)
			}

			// Deletions.
			if !caps.DeletedLog {
				if err := r.Deleted(ctx, 0, func(Deletion) error { return nil }); !errors.Is(err, errors.ErrUnsupported) {
					t.Errorf("Deleted without deleted_messages: err = %v", err)
				}
				return
			}
			if schema == "macos15" {
				// Apple's own trigger writes the tombstone.
				mustExec(t, f, "DELETE FROM message WHERE guid = 'M-SMS'")
			} else {
				// The dumps of older schemas carry no triggers.
				mustExec(t, f, "DELETE FROM message WHERE guid = 'M-SMS'")
				f.insert("deleted_messages", "guid", "M-SMS")
			}
			var dels []Deletion
			if err := r.Deleted(ctx, delWatermark, func(d Deletion) error { dels = append(dels, d); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(dels) != 1 || dels[0].GUID != "M-SMS" || dels[0].RowID <= delWatermark {
				t.Errorf("Deleted = %+v", dels)
			}
		})
	}
}

func mustExec(t *testing.T, f *fixture, q string, args ...any) {
	t.Helper()
	if _, err := f.db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func rowIDOf(t *testing.T, f *fixture, guid string) int64 {
	t.Helper()
	var id int64
	if err := f.db.QueryRow("SELECT ROWID FROM message WHERE guid = ?", guid).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestPagingReadsEveryRowOnceWithAllItsChats: with more rows than a page and
// a message in two chats on every page boundary, on an indexed (paged) and
// an unindexed (single pass) schema and from several watermarks, every
// message after the watermark comes once, in rowid order, with all its
// chats, attachments and text.
func TestPagingReadsEveryRowOnceWithAllItsChats(t *testing.T) {
	for _, schema := range []string{"iOS11.2", "macos15"} {
		t.Run(schema, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, schema)
			s := populate(f)
			start, _ := (&fixture{}).maxRow(f)
			tx, err := f.db.Begin()
			if err != nil {
				t.Fatal(err)
			}
			n := 2*pageSize + 123
			w := f.writer().On(tx)
			for i := 0; i < n; i++ {
				id := w.Message(chatdb.Message{GUID: fmt.Sprintf("BULK-%05d", i), Text: fmt.Sprintf("bulk %d", i), Handle: s.alice,
					Date: f.date(at(200 + i))})
				w.Join(s.direct, id, 0)
				if i%pageSize == pageSize-1 || i%97 == 0 {
					w.Join(s.group, id, 0)
				}
				if i%500 == 0 {
					w.Attachment(chatdb.Attachment{GUID: fmt.Sprintf("at-%d", i), Filename: "~/Library/Messages/Attachments/x.png",
						OriginalGUID: fmt.Sprintf("at-%d", i), Messages: []int64{id}})
				}
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			r := f.open(t)
			for _, after := range []int64{0, start, start + pageSize - 1, start + int64(n) - 1} {
				count := 0
				prev := after
				err := r.Messages(ctx, after, func(m model.Message) error {
					if m.RowID <= prev {
						t.Fatalf("rowid %d after %d", m.RowID, prev)
					}
					prev = m.RowID
					count++
					var i int
					if _, err := fmt.Sscanf(m.ID, "BULK-%05d", &i); err == nil {
						wantChats := 1
						if i%pageSize == pageSize-1 || i%97 == 0 {
							wantChats = 2
						}
						if len(m.ConversationIDs) != wantChats {
							t.Errorf("%s: %d chats, want %d", m.ID, len(m.ConversationIDs), wantChats)
						}
						wantAtt := 0
						if i%500 == 0 {
							wantAtt = 1
						}
						if len(m.Attachments) != wantAtt {
							t.Errorf("%s: %d attachments, want %d", m.ID, len(m.Attachments), wantAtt)
						}
						if m.Text != fmt.Sprintf("bulk %d", i) {
							t.Errorf("%s: text %q", m.ID, m.Text)
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				total, _ := (&fixture{}).maxRow(f)
				var want int
				f.db.QueryRow("SELECT count(*) FROM message WHERE ROWID > ?", after).Scan(&want)
				if count != want {
					t.Errorf("after %d: %d messages, want %d (max %d)", after, count, want, total)
				}
			}
			// An error from the callback stops the pass and comes back unchanged.
			stop := errors.New("stop")
			if err := r.Messages(ctx, 0, func(model.Message) error { return stop }); err != stop {
				t.Errorf("callback error = %v, want it unchanged", err)
			}
		})
	}
}

func (*fixture) maxRow(f *fixture) (int64, error) {
	var n int64
	err := f.db.QueryRow("SELECT COALESCE(MAX(ROWID),0) FROM message").Scan(&n)
	return n, err
}

// TestNeverWrites reads a rollback-journal database and checks that not a
// byte changed and no file appeared next to it.
func TestNeverWrites(t *testing.T) {
	f := newFixture(t, "macos15")
	populate(f)
	f.db.Close()
	dir := filepath.Dir(f.path)
	before := dirDigest(t, dir)
	r, err := Open(context.Background(), f.path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Capabilities().JournalMode != "delete" {
		t.Errorf("journal mode %q, want delete", r.Capabilities().JournalMode)
	}
	readAll(t, r)
	if _, err := r.Conversations(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.Changed(context.Background(), time.Time{}, func(model.Message) error { return nil }); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if after := dirDigest(t, dir); after != before {
		t.Errorf("folder changed by reading:\nbefore %s\nafter  %s", before, after)
	}
}

func dirDigest(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s:%x;", e.Name(), sha256.Sum256(b))
	}
	return fmt.Sprintf("%d files %x", len(ents), h.Sum(nil))
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := Open(ctx, filepath.Join(dir, "missing.db"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte("this is not a database, just text that is long enough to be read as a header......."), 0o600)
	if _, err := Open(ctx, junk, Options{}); err == nil {
		t.Error("junk file opened")
	}
	other := filepath.Join(dir, "other.db")
	db := createFromSchema(t, other, "manifestdb_11.2")
	db.Close()
	if _, err := Open(ctx, other, Options{}); !errors.Is(err, ErrNotMessagesDB) {
		t.Errorf("Manifest.db opened as messages: %v", err)
	}
	if _, err := Open(ctx, dir, Options{}); err == nil {
		t.Error("a folder opened")
	}
}
