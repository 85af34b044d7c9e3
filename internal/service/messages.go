package service

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tidings-mcp/tidings/internal/imageview"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/output"
)

// Message is one message of get_conversation_messages (and of search
// context). Text, Subject and edit texts are redacted and sanitised
// bodies; the MCP layer wraps them.
type Message struct {
	ID string `json:"id"`
	// ConversationID says which thread the message is in (a person can
	// have several: SMS and iMessage, phone and e-mail).
	ConversationID string    `json:"conversation_id"`
	Time           time.Time `json:"ts"`
	FromMe         bool      `json:"from_me"`
	// Sender is "me", the contact name, or the handle when unknown.
	Sender       string `json:"sender"`
	SenderHandle string `json:"sender_handle,omitempty"`
	Service      string `json:"service,omitempty"`
	// Kind is text, app, other or group_event.
	Kind    string `json:"kind"`
	Text    string `json:"text"`
	Subject string `json:"subject,omitempty"`
	// TextTruncated is set when Text was cut to MaxBodyRunes.
	TextTruncated bool `json:"text_truncated,omitempty"`
	// Transcript is Apple's transcription of a voice note (a body:
	// redacted, wrapped by the MCP layer); TranscriptNote says when an
	// audio message has none (docs/tools.md).
	Transcript     string `json:"transcript,omitempty"`
	TranscriptNote string `json:"transcript_note,omitempty"`
	// ReplyTo is the id of the message this one answers inline.
	ReplyTo   string     `json:"reply_to,omitempty"`
	Reactions []Reaction `json:"reactions,omitempty"`
	Edited    bool       `json:"edited,omitempty"`
	// Edits are the earlier versions, oldest first.
	Edits       []Edit       `json:"edits,omitempty"`
	Unsent      bool         `json:"unsent,omitempty"`
	UnsentParts []int        `json:"unsent_parts,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
	// SendError is set on an outgoing message that failed to send.
	SendError  *SendError  `json:"send_error,omitempty"`
	GroupEvent *GroupEvent `json:"group_event,omitempty"`
	App        string      `json:"app,omitempty"`
	Effect     string      `json:"effect,omitempty"`
	Detail     string      `json:"detail,omitempty"`
	// ReadAt is when the recipient read an outgoing message, if known.
	ReadAt time.Time `json:"read_at,omitzero"`
	// IsRead is the owner's read state of an incoming message (chat.db
	// is_read, Android read); always present on incoming messages, absent
	// on the owner's own and on group events.
	IsRead *bool `json:"is_read,omitempty"`
}

// Reaction is a current tapback (removed ones are gone).
type Reaction struct {
	// Type is love, like, dislike, laugh, emphasize, question, emoji,
	// sticker or poll_vote.
	Type   string    `json:"type"`
	Emoji  string    `json:"emoji,omitempty"`
	By     string    `json:"by"`
	FromMe bool      `json:"from_me"`
	Time   time.Time `json:"ts"`
}

// Edit is an earlier version of an edited message.
type Edit struct {
	Time time.Time `json:"ts"`
	Text string    `json:"text"`
}

// Attachment points at a file without revealing where it is stored: pass
// ID to get_attachment (when Viewable) or save_attachment.
type Attachment struct {
	ID       string `json:"id"`
	Filename string `json:"filename,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Sticker  bool   `json:"sticker,omitempty"`
	// Viewable: an image of a format get_attachment decodes (decided by
	// type; the file may still be in iCloud).
	Viewable bool `json:"viewable,omitempty"`
}

// attachmentsOf is the one conversion of the index's attachments for every
// result that lists them (history, search hits): names through output,
// and Viewable for the images get_attachment can show.
func attachmentsOf(as []index.Attachment) []Attachment {
	var out []Attachment
	for _, a := range as {
		out = append(out, Attachment{ID: a.ID, Filename: output.Filename(a.Filename), MimeType: output.Name(a.MimeType), Size: a.Size, Sticker: a.Sticker,
			Viewable: imageview.Viewable(a.MimeType, a.Filename)})
	}
	return out
}

// sendErrorOf is the one description of a failed send (history and
// search hits alike); nil for code 0.
func sendErrorOf(code int) *SendError {
	if code == 0 {
		return nil
	}
	return &SendError{Code: code, Note: "this message was not delivered (Messages reported error " + strconv.Itoa(code) + ")"}
}

// SendError describes a failed outgoing message.
type SendError struct {
	Code int    `json:"code"`
	Note string `json:"note"`
}

// GroupEvent is a rename, join, leave or icon change.
type GroupEvent struct {
	Type      string `json:"type"`
	Other     string `json:"other,omitempty"`
	OtherName string `json:"other_name,omitempty"`
	Title     string `json:"title,omitempty"`
}

// MaxBodyRunes caps one message body in results; longer texts are cut and
// marked (a body is never the reason a page cannot be returned).
const MaxBodyRunes = 4000

// MessagesParams are get_conversation_messages' arguments.
type MessagesParams struct {
	// ConversationID is a conversation id from list_conversations (or a chat
	// id); Chat is anything resolveChat accepts. One of the two.
	ConversationID string
	Chat           string
	// Limit is the page size (default DefaultMessagesLimit, at most
	// MaxMessagesLimit).
	Limit int
	// Before returns messages strictly older than it; Cursor (from a
	// previous page) overrides it.
	Before time.Time
	Cursor string
	// WindowDays, when above 0, is a read window: only messages of the
	// last WindowDays days are returned (a host bridge sets the protocol's
	// ReadWindowDays; in-process callers leave it 0, no window). A cursor
	// or Before older than the window, or a page the window leaves empty
	// while older messages exist, is an error saying so — never an empty
	// page — and More stays true when older messages exist outside it.
	WindowDays float64
	// UnreadOnly keeps the incoming messages not read yet (pages still
	// hold up to Limit of them: older pages are read until they do).
	UnreadOnly bool
	// DateFrom and DateTo are explicit ISO-8601 bounds, both inclusive; a
	// date-only value is a day in the user's zone (dateRange).
	DateFrom, DateTo string
}

// maxFilteredReads bounds how many index pages one filtered page
// (UnreadOnly) reads before it returns what it has with a cursor.
const maxFilteredReads = 40

// incoming reports a message someone else sent (not a group event): the
// messages that have a read state.
func incoming(m index.Message) bool {
	return !m.FromMe && m.Kind != model.MsgGroupEvent && m.Kind != model.MsgReaction
}

// MessagePage is get_conversation_messages' result: the newest Limit
// messages before the cursor, oldest first.
type MessagePage struct {
	ChatQuery      string            `json:"chat_query,omitempty"`
	ResolvedSubstr string            `json:"resolved_substr,omitempty"`
	Contact        string            `json:"contact,omitempty"`
	Conversations  []ConversationRef `json:"conversations"`
	Count          int               `json:"count"`
	Messages       []Message         `json:"messages"`
	// More says older messages exist; pass NextCursor (exact) or
	// NextBeforeTimestamp to get them.
	More                bool   `json:"more"`
	NextCursor          string `json:"next_cursor,omitempty"`
	NextBeforeTimestamp string `json:"next_before_timestamp,omitempty"`
}

// Messages returns a page of a conversation's messages (or of every
// one-to-one conversation with a person), chronological, with reactions,
// reply threading, edits, unsent state, attachment pointers, send errors
// and group events.
func (s *Service) Messages(ctx context.Context, prm MessagesParams) (MessagePage, error) {
	p, err := s.begin(ctx)
	if err != nil {
		return MessagePage{}, err
	}
	ref := strings.TrimSpace(prm.ConversationID)
	if ref != "" && strings.TrimSpace(prm.Chat) != "" && ref != strings.TrimSpace(prm.Chat) {
		return MessagePage{}, userErr("give conversation_id or chat, not both")
	}
	if ref == "" {
		ref = prm.Chat
	}
	if prm.WindowDays < 0 {
		return MessagePage{}, userErr("the read window must be a positive number of days")
	}
	t, err := s.resolveChat(ctx, p, ref)
	if err != nil {
		return MessagePage{}, err
	}
	limit := prm.Limit
	if limit <= 0 {
		limit = DefaultMessagesLimit
	}
	limit = min(limit, MaxMessagesLimit)
	cur := pageCursor{}
	if prm.Cursor != "" {
		if cur, err = decodePageCursor(prm.Cursor); err != nil {
			return MessagePage{}, err
		}
	} else if !prm.Before.IsZero() {
		cur.T = prm.Before.UnixMilli() - 1 // strictly before: everything at or before T-1 ms
	}
	dateFrom, dateTo, err := s.dateRange(prm.DateFrom, prm.DateTo)
	if err != nil {
		return MessagePage{}, err
	}
	if !dateTo.IsZero() && (cur.T == 0 || cur.T > dateTo.UnixMilli()-1) {
		cur = pageCursor{T: dateTo.UnixMilli() - 1} // dateTo is exclusive
	}
	var floor time.Time // the read window's start; zero = none
	if prm.WindowDays > 0 {
		floor = s.now().Add(-time.Duration(prm.WindowDays * float64(24*time.Hour)))
		if cur.T != 0 && cur.T < floor.UnixMilli() {
			return MessagePage{}, s.outsideWindow(prm.WindowDays, floor)
		}
	}
	book, err := s.contactBook(ctx)
	if err != nil {
		return MessagePage{}, err
	}
	page := MessagePage{ChatQuery: output.Name(t.query), ResolvedSubstr: t.substr, Conversations: []ConversationRef{}, Messages: []Message{}}
	if t.person != nil {
		page.Contact = output.Name(t.person.Name)
	}
	for _, c := range t.convs {
		page.Conversations = append(page.Conversations, s.ref(c, book))
	}
	since := floor
	if dateFrom.After(since) {
		since = dateFrom
	}
	var keep func(index.Message) bool
	if prm.UnreadOnly {
		keep = func(m index.Message) bool { return incoming(m) && !m.IsRead }
	}
	var msgs []index.Message
	var more bool
	var oldest time.Time
	for c, reads := cur, 1; ; reads++ {
		batch, m, old, err := s.merged(ctx, t.convs, c, limit-len(msgs), since, newAuthors(p), keep)
		if err != nil {
			return MessagePage{}, err
		}
		msgs, more = append(batch, msgs...), m
		if !old.IsZero() {
			oldest = old
		}
		if keep == nil || !more || len(msgs) >= limit || old.IsZero() || reads == maxFilteredReads {
			break
		}
		// Continue before the oldest message read; the ones kept at that
		// instant are skipped (the others are read and left out again).
		c = pageCursor{T: old.UnixMilli()}
		for _, x := range batch {
			if x.Time.UnixMilli() == c.T {
				c.Skip = append(c.Skip, x.ID)
			}
		}
		if len(c.Skip) > maxSkip {
			break
		}
	}
	if !floor.IsZero() && !more && since.Equal(floor) {
		older, err := s.olderThan(ctx, t.convs, floor)
		if err != nil {
			return MessagePage{}, err
		}
		if older && len(msgs) == 0 {
			return MessagePage{}, s.outsideWindow(prm.WindowDays, floor)
		}
		more = older
	}
	for _, m := range msgs {
		page.Messages = append(page.Messages, s.message(m, book))
	}
	page.Count = len(page.Messages)
	page.More = more
	if more && len(msgs) == 0 && !oldest.IsZero() {
		// Every message read was a blocked person's: continue before the
		// oldest of them (it is read and left out again, never named).
		b, _ := json.Marshal(pageCursor{T: oldest.UnixMilli()})
		page.NextCursor = "m1." + base64.RawURLEncoding.EncodeToString(b)
		page.NextBeforeTimestamp = oldest.In(s.loc).Format("2006-01-02T15:04:05.000Z07:00")
	}
	if more && len(msgs) > 0 {
		page.NextCursor = PageCursor(page.Messages, prm.Cursor)
		page.NextBeforeTimestamp = msgs[0].Time.In(s.loc).Format("2006-01-02T15:04:05.000Z07:00")
	}
	return page, nil
}

// ErrOutsideWindow is wrapped by the error of a message read that reaches
// past its read window (MessagesParams.WindowDays).
var ErrOutsideWindow = errors.New("outside the read window")

func (s *Service) outsideWindow(days float64, floor time.Time) *Error {
	return &Error{err: ErrOutsideWindow, Msg: fmt.Sprintf(
		"older messages exist, but messages before %s are outside the read window of the last %s days, which this server does not read past (the bridge protocol's limit); say so to the user rather than guess",
		floor.In(s.loc).Format("2006-01-02 15:04"), strconv.FormatFloat(days, 'f', -1, 64))}
}

// olderThan reports whether any of convs has a message (not a reaction)
// before floor.
func (s *Service) olderThan(ctx context.Context, convs []index.Conversation, floor time.Time) (bool, error) {
	for _, c := range convs {
		h, err := s.ix.History(ctx, index.HistoryQuery{Chat: c.ID, Before: floor, Limit: 50})
		if err != nil {
			return false, indexErr("read messages", err)
		}
		for _, m := range h.Messages {
			if m.Kind != model.MsgReaction {
				return true, nil
			}
		}
		if h.More {
			return true, nil // fifty reactions in a row: older rows exist either way
		}
	}
	return false, nil
}

// pageCursor continues a message page: everything at or before T (unix
// ms), except the ids already returned at exactly T.
type pageCursor struct {
	T    int64    `json:"t"`
	Skip []string `json:"s,omitempty"`
}

func decodePageCursor(s string) (pageCursor, error) {
	var c pageCursor
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, "m1."))
	if err != nil || !strings.HasPrefix(s, "m1.") || json.Unmarshal(b, &c) != nil || c.T <= 0 || len(c.Skip) > maxSkip {
		return c, userErr("the cursor is not valid for this request; start again without it")
	}
	return c, nil
}

// PageCursor returns the cursor that continues before msgs[0] (msgs
// chronological, as returned). prev is the cursor the page was read with:
// when the page ends at the same instant, the ids it already skipped stay
// skipped, so a run of messages sharing one timestamp pages through
// exactly. Callers that cut a page to fit a size budget pass the messages
// they kept.
func PageCursor(msgs []Message, prev string) string {
	if len(msgs) == 0 {
		return ""
	}
	t := msgs[0].Time.UnixMilli()
	c := pageCursor{T: t}
	if p, err := decodePageCursor(prev); prev != "" && err == nil && p.T == t {
		c.Skip = append(c.Skip, p.Skip...)
	}
	for _, m := range msgs {
		if m.Time.UnixMilli() == t {
			c.Skip = append(c.Skip, m.ID)
		}
	}
	if len(c.Skip) > maxSkip {
		// More than maxSkip messages in one millisecond (never seen in
		// practice): continue before it rather than page forever.
		c = pageCursor{T: t - 1}
	}
	b, _ := json.Marshal(c)
	return "m1." + base64.RawURLEncoding.EncodeToString(b)
}

// maxSkip bounds a cursor's skip list so that a page read (limit ≤
// MaxMessagesLimit plus the skipped ids) stays within one index read of
// 500.
const maxSkip = 250

// merged reads the newest limit messages at or before the cursor across
// convs, oldest first, and whether older ones exist; with a floor, only
// messages at or after it (and More says whether more exist above it).
//
// A blocked person's messages (authors) are left out before the page is
// cut, so they never take a place on it; oldest is the time of the oldest
// message read, shown or not, for a page on which nothing could be shown.
//
// only, when set, is a further filter (unread_only) applied like the
// authors' one.
func (s *Service) merged(ctx context.Context, convs []index.Conversation, cur pageCursor, limit int, floor time.Time, a *authors, only func(index.Message) bool) ([]index.Message, bool, time.Time, error) {
	var all []index.Message
	var oldest time.Time
	more := false
	seen := map[string]bool{}
	skip := map[string]bool{}
	for _, id := range cur.Skip {
		skip[id] = true
	}
	add := func(ms []index.Message, keep func(index.Message) bool) {
		for _, m := range ms {
			if skip[m.ID] || seen[m.ID] || m.Kind == model.MsgReaction || !keep(m) {
				continue
			}
			seen[m.ID] = true
			if oldest.IsZero() || m.Time.Before(oldest) {
				oldest = m.Time
			}
			if m, ok := a.visible(m); ok && (only == nil || only(m)) {
				all = append(all, m)
			}
		}
	}
	for _, c := range convs {
		if cur.T == 0 {
			h, err := s.ix.History(ctx, index.HistoryQuery{Chat: c.ID, Since: floor, Limit: limit + 1})
			if err != nil {
				return nil, false, time.Time{}, indexErr("read messages", err)
			}
			more = more || h.More
			add(h.Messages, func(index.Message) bool { return true })
			continue
		}
		// Messages at exactly T (some already shown), then the ones before
		// it. Two reads keep this exact whether the index's Before bound
		// is inclusive or strict at equal times.
		t := time.UnixMilli(cur.T)
		at, err := s.ix.History(ctx, index.HistoryQuery{Chat: c.ID, Since: t, Before: t.Add(time.Millisecond), Limit: 500})
		if err != nil {
			return nil, false, time.Time{}, indexErr("read messages", err)
		}
		add(at.Messages, func(m index.Message) bool { return m.Time.UnixMilli() == cur.T })
		older, err := s.ix.History(ctx, index.HistoryQuery{Chat: c.ID, Before: t, Since: floor, Limit: limit + 1})
		if err != nil {
			return nil, false, time.Time{}, indexErr("read messages", err)
		}
		more = more || older.More
		add(older.Messages, func(m index.Message) bool { return m.Time.UnixMilli() < cur.T })
	}
	sort.SliceStable(all, func(i, j int) bool {
		if !all[i].Time.Equal(all[j].Time) {
			return all[i].Time.Before(all[j].Time)
		}
		return all[i].ID < all[j].ID
	})
	if len(all) > limit {
		all, more = all[len(all)-limit:], true
	}
	return all, more, oldest, nil
}

// message converts an index message through the output boundary.
func (s *Service) message(m index.Message, book *contacts.Book) Message {
	out := Message{ID: m.ID, ConversationID: m.Conversation.ID, Time: s.ts(m.Time), FromMe: m.FromMe,
		Service: output.Name(m.Service), Kind: kindOf(m.Kind), ReplyTo: m.ReplyTo, Edited: m.Edited, Unsent: m.Unsent,
		UnsentParts: m.UnsentParts, App: output.Name(m.App), Effect: output.Name(m.Effect), Detail: output.Name(m.Detail)}
	if m.FromMe {
		out.Sender = "me"
		if !m.TimeRead.IsZero() {
			out.ReadAt = s.ts(m.TimeRead)
		}
	} else {
		out.SenderHandle = output.Name(m.Sender)
		out.Sender = output.Name(cmpOr(s.nameOf(m.Sender, m.SenderName, book), m.Sender, "unknown"))
	}
	if incoming(m) {
		read := m.IsRead
		out.IsRead = &read
	}
	out.Text, out.TextTruncated = s.body(m.Text, m.Runs)
	out.Subject = s.out.Line(m.Subject)
	for _, r := range m.Reactions {
		by := "me"
		if !r.FromMe {
			by = output.Name(cmpOr(s.nameOf(r.Sender, r.SenderName, book), r.Sender, "someone"))
		}
		out.Reactions = append(out.Reactions, Reaction{Type: string(r.Type), Emoji: output.Name(r.Emoji), By: by, FromMe: r.FromMe, Time: s.ts(r.Time)})
	}
	edits := m.Edits
	if n := len(edits); n > 0 && edits[n-1].Text == m.Text {
		edits = edits[:n-1] // the source lists the current version last
	}
	for _, e := range edits {
		txt, _ := s.body(e.Text, nil)
		out.Edits = append(out.Edits, Edit{Time: s.ts(e.Time), Text: txt})
	}
	out.Attachments = attachmentsOf(m.Attachments)
	out.Transcript, out.TranscriptNote = s.transcript(m.Runs, m.Attachments)
	if m.FromMe {
		out.SendError = sendErrorOf(m.Error)
	}
	if g := m.GroupEvent; g != nil {
		ge := &GroupEvent{Type: string(g.Type), Other: output.Name(g.Other), Title: output.Name(g.Title)}
		if g.Other != "" {
			ge.OtherName = output.Name(s.nameOf(g.Other, "", book))
		}
		out.GroupEvent = ge
	}
	return out
}

// transcript returns a voice note's transcript (Apple's
// IMAudioTranscription on the audio attachment's run, stored with the
// message's runs by the index) as a redacted, capped body, or, for a
// message with audio but no transcript, the note saying so.
func (s *Service) transcript(runs []model.Run, as []index.Attachment) (text, note string) {
	var parts []string
	for _, r := range runs {
		if r.Transcription != "" {
			parts = append(parts, r.Transcription)
		}
	}
	if len(parts) > 0 {
		text, _ = s.body(strings.Join(parts, "\n"), nil)
		return text, ""
	}
	for _, a := range as {
		if isAudio(a) {
			return "", "no transcript"
		}
	}
	return "", ""
}

// isAudio reports an audio attachment (a voice note or an audio file).
func isAudio(a index.Attachment) bool {
	if strings.HasPrefix(strings.ToLower(a.MimeType), "audio/") {
		return true
	}
	switch strings.ToLower(path.Ext(a.Filename)) {
	case ".caf", ".m4a", ".amr", ".mp3", ".aac", ".wav", ".opus", ".ogg":
		return true
	}
	return false
}

// body redacts and sanitises a message body and caps its length.
func (s *Service) body(text string, runs []model.Run) (string, bool) {
	b := s.out.Body(text, runs)
	return capRunes(b, MaxBodyRunes)
}

func capRunes(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos] + "…", true
		}
		i++
	}
	return s, false
}
