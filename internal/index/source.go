package index

import (
	"context"
	"strings"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Source is something the index syncs from: a chat.db reader, an iOS backup,
// an Android export. Sources deliver plain model values to a Writer; they
// never see the index.
//
// A source keeps its own notion of progress in an opaque watermark. The
// index stores it atomically with the rows that came before it, so after a
// crash the source resumes from a watermark that matches the stored rows.
// Sources must be idempotent around the watermark: a message delivered again
// (same Source.Kind and Message.ID) replaces the stored copy and is skipped
// when unchanged, so re-reading a little more than necessary is harmless.
type Source interface {
	// Key identifies this source instance across runs, e.g.
	// "imessage:/Users/me/Library/Messages/chat.db". Changing it makes the
	// index treat the source as new.
	Key() string
	// Kind is the model source name of the records (model.SourceIMessage,
	// model.SourceAndroid); it namespaces message and conversation ids.
	Kind() string
	// Sync delivers what changed since req.Watermark (nil on the first
	// sync) to w, calling w.Checkpoint as it goes.
	Sync(ctx context.Context, req SyncRequest, w Writer) error
}

// SyncRequest parameterises one Source.Sync call.
type SyncRequest struct {
	// Watermark is the last watermark the source checkpointed (nil: none).
	Watermark []byte
	// NewOnly asks for the cheap part only: rows added since the watermark.
	// The live watcher sets it on every file change to stay within the
	// freshness budget and runs a full sync (edits, retractions, deletions)
	// a little later. A source may ignore it.
	NewOnly bool
}

// Writer receives a source's records during Sync. It is not safe for
// concurrent use. Errors it returns must be returned by the source.
type Writer interface {
	// Conversations delivers conversations (all of them, or the changed
	// ones). A conversation must be delivered before the first message that
	// references it; a message naming an unknown conversation gets a minimal
	// one derived from its id.
	Conversations(convs []model.Conversation) error
	// Message inserts or replaces one message (by Kind and ID). Reactions
	// (Kind MsgReaction) update the target's aggregated reactions.
	Message(m model.Message) error
	// Delete removes a message (or the reaction carried by a reaction
	// message) by ID. Unknown ids are ignored.
	Delete(messageID string) error
	// Checkpoint records that everything delivered so far is covered by
	// watermark. The index commits at its own pace, always together with
	// the latest checkpointed watermark.
	Checkpoint(watermark []byte) error
}

// Policy decides at ingestion and again at query time whether a thread may
// be stored and shown. The read-policy package implements it; a nil Policy
// allows everything. A thread the policy blocks never enters the index, and
// Sync purges threads that became blocked.
type Policy interface {
	AllowConversation(c model.Conversation) bool
}

// Embedder maps texts to unit-length vectors (see internal/embed). Vectors
// from different IDs are not comparable: when ID changes, the index
// re-embeds in the background and searches run on full text until it is
// done.
type Embedder interface {
	ID() string
	Dim() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Fitter is an Embedder learned from the user's corpus. The index calls Fit
// over its messages on the first sync (and again when the corpus has grown
// a lot), persists MarshalBinary's output, and restores it with
// UnmarshalBinary on later opens. The state is stored under the ID the
// embedder reports before fitting, so a configuration change starts afresh.
type Fitter interface {
	Embedder
	Fit(ctx context.Context, docs func(yield func(string) bool)) error
	MarshalBinary() ([]byte, error)
	UnmarshalBinary(data []byte) error
}

// ContactSource yields address-book cards (internal/contacts implements it).
type ContactSource interface {
	// Key identifies the source ("addressbook:/path", "vcard:/path").
	Key() string
	Contacts(ctx context.Context) ([]model.Contact, error)
}

// NormalizeHandle is the default handle normaliser: an email address in
// lower case, a phone number as its digits (with a leading + kept), anything
// else trimmed and lower-cased. The contacts package supplies a
// libphonenumber-based one through Options.NormalizeHandle.
func NormalizeHandle(h string) string {
	h = strings.TrimSpace(h)
	if strings.Contains(h, "@") {
		return strings.ToLower(h)
	}
	var b strings.Builder
	digits := 0
	for i, r := range h {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
			digits++
		case r == '+' && i == 0:
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '(' || r == ')' || r == '.':
		default:
			return strings.ToLower(h) // not a phone number (short code names, urn:…)
		}
	}
	if digits == 0 {
		return strings.ToLower(h)
	}
	return b.String()
}

// last10 returns the last ten digits of a phone handle (the matching rule of
// docs/contacts.md), or "" when h has fewer than seven digits or is an email.
func last10(h string) string {
	if strings.Contains(h, "@") {
		return ""
	}
	var d []byte
	for i := 0; i < len(h); i++ {
		if h[i] >= '0' && h[i] <= '9' {
			d = append(d, h[i])
		}
	}
	if len(d) < 7 {
		return ""
	}
	if len(d) > 10 {
		d = d[len(d)-10:]
	}
	return string(d)
}
