// Package mailtest is an in-memory mail.Backend for tests of what consumes
// the Backend contract (the index sync, mail_search, blindeval): mailboxes
// with UIDVALIDITY, UIDNEXT and CONDSTORE mod-sequences, messages built
// into real RFC 822 bytes, and the server-side changes a sync must follow
// (flag changes, moves, expunges, a UIDVALIDITY change). It never touches
// the network or a file.
package mailtest

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/mail"
)

// Message is a message to add: its envelope and a text body, plus
// attachment names (each becomes a small application/octet-stream part).
type Message struct {
	mail.Summary
	Text        string
	Attachments []string
}

type stored struct {
	sum mail.Summary
	raw []byte
}

type box struct {
	path        string
	specialUse  []string
	uidValidity uint32
	uidNext     uint32
	msgs        map[uint32]*stored
}

// Backend is the fake. Its zero value is not usable; call New.
type Backend struct {
	mu        sync.Mutex
	account   string
	boxes     map[string]*box
	modSeq    uint64
	condStore bool
	// Hook, when set, runs before every read call with the call's name
	// ("Mailboxes", "UIDs", "Summaries", "FlagsSince", "Raw", "Status");
	// an error it returns is the call's error (to cut a sync short).
	Hook func(op string) error
	// Calls counts read calls by name.
	Calls map[string]int
	// Writes counts SetFlags/Move/Append calls a sync must never make.
	Writes int
}

// New returns an empty account; condStore says whether it offers
// CONDSTORE (FlagsSince and HighestModSeq).
func New(account string, condStore bool) *Backend {
	return &Backend{account: account, boxes: map[string]*box{}, condStore: condStore, modSeq: 1, Calls: map[string]int{}}
}

func (b *Backend) call(op string) error {
	b.Calls[op]++
	if b.Hook != nil {
		return b.Hook(op)
	}
	return nil
}

// AddMailbox creates path with uidValidity (no-op if it exists).
func (b *Backend) AddMailbox(path string, uidValidity uint32, specialUse ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.boxes[path] == nil {
		b.boxes[path] = &box{path: path, specialUse: specialUse, uidValidity: uidValidity, uidNext: 1, msgs: map[uint32]*stored{}}
	}
}

// Add appends m to path (created with UIDVALIDITY 1 if missing) and
// returns its UID.
func (b *Backend) Add(path string, m Message) uint32 {
	b.AddMailbox(path, 1)
	b.mu.Lock()
	defer b.mu.Unlock()
	bx := b.boxes[path]
	uid := bx.uidNext
	bx.uidNext++
	b.modSeq++
	s := m.Summary
	s.UID, s.ModSeq = uid, b.modSeq
	if s.InternalDate.IsZero() {
		s.InternalDate = s.Date
	}
	s.Flags = slices.Clone(s.Flags)
	raw := Build(m)
	s.Size = int64(len(raw))
	bx.msgs[uid] = &stored{sum: s, raw: raw}
	return uid
}

// SetFlagsServer changes a message's flags as another client would.
func (b *Backend) SetFlagsServer(path string, uid uint32, flags []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m := b.boxes[path].msgs[uid]; m != nil {
		b.modSeq++
		m.sum.Flags, m.sum.ModSeq = slices.Clone(flags), b.modSeq
	}
}

// Expunge deletes messages as another client would.
func (b *Backend) Expunge(path string, uids ...uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, u := range uids {
		delete(b.boxes[path].msgs, u)
	}
	b.modSeq++
}

// MoveServer moves messages as another client would (new UIDs in dest).
func (b *Backend) MoveServer(path, dest string, uids ...uint32) {
	b.AddMailbox(dest, 1)
	b.mu.Lock()
	defer b.mu.Unlock()
	src, dst := b.boxes[path], b.boxes[dest]
	for _, u := range uids {
		m := src.msgs[u]
		if m == nil {
			continue
		}
		delete(src.msgs, u)
		b.modSeq++
		m.sum.UID, m.sum.ModSeq = dst.uidNext, b.modSeq
		dst.msgs[dst.uidNext] = m
		dst.uidNext++
	}
}

// Renumber gives path a new UIDVALIDITY and renumbers its messages, as a
// server rebuilding a mailbox does.
func (b *Backend) Renumber(path string, uidValidity uint32) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bx := b.boxes[path]
	old := bx.msgs
	keys := make([]uint32, 0, len(old))
	for u := range old {
		keys = append(keys, u)
	}
	slices.Sort(keys)
	bx.uidValidity, bx.uidNext, bx.msgs = uidValidity, 1, map[uint32]*stored{}
	for _, u := range keys {
		m := old[u]
		m.sum.UID = bx.uidNext
		bx.msgs[bx.uidNext] = m
		bx.uidNext++
	}
}

// DeleteMailbox removes a mailbox.
func (b *Backend) DeleteMailbox(path string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.boxes, path)
}

func (b *Backend) Account() string { return b.account }
func (b *Backend) Kind() string    { return "imap" }

func (b *Backend) state(bx *box) mail.Mailbox {
	mb := mail.Mailbox{Account: b.account, Path: bx.path, SpecialUse: bx.specialUse, UIDValidity: bx.uidValidity, UIDNext: bx.uidNext, Messages: len(bx.msgs)}
	if b.condStore {
		mb.HighestModSeq = b.modSeq
	}
	for _, m := range bx.msgs {
		if !slices.Contains(m.sum.Flags, mail.Seen) {
			mb.Unseen++
		}
	}
	return mb
}

func (b *Backend) Mailboxes(ctx context.Context) ([]mail.Mailbox, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("Mailboxes"); err != nil {
		return nil, err
	}
	var out []mail.Mailbox
	for _, bx := range b.boxes {
		out = append(out, b.state(bx))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func (b *Backend) open(path string, uidValidity uint32) (*box, error) {
	bx := b.boxes[path]
	if bx == nil {
		return nil, fmt.Errorf("no mailbox %q", path)
	}
	if uidValidity != 0 && uidValidity != bx.uidValidity {
		return nil, mail.ErrUIDValidity
	}
	return bx, nil
}

func (b *Backend) Status(ctx context.Context, path string) (mail.Mailbox, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("Status"); err != nil {
		return mail.Mailbox{}, err
	}
	bx, err := b.open(path, 0)
	if err != nil {
		return mail.Mailbox{}, err
	}
	return b.state(bx), nil
}

func (b *Backend) UIDs(ctx context.Context, path string, uidValidity uint32) ([]uint32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("UIDs"); err != nil {
		return nil, err
	}
	bx, err := b.open(path, uidValidity)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, 0, len(bx.msgs))
	for u := range bx.msgs {
		out = append(out, u)
	}
	slices.Sort(out)
	return out, nil
}

func (b *Backend) Summaries(ctx context.Context, path string, uidValidity uint32, uids []uint32) ([]mail.Summary, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("Summaries"); err != nil {
		return nil, err
	}
	bx, err := b.open(path, uidValidity)
	if err != nil {
		return nil, err
	}
	var out []mail.Summary
	for _, u := range uids {
		if m := bx.msgs[u]; m != nil {
			s := m.sum
			s.Flags = slices.Clone(s.Flags)
			out = append(out, s)
		}
	}
	return out, nil
}

func (b *Backend) FlagsSince(ctx context.Context, path string, uidValidity uint32, modSeq uint64) ([]mail.FlagUpdate, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("FlagsSince"); err != nil {
		return nil, err
	}
	if !b.condStore {
		return nil, mail.ErrNoModSeq
	}
	bx, err := b.open(path, uidValidity)
	if err != nil {
		return nil, err
	}
	var out []mail.FlagUpdate
	for u, m := range bx.msgs {
		if m.sum.ModSeq > modSeq {
			out = append(out, mail.FlagUpdate{UID: u, ModSeq: m.sum.ModSeq, Flags: slices.Clone(m.sum.Flags)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out, nil
}

func (b *Backend) Raw(ctx context.Context, path string, uidValidity uint32, uid uint32, max int64) ([]byte, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.call("Raw"); err != nil {
		return nil, false, err
	}
	bx, err := b.open(path, uidValidity)
	if err != nil {
		return nil, false, err
	}
	m := bx.msgs[uid]
	if m == nil {
		return nil, false, fmt.Errorf("no message %d in %q", uid, path)
	}
	if max > 0 && int64(len(m.raw)) > max {
		return slices.Clone(m.raw[:max]), true, nil
	}
	return slices.Clone(m.raw), false, nil
}

// errWrite is what the fake's writes return: a sync must not call them.
var errWrite = errors.New("mailtest: a write was called")

func (b *Backend) SetFlags(ctx context.Context, path string, uidValidity uint32, uids []uint32, flags []string, add bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Writes++
	return errWrite
}

func (b *Backend) Move(ctx context.Context, path string, uidValidity uint32, uids []uint32, dest string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Writes++
	return errWrite
}

func (b *Backend) Append(ctx context.Context, path string, msg []byte, flags []string, date time.Time) (uint32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.Writes++
	return 0, errWrite
}

func (b *Backend) Close() error { return nil }

var _ mail.Backend = (*Backend)(nil)

func addrList(l []mail.Address) string {
	parts := make([]string, len(l))
	for i, a := range l {
		if a.Name != "" {
			parts[i] = mime.QEncoding.Encode("utf-8", a.Name) + " <" + a.Addr + ">"
		} else {
			parts[i] = "<" + a.Addr + ">"
		}
	}
	return strings.Join(parts, ", ")
}

// Build returns m as RFC 822 bytes: headers (RFC 2047 encoded where not
// ASCII), a text/plain UTF-8 body, and one part per attachment name.
func Build(m Message) []byte {
	var b strings.Builder
	h := func(k, v string) {
		if v != "" {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	h("From", addrList(m.From))
	h("Sender", addrList(m.Sender))
	h("Reply-To", addrList(m.ReplyTo))
	h("To", addrList(m.To))
	h("Cc", addrList(m.Cc))
	h("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	if !m.Date.IsZero() {
		h("Date", m.Date.Format(time.RFC1123Z))
	}
	h("Message-ID", m.MessageID)
	h("In-Reply-To", m.InReplyTo)
	h("MIME-Version", "1.0")
	text := strings.ReplaceAll(m.Text, "\n", "\r\n")
	if len(m.Attachments) == 0 {
		h("Content-Type", `text/plain; charset="utf-8"`)
		h("Content-Transfer-Encoding", "8bit")
		b.WriteString("\r\n" + text + "\r\n")
		return []byte(b.String())
	}
	const boundary = "mailtest-boundary-7f3a"
	h("Content-Type", `multipart/mixed; boundary="`+boundary+`"`)
	b.WriteString("\r\n--" + boundary + "\r\nContent-Type: text/plain; charset=\"utf-8\"\r\nContent-Transfer-Encoding: 8bit\r\n\r\n" + text + "\r\n")
	for _, a := range m.Attachments {
		b.WriteString("--" + boundary + "\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"" +
			mime.QEncoding.Encode("utf-8", a) + "\"\r\nContent-Transfer-Encoding: base64\r\n\r\nAAAA\r\n")
	}
	b.WriteString("--" + boundary + "--\r\n")
	return []byte(b.String())
}
