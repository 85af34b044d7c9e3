package android

import "time"

// Record is one message element of an export: *SMS or *MMS.
type Record interface {
	// Offset is the byte offset of the record's start tag in the file.
	Offset() int64
	isRecord()
}

// SMS box types (the "type" attribute), as in Android's Telephony.Sms.
const (
	TypeInbox  = 1
	TypeSent   = 2
	TypeDraft  = 3
	TypeOutbox = 4
	TypeFailed = 5
	TypeQueued = 6
)

// SMS is one <sms> element. Attributes the app writes as the literal
// string "null" are empty (strings) or absent (Has* flags, zero values).
type SMS struct {
	Off int64
	// Address is the other party as stored (any format).
	Address string
	// Date is when the message was sent or received (the "date"
	// attribute; epoch milliseconds, seconds accepted).
	Date time.Time
	// DateSent is the sender's timestamp (zero when 0 or absent).
	DateSent time.Time
	// Type is the box: TypeInbox … TypeQueued; 0 when absent.
	Type int
	// Body is the message text ("" for the app's "null" marker, which a
	// typed "null" cannot be told from).
	Body    string
	Subject string
	Read    bool
	// Status is -1 none, 0 complete, 32 pending, 64 failed; HasStatus is
	// false when absent.
	Status        int
	HasStatus     bool
	ContactName   string
	ServiceCenter string
	// SubID is the SIM subscription id; HasSubID false when absent.
	SubID    int
	HasSubID bool
	Locked   bool
}

// Offset implements Record.
func (s *SMS) Offset() int64 { return s.Off }
func (*SMS) isRecord()       {}

// MMS address types (the <addr type> PDU header field).
const (
	AddrFrom = 137 // 0x89
	AddrTo   = 151 // 0x97
	AddrCC   = 130 // 0x82
	AddrBCC  = 129 // 0x81
)

// InsertAddressToken is the placeholder Android stores as the "from"
// address of an MMS the phone sent, when it does not know its own number.
const InsertAddressToken = "insert-address-token"

// MMS is one <mms> element with its parts and addresses.
type MMS struct {
	Off int64
	// Date is the message time ("date": seconds or milliseconds, detected
	// per value).
	Date     time.Time
	DateSent time.Time
	// MsgBox is 1 inbox, 2 sent, 3 draft, 4 outbox, 5 failed (0 absent).
	MsgBox int
	// Address is the "address" attribute: participants joined with "~".
	Address     string
	ContactName string
	Subject     string
	Read        bool
	// MType is the PDU message type (128 send-req, 132 retrieve-conf).
	MType    int
	CtT      string // content type of the message ("ct_t")
	TrID     string // transaction id ("tr_id")
	MID      string // message id ("m_id")
	SubID    int
	HasSubID bool
	// RCS is true when the record looks like an RCS chat message stored
	// through the MMS provider: an rcs_* attribute, an RCS content type,
	// or a Google Messages "proto:" transaction id (see docs/android.md).
	RCS   bool
	Parts []Part
	Addrs []Addr
	// DroppedParts and DroppedAddrs count children beyond the per-record
	// limits (Options.MaxParts); they are not in Parts/Addrs.
	DroppedParts int
	DroppedAddrs int
}

// Offset implements Record.
func (m *MMS) Offset() int64 { return m.Off }
func (*MMS) isRecord()       {}

// Part is one <part> of an MMS. Media payloads are never kept: Size is the
// decoded byte count of the base64 "data" attribute.
type Part struct {
	Seq         int
	ContentType string // "ct", lower-cased
	Charset     int    // "chset" (106 = UTF-8); 0 when absent
	Name        string
	Filename    string // "fn"
	ContentLoc  string // "cl"
	ContentID   string // "cid"
	// Text is the text of a text part ("text" attribute, or the decoded
	// "data" of a text/plain part); empty for media.
	Text string
	// HasData is true when the part carried a non-empty data attribute.
	HasData bool
	Size    int64
	// TextTruncated is true when Text was cut at Options.MaxText.
	TextTruncated bool
}

// IsSMIL reports whether the part is the SMIL layout part.
func (p Part) IsSMIL() bool { return p.ContentType == "application/smil" }

// IsText reports whether the part is a text body (text/plain).
func (p Part) IsText() bool { return p.ContentType == "text/plain" }

// Addr is one <addr> of an MMS.
type Addr struct {
	Address string
	Type    int
	Charset int
}

// Header holds the root <smses> attributes.
type Header struct {
	// Count is the number of records the app says it wrote (-1 unknown).
	Count      int       `json:"count"`
	BackupSet  string    `json:"backup_set,omitempty"`
	BackupDate time.Time `json:"backup_date,omitzero"`
	Type       string    `json:"type,omitempty"` // "full", "incremental", …
}
