package triage

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// DefaultContext is how many recent messages a review entry carries.
const DefaultContext = 5

// ReviewOptions configure Review.
type ReviewOptions struct {
	Options
	// Days is the window: threads with a message in (Now-Days, Now] are
	// reviewed (0: DefaultDays). Bounds are the caller's (see MaxDays).
	Days float64
	// Context is the number of context messages per entry (0:
	// DefaultContext).
	Context int
}

// Counts are the bridge protocol's review counts.
type Counts struct {
	NeedsReply  int `json:"needs_reply"`
	LowPriority int `json:"low_priority"`
	Skip        int `json:"skip"`
	// TotalMessages counts the messages in the window (reactions and group
	// events excluded).
	TotalMessages int `json:"total_messages"`
}

// ContextMessage is one message of an entry's context, as in the bridge
// protocol (docs/bridge.md).
type ContextMessage struct {
	ID   string    `json:"id"`
	Time time.Time `json:"ts"`
	Me   bool      `json:"me"`
	Text string    `json:"text"`
	// Transcript is a voice note's transcript and TranscriptNote says when
	// an audio message has none (filled by the service, docs/tools.md).
	Transcript     string `json:"transcript,omitempty"`
	TranscriptNote string `json:"transcript_note,omitempty"`
}

// Entry is a needs_reply or low_priority thread with its text. The first fields
// are the bridge protocol's (docs/bridge.md), then the caller's ConversationID;
// Score, Reason, Reasons and Pending explain the decision. Text fields are
// message content: the caller passes them through the output boundary
// (redaction, sanitisation, wrapping).
type Entry struct {
	ChatID      string           `json:"chat_id"`
	Label       string           `json:"label"`
	ContactName string           `json:"contact_name"`
	DisplayName string           `json:"display_name"`
	LastTime    time.Time        `json:"last_ts"`
	LastText    string           `json:"last_text"`
	Context     []ContextMessage `json:"context"`
	MsgCount    int              `json:"msg_count"`
	// ConversationID is Thread.ConversationID.
	ConversationID string  `json:"conversation_id"`
	Score          float64 `json:"score"`
	// Reason is a text-free code of the main reason (see Code).
	Reason  Code     `json:"reason"`
	Reasons []string `json:"reasons"`
	Pending []string `json:"pending,omitempty"`
}

// SkipEntry is a skipped thread: no message text, as docs/bridge.md requires.
// Reason is a text-free code (the detailed reasons may quote messages).
type SkipEntry struct {
	ChatID         string    `json:"chat_id"`
	Label          string    `json:"label"`
	LastTime       time.Time `json:"last_ts"`
	ConversationID string    `json:"conversation_id"`
	Reason         Code      `json:"reason"`
}

// Report is the review_messages result before output formatting.
type Report struct {
	Days        float64     `json:"days"`
	Counts      Counts      `json:"counts"`
	NeedsReply  []Entry     `json:"needs_reply"`
	LowPriority []Entry     `json:"low_priority"`
	SkipSummary []SkipEntry `json:"skip_summary"`
}

// Review classifies the threads active in the window and builds the bridge
// protocol's review report (docs/triage.md): needs_reply and low_priority
// ordered by score (then newest first), skip_summary newest first. Messages
// before the window may be included in a thread as context; they inform the
// decision but are not counted.
func Review(threads []Thread, opts ReviewOptions) Report {
	days := opts.Days
	if days <= 0 {
		days = DefaultDays
	}
	nctx := opts.Context
	if nctx <= 0 {
		nctx = DefaultContext
	}
	since := opts.Now.Add(-time.Duration(days * float64(24*time.Hour)))
	opts.ownerKeys = normOwner(opts.Options)
	rep := Report{Days: days, NeedsReply: []Entry{}, LowPriority: []Entry{}, SkipSummary: []SkipEntry{}}
	for i := range threads {
		t := &threads[i]
		inWindow, last := 0, -1
		for j := range t.Messages {
			m := &t.Messages[j]
			if m.Kind == model.MsgReaction || m.Kind == model.MsgGroupEvent {
				continue
			}
			if m.Time.After(since) && !m.Time.After(opts.Now) {
				inWindow++
			}
			if !m.Time.After(opts.Now) {
				last = j
			}
		}
		if inWindow == 0 {
			continue
		}
		rep.Counts.TotalMessages += inWindow
		d := Classify(t, opts.Options)
		lm := &t.Messages[last]
		label := cmp.Or(t.Label, t.DisplayName, t.ContactName, t.ChatID)
		if d.Bucket == Skip {
			rep.Counts.Skip++
			rep.SkipSummary = append(rep.SkipSummary, SkipEntry{ChatID: t.ChatID, Label: label, LastTime: lm.Time, ConversationID: t.ConversationID, Reason: d.Code})
			continue
		}
		e := Entry{
			ChatID: t.ChatID, Label: label, ContactName: t.ContactName, DisplayName: t.DisplayName,
			LastTime: lm.Time, LastText: displayText(lm), Context: contextOf(t, nctx, opts.Now),
			MsgCount: inWindow, ConversationID: t.ConversationID, Score: d.Score, Reason: d.Code, Reasons: d.Reasons, Pending: d.Pending,
		}
		if d.Bucket == NeedsReply {
			rep.Counts.NeedsReply++
			rep.NeedsReply = append(rep.NeedsReply, e)
		} else {
			rep.Counts.LowPriority++
			rep.LowPriority = append(rep.LowPriority, e)
		}
	}
	byScore := func(a, b Entry) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := b.LastTime.Compare(a.LastTime); c != 0 {
			return c
		}
		return cmp.Compare(a.ChatID, b.ChatID)
	}
	slices.SortStableFunc(rep.NeedsReply, byScore)
	slices.SortStableFunc(rep.LowPriority, byScore)
	slices.SortStableFunc(rep.SkipSummary, func(a, b SkipEntry) int {
		if c := b.LastTime.Compare(a.LastTime); c != 0 {
			return c
		}
		return cmp.Compare(a.ChatID, b.ChatID)
	})
	return rep
}

// contextOf returns the last n messages (reactions and events excluded)
// up to now, oldest first.
func contextOf(t *Thread, n int, now time.Time) []ContextMessage {
	var out []ContextMessage
	for j := len(t.Messages) - 1; j >= 0 && len(out) < n; j-- {
		m := &t.Messages[j]
		if m.Kind == model.MsgReaction || m.Kind == model.MsgGroupEvent || m.Time.After(now) {
			continue
		}
		out = append(out, ContextMessage{ID: m.ID, Time: m.Time, Me: m.FromMe, Text: displayText(m)})
	}
	slices.Reverse(out)
	return out
}

// displayText is a message body for a review entry: attachment markers
// become "[attachment]", an unsent message says so, a failed send is
// marked.
func displayText(m *Message) string {
	if m.Unsent {
		return "[unsent]"
	}
	s := strings.TrimSpace(strings.ReplaceAll(m.Text, "\ufffc", "[attachment]"))
	if s == "" && m.Attachments > 0 {
		s = "[attachment]"
	}
	if m.FromMe && m.Error != 0 {
		s = "[not delivered] " + s
	}
	return s
}
