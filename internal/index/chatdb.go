package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/fold"
	"github.com/tidings-mcp/tidings/internal/model"
)

// RowReader is what a ROWID-ordered message database offers (chat.db,
// sms.db); internal/imessage's Reader satisfies it through a thin adapter.
type RowReader interface {
	// Conversations returns every conversation.
	Conversations(ctx context.Context) ([]model.Conversation, error)
	// Messages streams messages with ROWID > afterRowID in ROWID order.
	Messages(ctx context.Context, afterRowID int64, fn func(model.Message) error) error
	// Changed streams messages edited, unsent, read, delivered or
	// recovered at or after since. It may return an error wrapping
	// errors.ErrUnsupported when the schema records no such dates.
	Changed(ctx context.Context, since time.Time, fn func(model.Message) error) error
	// Deleted streams deletion tombstones after a tombstone row id. It may
	// return an error wrapping errors.ErrUnsupported.
	Deleted(ctx context.Context, afterRowID int64, fn func(rowID int64, guid string) error) error
}

// RowSource adapts a RowReader to Source. Its watermark records the last
// message ROWID, when changes were last read, and the last tombstone.
type RowSource struct {
	// SourceKey is Source.Key ("imessage:/path/to/chat.db").
	SourceKey string
	// SourceKind is Source.Kind (model.SourceIMessage).
	SourceKind string
	Reader     RowReader
	// ChangedMargin is how far before the previous sync changes are read
	// again (default 24 h): edits made on another device reach this
	// database later than their own timestamp says.
	ChangedMargin time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

type rowWatermark struct {
	RowID   int64 `json:"rowid"`
	Changed int64 `json:"changed_ms,omitempty"`
	Deleted int64 `json:"deleted_rowid,omitempty"`
}

// Key implements Source.
func (s *RowSource) Key() string { return s.SourceKey }

// Kind implements Source.
func (s *RowSource) Kind() string { return s.SourceKind }

// orphanGrace is how recent a message without a conversation must be for
// the watermark to wait for its chat link.
const orphanGrace = 2 * time.Minute

// checkpointEvery is how many messages pass between watermark checkpoints.
const checkpointEvery = 500

// Sync implements Source: conversations, new rows, then (unless NewOnly)
// changed rows and tombstones.
func (s *RowSource) Sync(ctx context.Context, req SyncRequest, w Writer) error {
	var wm rowWatermark
	if len(req.Watermark) > 0 {
		if err := json.Unmarshal(req.Watermark, &wm); err != nil {
			return fmt.Errorf("watermark: %w", err)
		}
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	margin := s.ChangedMargin
	if margin <= 0 {
		margin = 24 * time.Hour
	}
	checkpoint := func() error {
		b, _ := json.Marshal(wm)
		return w.Checkpoint(b)
	}
	first := wm.RowID == 0 && wm.Changed == 0
	// The fast path skips the conversation list (a full read of the chat
	// tables): a message in a brand-new chat gets a minimal conversation,
	// completed by the full sync that follows.
	if !req.NewOnly || first {
		convs, err := s.Reader.Conversations(ctx)
		if err != nil {
			return fmt.Errorf("read conversations: %w", err)
		}
		if err := w.Conversations(convs); err != nil {
			return err
		}
	}
	start := now()
	n := 0
	var err error
	// A brand-new message without a conversation may be one whose chat
	// link is not committed yet: the watermark stays below it so the next
	// sync reads it again.
	hold := int64(0)
	err = s.Reader.Messages(ctx, wm.RowID, func(m model.Message) error {
		if err := w.Message(m); err != nil {
			return err
		}
		if len(m.ConversationIDs) == 0 && hold == 0 && start.Sub(m.Time) < orphanGrace {
			hold = m.RowID
		}
		if m.RowID > wm.RowID && hold == 0 {
			wm.RowID = m.RowID
		}
		if n++; n%checkpointEvery == 0 {
			return checkpoint()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read messages: %w", err)
	}
	if err := checkpoint(); err != nil {
		return err
	}
	if req.NewOnly {
		return nil
	}
	if !first {
		// Changes are read from the previous sync's start less the margin.
		// A clock that moved back since then (a corrected clock, a restored
		// machine) would leave that start in the future and skip every
		// change stamped by the clock as it is now: read from whichever is
		// earlier. The margin also covers an edit chat.db stamped just
		// before the previous sync began.
		last := time.UnixMilli(wm.Changed)
		if start.Before(last) {
			last = start
		}
		since := last.Add(-margin)
		err := s.Reader.Changed(ctx, since, w.Message)
		if err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return fmt.Errorf("read changed messages: %w", err)
		}
	}
	if !first {
		if err := s.renamedAttachments(ctx, w); err != nil {
			return err
		}
	}
	wm.Changed = start.UnixMilli()
	if err := checkpoint(); err != nil {
		return err
	}
	err = s.Reader.Deleted(ctx, wm.Deleted, func(rowID int64, guid string) error {
		if err := w.Delete(guid); err != nil {
			return err
		}
		if rowID > wm.Deleted {
			wm.Deleted = rowID
		}
		return nil
	})
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("read deletions: %w", err)
	}
	return checkpoint()
}

// SnapshotSource adapts a source that can only re-read everything (an
// Android "SMS Backup & Restore" export): each sync delivers every record,
// and the index skips those it already holds unchanged (messages are keyed
// by their stable content-hash id). The watermark is the snapshot's
// fingerprint, so an unchanged file is not read at all.
type SnapshotSource struct {
	SourceKey  string
	SourceKind string
	// Fingerprint identifies the snapshot's content (size, mtime, hash);
	// an unchanged fingerprint skips the sync.
	Fingerprint func(ctx context.Context) (string, error)
	// Read delivers every conversation and message.
	Read func(ctx context.Context, convs func([]model.Conversation) error, msg func(model.Message) error) error
}

// Key implements Source.
func (s *SnapshotSource) Key() string { return s.SourceKey }

// Kind implements Source.
func (s *SnapshotSource) Kind() string { return s.SourceKind }

// Sync implements Source.
func (s *SnapshotSource) Sync(ctx context.Context, req SyncRequest, w Writer) error {
	fp, err := s.Fingerprint(ctx)
	if err != nil {
		return fmt.Errorf("fingerprint: %w", err)
	}
	if string(req.Watermark) == fp {
		return nil
	}
	if err := s.Read(ctx, w.Conversations, w.Message); err != nil {
		return err
	}
	return w.Checkpoint([]byte(fp))
}

// AttachmentRenames is an optional RowReader extension: a sender can
// rename an attachment after the index read its message, and that changes
// only the attachment row — no date Changed looks at. The imessage reader
// implements it.
type AttachmentRenames interface {
	// AttachmentNames streams every attachment a message carries, with the
	// name a message read would give it.
	AttachmentNames(ctx context.Context, fn func(msgRowID, attRowID int64, name string) error) error
	// MessagesByRowID streams the messages with these ROWIDs.
	MessagesByRowID(ctx context.Context, rowIDs []int64, fn func(model.Message) error) error
}

// storedAttachments is implemented by the index's Writer: the names of the
// attachments it holds for this source, by attachment ROWID.
type storedAttachments interface {
	StoredAttachmentNames() (map[int64]string, error)
}

// renamedAttachments delivers again every message whose attachment's name
// is no longer the one stored, so the index — and every answer — shows the
// current name (docs/security.md, "Names"). Unknown attachments belong to
// messages not read yet and are left to Messages.
func (s *RowSource) renamedAttachments(ctx context.Context, w Writer) error {
	ar, ok := s.Reader.(AttachmentRenames)
	sw, ok2 := w.(storedAttachments)
	if !ok || !ok2 {
		return nil
	}
	stored, err := sw.StoredAttachmentNames()
	if err != nil || len(stored) == 0 {
		return err
	}
	var msgs []int64
	err = ar.AttachmentNames(ctx, func(msg, att int64, name string) error {
		if old, ok := stored[att]; ok && old != fold.Sanitize(name) && (len(msgs) == 0 || msgs[len(msgs)-1] != msg) {
			msgs = append(msgs, msg)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read attachment names: %w", err)
	}
	if err := ar.MessagesByRowID(ctx, msgs, w.Message); err != nil {
		return fmt.Errorf("read renamed attachments: %w", err)
	}
	return nil
}
