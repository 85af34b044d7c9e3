// Package model holds the plain values that sources produce and the index
// consumes: conversations, messages, reactions, attachments and contacts.
//
// The types carry no behaviour beyond small helpers and import nothing from
// the project, so every source (iMessage, Android, contacts) and every
// consumer (index, bridge, MCP tools) can share them without import cycles.
// Fields hold source facts exactly as read; normalisation (handles, names)
// and policy decisions happen later, in the packages that own them.
package model

import (
	"errors"
	"sort"
	"time"
)

// ErrAttachmentOutside is wrapped by a source when an attachment's stored
// path leaves the source's own folders, by ".." or through a symbolic
// link: the file is not read, and the tools say so (docs/security.md).
var ErrAttachmentOutside = errors.New("attachment path leaves the Messages folders")

// Source names identify where a record came from. They are part of stable
// identifiers in the index, so they never change once released.
const (
	SourceIMessage = "imessage" // macOS chat.db or iOS sms.db (live or backup)
	SourceAndroid  = "android"  // SMS Backup & Restore XML export
)

// ConversationKind says whether a conversation is one-to-one or a group.
type ConversationKind string

// Conversation kinds.
const (
	KindDirect ConversationKind = "direct"
	KindGroup  ConversationKind = "group"
)

// Conversation is one thread as the source knows it.
type Conversation struct {
	// Source is SourceIMessage or SourceAndroid.
	Source string `json:"source"`
	// ID is the source's stable identifier: chat.guid for iMessage
	// ("iMessage;-;+14155551234", "iMessage;+;chat123"), a participant-set key
	// for Android.
	ID string `json:"id"`
	// RowID is the source row (chat.ROWID); 0 when the source has none.
	RowID int64 `json:"row_id,omitempty"`
	// Identifier is the user-visible chat id of the bridge protocol
	// (docs/bridge.md): the handle for a direct chat, "chat123…" for a group
	// (chat.chat_identifier).
	Identifier string           `json:"identifier"`
	Kind       ConversationKind `json:"kind"`
	// DisplayName is the user-set group name; empty when unset.
	DisplayName string `json:"display_name,omitempty"`
	// Service is "iMessage", "SMS", "RCS" (as stored).
	Service string `json:"service,omitempty"`
	// Participants are the other members' handles as stored (E.164 phone,
	// email, short code). The owner is never listed.
	Participants []string `json:"participants"`
	Archived     bool     `json:"archived,omitempty"`
}

// MessageKind classifies a message row.
type MessageKind string

// Message kinds. A reaction row modifies another message; a group event
// changes the conversation; everything else is a message a person wrote.
const (
	MsgText       MessageKind = "text"        // ordinary message (text and/or attachments)
	MsgReaction   MessageKind = "reaction"    // tapback, custom emoji or sticker reaction (see Reaction)
	MsgGroupEvent MessageKind = "group_event" // rename, join, leave, icon change (see GroupEvent)
	MsgApp        MessageKind = "app"         // app balloon (Apple Pay, polls, games, link previews …)
	MsgOther      MessageKind = "other"       // shared location, SharePlay, audio kept … (Kind detail in Detail)
)

// Message is one message row. Times are UTC.
type Message struct {
	Source string `json:"source"`
	// ID is the source's stable message id: message.guid for iMessage, a
	// content hash for Android.
	ID string `json:"id"`
	// RowID is message.ROWID (the sync watermark); 0 when the source has none.
	RowID int64 `json:"row_id,omitempty"`
	// ConversationIDs lists every conversation (Conversation.ID) the message
	// belongs to. Empty for an orphan. A message normally has one.
	ConversationIDs []string `json:"conversation_ids"`
	// Sender is the sender's handle as stored; empty when FromMe.
	Sender  string      `json:"sender,omitempty"`
	FromMe  bool        `json:"from_me"`
	Service string      `json:"service,omitempty"`
	Kind    MessageKind `json:"kind"`
	// Detail refines Kind, e.g. "shared_location", "shareplay", "audio_kept".
	Detail string `json:"detail,omitempty"`

	Time          time.Time `json:"time"`
	TimeRead      time.Time `json:"time_read,omitzero"`
	TimeDelivered time.Time `json:"time_delivered,omitzero"`

	// Text is the message body as the person sees it: decoded from
	// attributedBody when present, else the text column. U+FFFC marks each
	// attachment position, as in Apple's data.
	Text string `json:"text"`
	// TextSource says where Text came from: "attributedBody", "text", or
	// "none" when both were empty; "undecodable" when attributedBody failed to
	// decode and the text column was used (or was empty).
	TextSource string `json:"text_source,omitempty"`
	// Runs are attribute runs over Text (byte offsets into Text).
	Runs    []Run  `json:"runs,omitempty"`
	Subject string `json:"subject,omitempty"`

	// Delivery state of outgoing messages.
	IsSent      bool `json:"is_sent,omitempty"`
	IsDelivered bool `json:"is_delivered,omitempty"`
	IsRead      bool `json:"is_read,omitempty"`
	// Error is Apple's send error code; non-zero means the send failed.
	Error int `json:"error,omitempty"`

	// ReplyTo is the guid of the message this inline reply answers
	// (thread_originator_guid) and ReplyToPart its part index (-1 if unknown).
	ReplyTo     string `json:"reply_to,omitempty"`
	ReplyToPart int    `json:"reply_to_part,omitempty"`

	// Edited is true when the message was edited; Edits holds its history,
	// oldest first (the original text first, the current text last).
	Edited bool   `json:"edited,omitempty"`
	Edits  []Edit `json:"edits,omitempty"`
	// UnsentParts lists part indexes the sender unsent; Unsent is true when
	// every part was unsent (the message shows as "unsent").
	UnsentParts []int     `json:"unsent_parts,omitempty"`
	Unsent      bool      `json:"unsent,omitempty"`
	TimeEdited  time.Time `json:"time_edited,omitzero"`
	TimeUnsent  time.Time `json:"time_unsent,omitzero"`

	// Reaction is set when Kind is MsgReaction.
	Reaction *Reaction `json:"reaction,omitempty"`
	// GroupEvent is set when Kind is MsgGroupEvent.
	GroupEvent *GroupEvent `json:"group_event,omitempty"`
	// App is the balloon bundle id's app part when Kind is MsgApp
	// ("com.apple.PassbookUIService.PeerPaymentMessagesExtension").
	App string `json:"app,omitempty"`
	// Effect is the expressive send style ("com.apple.messages.effect.CKConfettiEffect").
	Effect string `json:"effect,omitempty"`

	Attachments []Attachment `json:"attachments,omitempty"`

	// RecentlyDeleted is true when the message sits in "Recently Deleted".
	RecentlyDeleted bool `json:"recently_deleted,omitempty"`
}

// Run is an attribute run over a message's text. Start and End are byte
// offsets into Message.Text (UTF-8), converted from Apple's UTF-16 units.
type Run struct {
	Start int `json:"start"`
	End   int `json:"end"`
	// Part is the message part index (__kIMMessagePartAttributeName); -1 if absent.
	Part int `json:"part"`
	// AttachmentID is the attachment guid (__kIMFileTransferGUIDAttributeName).
	AttachmentID string `json:"attachment_id,omitempty"`
	Filename     string `json:"filename,omitempty"`
	// Mention is the mentioned handle (__kIMMentionConfirmedMention).
	Mention string `json:"mention,omitempty"`
	// Link is a URL (__kIMLinkAttributeName).
	Link string `json:"link,omitempty"`
	// OneTimeCode marks a one-time code detected by Apple; redaction masks it.
	OneTimeCode bool `json:"one_time_code,omitempty"`
	// Detected lists Apple data detectors on the run: "phone", "address",
	// "money", "calendar", "data".
	Detected []string `json:"detected,omitempty"`
	// Styles lists text styles: "bold", "italic", "underline",
	// "strikethrough", and "effect:<name>" for animated text effects.
	Styles []string `json:"styles,omitempty"`
	// Transcription is an audio message's transcript (IMAudioTranscription).
	Transcription string `json:"transcription,omitempty"`
}

// Edit is one version of an edited message part.
type Edit struct {
	Part int       `json:"part"`
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// ReactionType names a tapback.
type ReactionType string

// Reaction types (associated_message_type 2000-2007 / 3000-3007, 1000, 4000).
const (
	ReactLove      ReactionType = "love"
	ReactLike      ReactionType = "like"
	ReactDislike   ReactionType = "dislike"
	ReactLaugh     ReactionType = "laugh"
	ReactEmphasize ReactionType = "emphasize"
	ReactQuestion  ReactionType = "question"
	ReactEmoji     ReactionType = "emoji"   // custom emoji tapback; Emoji holds it
	ReactSticker   ReactionType = "sticker" // sticker tapback or sticker placed on a message
	ReactPollVote  ReactionType = "poll_vote"
)

// Reaction is a tapback added to (or removed from) a target message part.
type Reaction struct {
	// Target is the target message guid (prefixes "p:N/" and "bp:" stripped).
	Target string `json:"target"`
	// TargetPart is the body part index the reaction applies to (0 default).
	TargetPart int          `json:"target_part"`
	Type       ReactionType `json:"type"`
	Emoji      string       `json:"emoji,omitempty"`
	// Removed is true for a removal (3000-3007): it cancels the same sender's
	// earlier reaction of the same type on the same target part.
	Removed bool `json:"removed,omitempty"`
}

// GroupEventType names a change to a group conversation.
type GroupEventType string

// Group event types (item_type/group_action_type).
const (
	GroupRenamed           GroupEventType = "renamed"
	GroupMemberAdded       GroupEventType = "member_added"
	GroupMemberRemoved     GroupEventType = "member_removed"
	GroupMemberLeft        GroupEventType = "member_left"
	GroupIconChanged       GroupEventType = "icon_changed"
	GroupIconRemoved       GroupEventType = "icon_removed"
	GroupBackgroundChanged GroupEventType = "background_changed"
	GroupBackgroundRemoved GroupEventType = "background_removed"
	GroupNumberChanged     GroupEventType = "number_changed"
)

// GroupEvent describes a group change.
type GroupEvent struct {
	Type GroupEventType `json:"type"`
	// Other is the handle added or removed, when there is one.
	Other string `json:"other,omitempty"`
	// Title is the new name for a rename.
	Title string `json:"title,omitempty"`
}

// Attachment is attachment metadata. Path is internal: it is used to copy a
// file for save_attachment and must never be shown to a model.
type Attachment struct {
	// ID is the attachment guid; RowID is attachment.ROWID, which is the
	// attachment_id the tools expose.
	ID       string `json:"id"`
	RowID    int64  `json:"row_id,omitempty"`
	Filename string `json:"filename,omitempty"` // transfer name, never a disk path
	MimeType string `json:"mime_type,omitempty"`
	UTI      string `json:"uti,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Sticker  bool   `json:"sticker,omitempty"`
	Outgoing bool   `json:"outgoing,omitempty"`
	// Path is the resolved location on disk (or in a backup); empty when
	// unknown. Not serialised.
	Path string `json:"-"`
}

// Contact is one card from an address book or export.
type Contact struct {
	Source string `json:"source"` // "addressbook", "ios-addressbook", "vcard", "android"
	// ID is stable within its source (Core Data Z_PK, ABPerson ROWID, vCard UID or hash).
	ID           string    `json:"id"`
	First        string    `json:"first,omitempty"`
	Last         string    `json:"last,omitempty"`
	Middle       string    `json:"middle,omitempty"`
	Nickname     string    `json:"nickname,omitempty"`
	Organization string    `json:"organization,omitempty"`
	FullName     string    `json:"full_name,omitempty"` // formatted name when the source stores one (vCard FN)
	Phones       []string  `json:"phones,omitempty"`    // as typed
	Emails       []string  `json:"emails,omitempty"`
	Modified     time.Time `json:"modified,omitzero"`
}

// Name returns the contact's display name: the formatted name if present,
// else "First Last", else the nickname, else the organization.
func (c Contact) Name() string {
	if c.FullName != "" {
		return c.FullName
	}
	name := c.First
	if c.Last != "" {
		if name != "" {
			name += " "
		}
		name += c.Last
	}
	if name != "" {
		return name
	}
	if c.Nickname != "" {
		return c.Nickname
	}
	return c.Organization
}

// OneTimeCodeRanges returns the byte ranges of runs marked OneTimeCode, clipped
// to text, widened to whole UTF-8 characters, sorted and merged. Empty or
// inverted ranges are dropped. The output boundary masks these ranges and
// the index blanks them, by this one rule.
func OneTimeCodeRanges(text string, runs []Run) [][2]int {
	var out [][2]int
	for _, r := range runs {
		if !r.OneTimeCode {
			continue
		}
		s, e := max(r.Start, 0), min(r.End, len(text))
		for s > 0 && s < len(text) && text[s]&0xC0 == 0x80 {
			s--
		}
		for e < len(text) && e > 0 && text[e]&0xC0 == 0x80 {
			e++
		}
		if s < e {
			out = append(out, [2]int{s, e})
		}
	}
	if len(out) < 2 {
		return out
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	merged := out[:1]
	for _, r := range out[1:] {
		last := &merged[len(merged)-1]
		if r[0] <= last[1] {
			last[1] = max(last[1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	return merged
}
