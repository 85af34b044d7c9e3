package index

import (
	"errors"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// ErrNotFound is wrapped by errors about a conversation, contact, message or
// attachment that the index does not hold (or the policy hides). Callers
// report it as such — it is never turned into an empty result.
var ErrNotFound = errors.New("not found")

// ErrBadCursor is wrapped when a cursor is malformed or belongs to another
// query.
var ErrBadCursor = errors.New("invalid cursor")

// Participant is a conversation member.
type Participant struct {
	Handle string `json:"handle"`
	// Name is the contact name for the handle, "" when unknown.
	Name string `json:"name,omitempty"`
}

// Conversation is a conversation as the query layer returns it.
type Conversation struct {
	// ID is the source's conversation id (chat.db guid, e.g.
	// "iMessage;-;+14155551234"); it is what ConversationID filters take.
	ID     string `json:"id"`
	Source string `json:"source"`
	// Identifier is the bridge protocol's chat_id: the handle of a direct
	// chat, "chat…" for a group. Filters accept it too.
	Identifier  string                 `json:"identifier"`
	Kind        model.ConversationKind `json:"kind"`
	DisplayName string                 `json:"display_name,omitempty"`
	// Label is the group name, else the contact names (or handles) of the
	// participants, else Identifier.
	Label string `json:"label"`
	// Participants holds at most 10 members; ParticipantCount is the full
	// count.
	Participants     []Participant `json:"participants"`
	ParticipantCount int           `json:"participant_count"`
	Service          string        `json:"service,omitempty"`
	MessageCount     int64         `json:"message_count"`
	LastActivity     time.Time     `json:"last_activity,omitzero"`
	Archived         bool          `json:"archived,omitempty"`
}

// ConversationRef identifies the conversation of a message or hit.
type ConversationRef struct {
	ID         string                 `json:"id"`
	Identifier string                 `json:"identifier"`
	Label      string                 `json:"label"`
	Kind       model.ConversationKind `json:"kind"`
}

// Reaction is the current reaction of one person on one message part
// (removals already applied).
type Reaction struct {
	Part       int                `json:"part"`
	Type       model.ReactionType `json:"type"`
	Emoji      string             `json:"emoji,omitempty"`
	Sender     string             `json:"sender,omitempty"`
	SenderName string             `json:"sender_name,omitempty"`
	FromMe     bool               `json:"from_me"`
	Time       time.Time          `json:"time"`
}

// Attachment is attachment metadata; the file's location is never part of
// it (see AttachmentFile).
type Attachment struct {
	// ID is the attachment's row id as a string (the tools' attachment_id),
	// or its guid when the source has no row ids.
	ID       string `json:"id"`
	GUID     string `json:"guid,omitempty"`
	Filename string `json:"filename,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
	UTI      string `json:"uti,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Sticker  bool   `json:"sticker,omitempty"`
}

// Message is a stored message as the query layer returns it.
type Message struct {
	ID              string            `json:"id"`
	Source          string            `json:"source"`
	Conversation    ConversationRef   `json:"conversation"`
	Sender          string            `json:"sender,omitempty"`
	SenderName      string            `json:"sender_name,omitempty"`
	FromMe          bool              `json:"from_me"`
	Kind            model.MessageKind `json:"kind"`
	Detail          string            `json:"detail,omitempty"`
	Service         string            `json:"service,omitempty"`
	Time            time.Time         `json:"time"`
	TimeRead        time.Time         `json:"time_read,omitzero"`
	TimeDelivered   time.Time         `json:"time_delivered,omitzero"`
	Text            string            `json:"text"`
	Subject         string            `json:"subject,omitempty"`
	IsSent          bool              `json:"is_sent,omitempty"`
	IsDelivered     bool              `json:"is_delivered,omitempty"`
	IsRead          bool              `json:"is_read,omitempty"`
	Error           int               `json:"error,omitempty"`
	ReplyTo         string            `json:"reply_to,omitempty"`
	ReplyToPart     int               `json:"reply_to_part,omitempty"`
	Edited          bool              `json:"edited,omitempty"`
	Edits           []model.Edit      `json:"edits,omitempty"`
	TimeEdited      time.Time         `json:"time_edited,omitzero"`
	Unsent          bool              `json:"unsent,omitempty"`
	UnsentParts     []int             `json:"unsent_parts,omitempty"`
	TimeUnsent      time.Time         `json:"time_unsent,omitzero"`
	RecentlyDeleted bool              `json:"recently_deleted,omitempty"`
	Reactions       []Reaction        `json:"reactions,omitempty"`
	Attachments     []Attachment      `json:"attachments,omitempty"`
	GroupEvent      *model.GroupEvent `json:"group_event,omitempty"`
	App             string            `json:"app,omitempty"`
	Effect          string            `json:"effect,omitempty"`
	// Runs are the text's attribute runs that carry information (mentions,
	// links, one-time codes, detected data, attachments); redaction uses
	// them.
	Runs []model.Run `json:"runs,omitempty"`

	id int64
}
