// Package mailindex syncs mail accounts into the index (docs/index.md,
// "Mail"): per mailbox, read-only towards the server, incremental and
// crash-safe.
//
//   - A mailbox seen for the first time, or whose UIDVALIDITY changed, is
//     (re)created empty and read from UID 1.
//   - New messages are the UIDs above the mailbox's last_uid. They are
//     stored in batches; each batch and the new last_uid commit together
//     (index.MailPut), so a sync cut short — a crash, a cancelled context,
//     a dropped connection — resumes after the last batch and stores
//     nothing twice.
//   - Flags: with CONDSTORE, the changes since the recorded HIGHESTMODSEQ
//     (Backend.FlagsSince); without it, every stored message's flags are
//     read again. HIGHESTMODSEQ is recorded only after the new messages
//     and flag changes it covers are stored.
//   - Expunges and moves: the stored UIDs the server no longer lists are
//     deleted; a moved message is a new UID in its new mailbox.
//   - A mailbox the server no longer lists is dropped.
//
// The read policy is asked before a body is fetched: a blocked person's
// mail is never downloaded, stored or embedded. Nothing here writes to
// the server (only the Backend's read methods are called).
package mailindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mail"
)

// Options configure a sync of one account.
type Options struct {
	// Own lists the account's own addresses (its from addresses and
	// username): they are not correspondents for the read policy.
	Own []string
	// Body turns raw bytes into text and attachment names; nil uses
	// MIMEBody.
	Body BodyFunc
	// MaxRaw bounds the bytes of one message fetched (default 8 MiB; a
	// longer message is indexed from its first MaxRaw bytes).
	MaxRaw int64
	// Batch is how many new messages are fetched and committed together
	// (default 200).
	Batch int
	// Progress, when set, is called as new messages are stored.
	Progress func(Progress)
}

// Progress reports a mailbox's new messages as they are stored.
type Progress struct {
	Account, Mailbox string
	Done, Total      int
	// First is true on a mailbox's first sync.
	First bool
}

// Stats says what a sync did.
type Stats struct {
	Mailboxes int // mailboxes synced
	New       int // messages stored
	Blocked   int // new messages the read policy kept out
	Flags     int // stored messages whose flags changed
	Deleted   int // stored messages gone from their mailbox
	Reset     int // mailboxes read again after a UIDVALIDITY change
	Dropped   int // mailboxes gone from the server
	Embedded  int // stored messages embedded after the embedder changed
}

func (o *Options) defaults() {
	if o.Body == nil {
		o.Body = MIMEBody
	}
	if o.MaxRaw <= 0 {
		o.MaxRaw = 8 << 20
	}
	if o.Batch <= 0 {
		o.Batch = 200
	}
}

// Sync brings the index's copy of account b up to date.
func Sync(ctx context.Context, ix *index.Index, b mail.Backend, o Options) (Stats, error) {
	o.defaults()
	var st Stats
	acct := b.Account()
	boxes, err := b.Mailboxes(ctx)
	if err != nil {
		return st, fmt.Errorf("mail account %s: list mailboxes: %w", acct, err)
	}
	have, err := ix.MailMailboxes(ctx)
	if err != nil {
		return st, err
	}
	known := map[string]index.MailMailbox{}
	for _, h := range have {
		if h.Account == acct {
			known[h.Path] = h
		}
	}
	seen := map[string]bool{}
	for _, mb := range boxes {
		seen[mb.Path] = true
		if err := syncMailbox(ctx, ix, b, mb, known, o, &st); err != nil {
			return st, fmt.Errorf("mail account %s: mailbox %s: %w", acct, mb.Path, err)
		}
		st.Mailboxes++
	}
	for path, h := range known {
		if !seen[path] {
			if err := ix.MailDropMailbox(ctx, h.ID); err != nil {
				return st, err
			}
			st.Dropped++
		}
	}
	n, err := ix.MailEmbedPending(ctx)
	st.Embedded = n
	return st, err
}

func syncMailbox(ctx context.Context, ix *index.Index, b mail.Backend, mb mail.Mailbox, known map[string]index.MailMailbox, o Options, st *Stats) error {
	for attempt := 0; ; attempt++ {
		h, ok := known[mb.Path]
		if !ok || h.UIDValidity != mb.UIDValidity {
			var err error
			if h, err = ix.MailResetMailbox(ctx, b.Account(), mb.Path, mb.UIDValidity); err != nil {
				return err
			}
			if ok {
				st.Reset++
			}
			known[mb.Path] = h
		}
		err := syncBox(ctx, ix, b, mb, h, o, st)
		if !errors.Is(err, mail.ErrUIDValidity) || attempt > 0 {
			return err
		}
		// UIDVALIDITY changed between the listing and the reads: read
		// the mailbox's state again and start it over.
		if mb, err = b.Status(ctx, mb.Path); err != nil {
			return err
		}
	}
}

func syncBox(ctx context.Context, ix *index.Index, b mail.Backend, mb mail.Mailbox, h index.MailMailbox, o Options, st *Stats) error {
	uv := h.UIDValidity
	uids, err := b.UIDs(ctx, mb.Path, uv)
	if err != nil {
		return fmt.Errorf("list UIDs: %w", err)
	}
	stored, err := ix.MailUIDs(ctx, h)
	if err != nil {
		return err
	}
	first := h.LastUID == 0 && len(stored) == 0

	// Expunged or moved away.
	var gone, still []uint32
	for _, u := range stored {
		if _, found := slices.BinarySearch(uids, u); found {
			still = append(still, u)
		} else {
			gone = append(gone, u)
		}
	}
	if len(gone) > 0 {
		n, err := ix.MailDelete(ctx, h, gone)
		if err != nil {
			return err
		}
		st.Deleted += n
	}

	// Flags of the messages already stored.
	if !first && len(still) > 0 && (h.HighestModSeq == 0 || mb.HighestModSeq != h.HighestModSeq) {
		if err := syncFlags(ctx, ix, b, mb, h, still, o, st); err != nil {
			return err
		}
	}

	// New messages.
	var fresh []uint32
	for _, u := range uids {
		if u > h.LastUID {
			fresh = append(fresh, u)
		}
	}
	done := 0
	for start := 0; start < len(fresh); start += o.Batch {
		part := fresh[start:min(len(fresh), start+o.Batch)]
		sums, err := b.Summaries(ctx, mb.Path, uv, part)
		if err != nil {
			return fmt.Errorf("read summaries: %w", err)
		}
		msgs := make([]index.MailMessage, 0, len(sums))
		for _, s := range sums {
			m := fromSummary(s)
			if ix.MailAllows(&m, o.Own) {
				raw, _, err := b.Raw(ctx, mb.Path, uv, s.UID, o.MaxRaw)
				if err != nil {
					return fmt.Errorf("read message %d: %w", s.UID, err)
				}
				// A body the reader cannot parse still leaves the
				// envelope searchable.
				m.Text, m.Attachments, _ = o.Body(raw)
			}
			msgs = append(msgs, m)
		}
		ps, err := ix.MailPut(ctx, h, msgs, part[len(part)-1], o.Own)
		if err != nil {
			return err
		}
		st.New += ps.Stored
		st.Blocked += ps.Blocked
		done += len(part)
		if o.Progress != nil {
			o.Progress(Progress{Account: b.Account(), Mailbox: mb.Path, Done: done, Total: len(fresh), First: first})
		}
	}
	if mb.HighestModSeq > 0 && mb.HighestModSeq != h.HighestModSeq {
		return ix.MailSetModSeq(ctx, h, mb.HighestModSeq)
	}
	return nil
}

// syncFlags brings the flags of the stored messages up to date: the
// CONDSTORE changes since the recorded mod-sequence, or every message's
// flags when there is none (or the server offers no CONDSTORE).
func syncFlags(ctx context.Context, ix *index.Index, b mail.Backend, mb mail.Mailbox, h index.MailMailbox, still []uint32, o Options, st *Stats) error {
	var ups []index.MailFlags
	full := h.HighestModSeq == 0 || mb.HighestModSeq == 0
	if !full {
		fs, err := b.FlagsSince(ctx, mb.Path, h.UIDValidity, h.HighestModSeq)
		switch {
		case errors.Is(err, mail.ErrNoModSeq):
			full = true
		case err != nil:
			return fmt.Errorf("read flag changes: %w", err)
		}
		for _, f := range fs {
			ups = append(ups, index.MailFlags{UID: f.UID, Flags: f.Flags})
		}
	}
	if full {
		const flagBatch = 1000
		for start := 0; start < len(still); start += flagBatch {
			sums, err := b.Summaries(ctx, mb.Path, h.UIDValidity, still[start:min(len(still), start+flagBatch)])
			if err != nil {
				return fmt.Errorf("read flags: %w", err)
			}
			for _, s := range sums {
				ups = append(ups, index.MailFlags{UID: s.UID, Flags: s.Flags})
			}
		}
	}
	n, err := ix.MailSetFlags(ctx, h, ups)
	st.Flags += n
	return err
}

func addrs(l []mail.Address) []index.MailAddress {
	if len(l) == 0 {
		return nil
	}
	out := make([]index.MailAddress, len(l))
	for i, a := range l {
		out[i] = index.MailAddress{Name: a.Name, Addr: a.Addr}
	}
	return out
}

func fromSummary(s mail.Summary) index.MailMessage {
	date := s.Date
	if date.IsZero() {
		date = s.InternalDate
	}
	return index.MailMessage{UID: s.UID, MessageID: s.MessageID, InReplyTo: s.InReplyTo, Date: date, Subject: s.Subject,
		From: addrs(s.From), Sender: addrs(s.Sender), ReplyTo: addrs(s.ReplyTo), To: addrs(s.To), Cc: addrs(s.Cc),
		Flags: slices.Clone(s.Flags), Size: s.Size}
}

// ProgressLine returns a Progress callback that draws "mail Work/INBOX:
// 1,200/10,000 messages" on w, rewritten in place at most five times a
// second, for first syncs only (as `tidings index` reports its first
// pass).
func ProgressLine(w io.Writer) func(Progress) {
	var mu sync.Mutex
	var last time.Time
	return func(p Progress) {
		if !p.First || w == nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		end := p.Done == p.Total
		if now := time.Now(); !end && now.Sub(last) < 200*time.Millisecond {
			return
		} else {
			last = now
		}
		fmt.Fprintf(w, "\rmail %s/%s: %s/%s messages", p.Account, p.Mailbox, thousands(p.Done), thousands(p.Total))
		if end {
			fmt.Fprint(w, "\n")
		}
	}
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
