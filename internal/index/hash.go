package index

import (
	"math"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// hasher accumulates a 64-bit FNV-1a hash of typed fields; strings are
// length-prefixed so field boundaries cannot shift. It is FNV-1a written
// out (hash/fnv's through an interface cost a third of message
// preparation); stored hashes depend on the exact output, which
// TestHasherIsFNV1a pins.
type hasher struct{ h uint64 }

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

func newHasher() *hasher { return &hasher{h: fnvOffset64} }

func (h *hasher) int(v int64) {
	x := h.h
	for i := 0; i < 8; i++ {
		x ^= uint64(byte(v >> (8 * i)))
		x *= fnvPrime64
	}
	h.h = x
}

func (h *hasher) bool(v bool) {
	if v {
		h.int(1)
	} else {
		h.int(0)
	}
}

func (h *hasher) str(s string) {
	h.int(int64(len(s)))
	x := h.h
	for i := 0; i < len(s); i++ {
		x ^= uint64(s[i])
		x *= fnvPrime64
	}
	h.h = x
}

func (h *hasher) time(t time.Time) {
	if t.IsZero() {
		h.int(math.MinInt64)
		return
	}
	h.int(t.UnixNano())
}

func (h *hasher) sum() uint64 { return h.h }

// messageHash hashes every field of m the index stores, so a re-delivered
// message that hashes the same is skipped without touching the index.
func messageHash(m *model.Message) uint64 {
	h := newHasher()
	h.str(m.ID)
	h.int(int64(len(m.ConversationIDs)))
	for _, c := range m.ConversationIDs {
		h.str(c)
	}
	h.str(m.Sender)
	h.bool(m.FromMe)
	h.str(m.Service)
	h.str(string(m.Kind))
	h.str(m.Detail)
	h.time(m.Time)
	h.time(m.TimeRead)
	h.time(m.TimeDelivered)
	h.str(m.Text)
	h.str(m.TextSource)
	h.int(int64(len(m.Runs)))
	for _, r := range m.Runs {
		h.int(int64(r.Start))
		h.int(int64(r.End))
		h.int(int64(r.Part))
		h.str(r.AttachmentID)
		h.str(r.Filename)
		h.str(r.Mention)
		h.str(r.Link)
		h.bool(r.OneTimeCode)
		h.int(int64(len(r.Detected)))
		for _, d := range r.Detected {
			h.str(d)
		}
		h.int(int64(len(r.Styles)))
		for _, s := range r.Styles {
			h.str(s)
		}
		h.str(r.Transcription)
	}
	h.str(m.Subject)
	h.bool(m.IsSent)
	h.bool(m.IsDelivered)
	h.bool(m.IsRead)
	h.int(int64(m.Error))
	h.str(m.ReplyTo)
	h.int(int64(m.ReplyToPart))
	h.bool(m.Edited)
	h.int(int64(len(m.Edits)))
	for _, e := range m.Edits {
		h.int(int64(e.Part))
		h.time(e.Time)
		h.str(e.Text)
	}
	h.int(int64(len(m.UnsentParts)))
	for _, p := range m.UnsentParts {
		h.int(int64(p))
	}
	h.bool(m.Unsent)
	h.time(m.TimeEdited)
	h.time(m.TimeUnsent)
	if m.Reaction != nil {
		h.str(m.Reaction.Target)
		h.int(int64(m.Reaction.TargetPart))
		h.str(string(m.Reaction.Type))
		h.str(m.Reaction.Emoji)
		h.bool(m.Reaction.Removed)
	}
	if m.GroupEvent != nil {
		h.str(string(m.GroupEvent.Type))
		h.str(m.GroupEvent.Other)
		h.str(m.GroupEvent.Title)
	}
	h.str(m.App)
	h.str(m.Effect)
	h.int(int64(len(m.Attachments)))
	for _, a := range m.Attachments {
		h.str(a.ID)
		h.int(a.RowID)
		h.str(a.Filename)
		h.str(a.MimeType)
		h.str(a.UTI)
		h.int(a.Size)
		h.bool(a.Sticker)
		h.bool(a.Outgoing)
		h.str(a.Path)
	}
	h.bool(m.RecentlyDeleted)
	return h.sum()
}

// guidKey is a 64-bit key of (source, guid) for the bulk-load dedup map:
// FNV-1a of source (8 bytes, little-endian) and guid.
func guidKey(source int64, guid string) uint64 {
	x := uint64(fnvOffset64)
	for i := 0; i < 8; i++ {
		x ^= uint64(byte(source >> (8 * i)))
		x *= fnvPrime64
	}
	for i := 0; i < len(guid); i++ {
		x ^= uint64(guid[i])
		x *= fnvPrime64
	}
	return x
}
