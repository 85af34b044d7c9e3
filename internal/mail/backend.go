// Package mail is the Mail service of seed 002 (docs/tools.md, "Mail"):
// IMAP accounts and read-only Maildirs ([[mail.accounts]]) behind the
// Backend interface below, the safe MIME reader, the send gate's mail half
// and the fourteen tools. Only the tool files import internal/mcpserver;
// backends and parsing are tested on their own. The index side (sync into
// the index, mail_search) consumes Backend through the same interface.
package mail

import (
	"context"
	"errors"
	"time"
)

// Special-use attributes of RFC 6154 a mailbox may carry.
const (
	Drafts  = `\Drafts`
	Sent    = `\Sent`
	Trash   = `\Trash`
	Archive = `\Archive`
	Junk    = `\Junk`
	All     = `\All`
)

// Flags the tools read and write (RFC 3501 system flags).
const (
	Seen     = `\Seen`
	Flagged  = `\Flagged`
	Answered = `\Answered`
	Deleted  = `\Deleted`
	Draft    = `\Draft`
)

// Mailbox is one mailbox of an account and its state.
type Mailbox struct {
	// Account is the [[mail.accounts]] name: the account half of the
	// Account/Path name tools and scopes use.
	Account string
	// Path is the mailbox's full path with "/" as the separator whatever
	// the server's delimiter ("INBOX", "Work/Projects"); third-party text.
	Path string
	// SpecialUse lists the RFC 6154 attributes (Drafts, Sent, ...).
	SpecialUse []string
	// UIDValidity and UIDNext are the mailbox's RFC 3501 values; a change
	// of UIDValidity invalidates every UID a reader remembered.
	UIDValidity uint32
	UIDNext     uint32
	// HighestModSeq is the RFC 7162 CONDSTORE value; 0 when the backend
	// does not offer it (then flags are re-read in full).
	HighestModSeq uint64
	// Messages and Unseen count the mailbox's messages.
	Messages int
	Unseen   int
}

// Address is one RFC 5322 mailbox: display name (third-party text) and
// address.
type Address struct {
	Name string
	Addr string
}

// Summary is what a listing or a sync needs of one message without its
// body.
type Summary struct {
	UID uint32
	// ModSeq is the message's RFC 7162 mod-sequence (0 without CONDSTORE).
	ModSeq       uint64
	Flags        []string
	InternalDate time.Time
	Size         int64
	// Envelope fields (RFC 3501 ENVELOPE), decoded from RFC 2047.
	Date      time.Time
	Subject   string
	From      []Address
	Sender    []Address
	ReplyTo   []Address
	To        []Address
	Cc        []Address
	Bcc       []Address
	MessageID string
	InReplyTo string
}

// FlagUpdate is a flag change reported by FlagsSince.
type FlagUpdate struct {
	UID    uint32
	ModSeq uint64
	Flags  []string
}

// ErrUIDValidity is returned when a mailbox's UIDVALIDITY differs from the
// one the caller passed: every remembered UID of it is void.
var ErrUIDValidity = errors.New("the mailbox's UIDVALIDITY changed: its messages must be read again")

// ErrReadOnly is returned by writes to a Maildir account, and to a Mail.app
// store account off macOS (docs/tools.md, "Mail.app's local store").
var ErrReadOnly = errors.New("this mail account is read-only")

// Backend is one account (IMAP, a Maildir, or Mail.app's local store).
// Reads never change server state: no read sets \Seen (IMAP BODY.PEEK,
// EXAMINE). Methods taking uidValidity fail with ErrUIDValidity when the
// mailbox's current value differs (0 = do not check).
type Backend interface {
	// Account is the configured name.
	Account() string
	// Kind is "imap", "maildir" or "applemail".
	Kind() string
	// Mailboxes lists every mailbox with its state.
	Mailboxes(ctx context.Context) ([]Mailbox, error)
	// Status reads one mailbox's state.
	Status(ctx context.Context, path string) (Mailbox, error)
	// UIDs lists every UID in the mailbox, ascending (expunge detection).
	UIDs(ctx context.Context, path string, uidValidity uint32) ([]uint32, error)
	// Summaries returns the summaries of the given UIDs (missing ones are
	// skipped), in the order asked.
	Summaries(ctx context.Context, path string, uidValidity uint32, uids []uint32) ([]Summary, error)
	// FlagsSince returns the flags of messages changed after modSeq
	// (CONDSTORE); backends without it return ErrNoModSeq.
	FlagsSince(ctx context.Context, path string, uidValidity uint32, modSeq uint64) ([]FlagUpdate, error)
	// Raw returns the message's RFC 822 bytes, at most max bytes; the bool
	// reports truncation.
	Raw(ctx context.Context, path string, uidValidity uint32, uid uint32, max int64) ([]byte, bool, error)
	// SetFlags adds (add=true) or removes flags on uids.
	SetFlags(ctx context.Context, path string, uidValidity uint32, uids []uint32, flags []string, add bool) error
	// Move moves uids to another mailbox of the same account.
	Move(ctx context.Context, path string, uidValidity uint32, uids []uint32, dest string) error
	// Append stores msg in path with flags and returns its UID when the
	// server reports it (UIDPLUS), else 0.
	Append(ctx context.Context, path string, msg []byte, flags []string, date time.Time) (uint32, error)
	// Close releases connections.
	Close() error
}

// ErrNoModSeq is returned by FlagsSince when the backend offers no
// CONDSTORE: the caller re-reads every flag.
var ErrNoModSeq = errors.New("the mail server offers no CONDSTORE")
