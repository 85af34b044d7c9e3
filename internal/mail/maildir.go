package mail

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	netmail "net/mail"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxHeaderRead bounds what a Maildir summary reads of one file: the
// header block (docs/security.md: a sender chooses a message's shape).
const maxHeaderRead = 256 << 10

// Maildir is a read-only local Maildir++ folder (the layout Dovecot and
// most delivery agents write): the root's cur/ and new/ are INBOX, a
// subfolder ".Work.Projects" is the mailbox "Work/Projects". Nothing is
// ever written into it, not even a uid list, so UIDs are derived
// (docs/tools.md "Mail"):
//
//   - when the folder holds a dovecot-uidlist (Dovecot delivered into it)
//     its UIDs and UIDVALIDITY are used as they are, and files it does not
//     list yet follow from its next UID in delivery order;
//   - otherwise messages are numbered 1..n in delivery order (the time at
//     the start of a Maildir file name, then the name), and UIDVALIDITY is
//     a hash of that ordered list, so any delivery or removal voids every
//     UID a reader remembered instead of silently renumbering them.
//
// A message's identity across flag changes and new/→cur/ is the file
// name's unique part (before ":").
type Maildir struct {
	account string
	root    string
}

// NewMaildir opens a Maildir read-only; root must be an absolute path to
// a folder holding cur/.
func NewMaildir(account, root string) (*Maildir, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("mail account %q: maildir %q must be an absolute path", account, root)
	}
	return &Maildir{account: account, root: filepath.Clean(root)}, nil
}

// Account implements Backend.
func (m *Maildir) Account() string { return m.account }

// Kind implements Backend.
func (m *Maildir) Kind() string { return "maildir" }

// Close implements Backend.
func (m *Maildir) Close() error { return nil }

// dir maps a mailbox path to its folder; Maildir++ names hold no "/" and
// no leading "." component, so a path cannot climb out of the root.
func (m *Maildir) dir(path string) (string, error) {
	if strings.EqualFold(path, "INBOX") {
		return m.root, nil
	}
	parts := strings.Split(path, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "./\\\x00") {
			return "", fmt.Errorf("no mailbox %q in mail account %q", path, m.account)
		}
	}
	return filepath.Join(m.root, "."+strings.Join(parts, ".")), nil
}

// Mailboxes implements Backend.
func (m *Maildir) Mailboxes(ctx context.Context) ([]Mailbox, error) {
	if _, err := os.Stat(filepath.Join(m.root, "cur")); err != nil {
		return nil, fmt.Errorf("mail account %q: %s is not a Maildir (no cur/): %w", m.account, m.root, err)
	}
	paths := []string{"INBOX"}
	ents, err := os.ReadDir(m.root)
	if err != nil {
		return nil, fmt.Errorf("mail account %q: %w", m.account, err)
	}
	for _, e := range ents {
		n := e.Name()
		if !e.IsDir() || !strings.HasPrefix(n, ".") || n == "." || n == ".." || strings.Contains(n[1:], "..") {
			continue
		}
		if _, err := os.Stat(filepath.Join(m.root, n, "cur")); err != nil {
			continue
		}
		paths = append(paths, strings.ReplaceAll(n[1:], ".", "/"))
	}
	slices.Sort(paths[1:])
	out := make([]Mailbox, 0, len(paths))
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mb, err := m.Status(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, mb)
	}
	return out, nil
}

// mdMessage is one file of a Maildir folder.
type mdMessage struct {
	uid   uint32
	key   string // unique part of the name
	file  string // path
	info  string // after ":2,"
	mtime time.Time
	size  int64
}

// scan lists a folder's messages in UID order with its UIDVALIDITY and
// next UID.
func (m *Maildir) scan(path string) ([]mdMessage, uint32, uint32, error) {
	dir, err := m.dir(path)
	if err != nil {
		return nil, 0, 0, err
	}
	var msgs []mdMessage
	for _, sub := range []string{"new", "cur"} {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && sub == "new" {
				continue
			}
			return nil, 0, 0, fmt.Errorf("mail account %q: mailbox %q: %w", m.account, path, err)
		}
		for _, e := range ents {
			if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			key, info, _ := strings.Cut(e.Name(), ":")
			info = strings.TrimPrefix(info, "2,")
			if sub == "new" {
				info = ""
			}
			msgs = append(msgs, mdMessage{key: key, file: filepath.Join(dir, sub, e.Name()), info: info, mtime: fi.ModTime(), size: fi.Size()})
		}
	}
	slices.SortFunc(msgs, func(a, b mdMessage) int {
		if c := deliveryTime(a.key) - deliveryTime(b.key); c != 0 {
			if c < 0 {
				return -1
			}
			return 1
		}
		return strings.Compare(a.key, b.key)
	})
	// The same unique name in new/ and cur/ (a crash mid-rename) is one
	// message.
	msgs = slices.CompactFunc(msgs, func(a, b mdMessage) bool { return a.key == b.key })

	if uv, next, known, ok := readUIDList(filepath.Join(dir, "dovecot-uidlist")); ok {
		var unknown []int
		for i := range msgs {
			if u, ok := known[msgs[i].key]; ok {
				msgs[i].uid = u
			} else {
				unknown = append(unknown, i)
			}
		}
		for _, i := range unknown {
			msgs[i].uid = next
			next++
		}
		slices.SortFunc(msgs, func(a, b mdMessage) int { return int(int64(a.uid) - int64(b.uid)) })
		return msgs, uv, next, nil
	}
	h := fnv.New32a()
	for i := range msgs {
		msgs[i].uid = uint32(i + 1)
		h.Write([]byte(msgs[i].key))
		h.Write([]byte{0})
	}
	uv := h.Sum32() | 1 // never 0, which means "unknown"
	return msgs, uv, uint32(len(msgs) + 1), nil
}

// deliveryTime is the seconds at the start of a Maildir name (0 if none).
func deliveryTime(key string) int64 {
	s, _, _ := strings.Cut(key, ".")
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// readUIDList reads Dovecot's dovecot-uidlist (version 3): a header
// "3 V<uidvalidity> N<nextuid> ..." and lines "<uid> [fields] :<name>".
func readUIDList(path string) (uidValidity, next uint32, known map[string]uint32, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, nil, false
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		return 0, 0, nil, false
	}
	head := strings.Fields(sc.Text())
	if len(head) < 3 || head[0] != "3" {
		return 0, 0, nil, false
	}
	for _, f := range head[1:] {
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseUint(f[1:], 10, 32)
		if err != nil {
			continue
		}
		switch f[0] {
		case 'V':
			uidValidity = uint32(n)
		case 'N':
			next = uint32(n)
		}
	}
	if uidValidity == 0 || next == 0 {
		return 0, 0, nil, false
	}
	known = map[string]uint32{}
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, " :")
		if i < 0 {
			continue
		}
		num, _, _ := strings.Cut(line[:i], " ")
		u, err := strconv.ParseUint(num, 10, 32)
		if err != nil || u == 0 {
			continue
		}
		name, _, _ := strings.Cut(line[i+2:], ":")
		known[name] = uint32(u)
		if uint32(u) >= next {
			next = uint32(u) + 1
		}
	}
	return uidValidity, next, known, true
}

// Status implements Backend.
func (m *Maildir) Status(ctx context.Context, path string) (Mailbox, error) {
	if path == "" {
		return Mailbox{}, fmt.Errorf("no mailbox %q in mail account %q", path, m.account)
	}
	msgs, uv, next, err := m.scan(path)
	if err != nil {
		return Mailbox{}, err
	}
	if strings.EqualFold(path, "INBOX") {
		path = "INBOX"
	}
	mb := Mailbox{Account: m.account, Path: path, UIDValidity: uv, UIDNext: next, Messages: len(msgs)}
	if s := guessSpecialUse(path); s != "" {
		mb.SpecialUse = []string{s}
	}
	for _, msg := range msgs {
		if !strings.ContainsRune(msg.info, 'S') {
			mb.Unseen++
		}
	}
	return mb, nil
}

// scanChecked is scan with the caller's UIDVALIDITY checked.
func (m *Maildir) scanChecked(path string, uidValidity uint32) ([]mdMessage, error) {
	msgs, uv, _, err := m.scan(path)
	if err != nil {
		return nil, err
	}
	if uidValidity != 0 && uv != uidValidity {
		return nil, ErrUIDValidity
	}
	return msgs, nil
}

// UIDs implements Backend.
func (m *Maildir) UIDs(ctx context.Context, path string, uidValidity uint32) ([]uint32, error) {
	msgs, err := m.scanChecked(path, uidValidity)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, len(msgs))
	for i, msg := range msgs {
		out[i] = msg.uid
	}
	return out, nil
}

// maildirFlags maps Maildir info letters to IMAP flags.
func maildirFlags(info string) []string {
	out := []string{}
	for _, c := range info {
		switch c {
		case 'D':
			out = append(out, Draft)
		case 'F':
			out = append(out, Flagged)
		case 'R':
			out = append(out, Answered)
		case 'S':
			out = append(out, Seen)
		case 'T':
			out = append(out, Deleted)
		}
	}
	return out
}

// Summaries implements Backend: the header block of each file, parsed.
func (m *Maildir) Summaries(ctx context.Context, path string, uidValidity uint32, uids []uint32) ([]Summary, error) {
	msgs, err := m.scanChecked(path, uidValidity)
	if err != nil {
		return nil, err
	}
	byUID := make(map[uint32]mdMessage, len(msgs))
	for _, msg := range msgs {
		byUID[msg.uid] = msg
	}
	out := make([]Summary, 0, len(uids))
	for _, u := range uids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		msg, ok := byUID[u]
		if !ok {
			continue
		}
		head, err := readHead(msg.file)
		if err != nil {
			continue // removed meanwhile
		}
		s := SummaryFromHeader(head)
		s.UID, s.Flags, s.Size = u, maildirFlags(msg.info), msg.size
		s.InternalDate = msg.mtime
		if t := deliveryTime(msg.key); t > 0 {
			s.InternalDate = time.Unix(t, 0)
		}
		out = append(out, s)
	}
	return out, nil
}

// readHead reads a file's header block (at most maxHeaderRead bytes).
func readHead(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, maxHeaderRead))
	if err != nil {
		return nil, err
	}
	return headerBlock(buf), nil
}

// headerBlock cuts raw at the first empty line (CRLF or LF).
func headerBlock(raw []byte) []byte {
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\n')
		if j < 0 {
			return raw
		}
		line := raw[i : i+j]
		if len(bytes.TrimRight(line, "\r")) == 0 {
			return raw[:i]
		}
		i += j + 1
	}
	return raw
}

// SummaryFromHeader fills a Summary's envelope fields from an RFC 5322
// header block (RFC 2047 words decoded in any known charset); unparsable
// fields stay empty.
func SummaryFromHeader(head []byte) Summary {
	var s Summary
	msg, err := netmail.ReadMessage(bytes.NewReader(append(bytes.TrimRight(head, "\r\n"), "\r\n\r\n"...)))
	if err != nil {
		return s
	}
	h := msg.Header
	s.Subject = decodeHeader(strings.TrimSpace(h.Get("Subject")))
	if d, err := netmail.ParseDate(h.Get("Date")); err == nil {
		s.Date = d
	}
	s.From, s.Sender, s.ReplyTo = parseAddrs(h.Get("From")), parseAddrs(h.Get("Sender")), parseAddrs(h.Get("Reply-To"))
	s.To, s.Cc, s.Bcc = parseAddrs(h.Get("To")), parseAddrs(h.Get("Cc")), parseAddrs(h.Get("Bcc"))
	s.MessageID = strings.Trim(strings.TrimSpace(h.Get("Message-Id")), "<>")
	if irt := strings.Fields(h.Get("In-Reply-To")); len(irt) > 0 {
		s.InReplyTo = strings.Trim(irt[0], "<>")
	}
	return s
}

// parseAddrs parses an address list leniently: a list net/mail refuses
// is split on commas and each piece tried alone, so one bad entry does
// not hide the others (a hidden correspondent would escape the read
// policy).
func parseAddrs(v string) []Address {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	p := netmail.AddressParser{WordDecoder: headerDecoder()}
	list, err := p.ParseList(v)
	if err != nil {
		list = nil
		for _, piece := range strings.Split(v, ",") {
			if a, err := p.Parse(piece); err == nil {
				list = append(list, a)
			} else if at := strings.IndexByte(piece, '@'); at > 0 {
				// Keep a bare address out of a mangled entry.
				f := strings.FieldsFunc(piece, func(r rune) bool { return r == '<' || r == '>' || r == ' ' || r == '"' })
				for _, w := range f {
					if strings.Contains(w, "@") {
						list = append(list, &netmail.Address{Address: w})
					}
				}
			}
		}
	}
	out := make([]Address, 0, len(list))
	for _, a := range list {
		out = append(out, Address{Name: a.Name, Addr: strings.ToLower(a.Address)})
	}
	return out
}

// FlagsSince implements Backend: a Maildir has no mod-sequences.
func (m *Maildir) FlagsSince(context.Context, string, uint32, uint64) ([]FlagUpdate, error) {
	return nil, ErrNoModSeq
}

// Raw implements Backend.
func (m *Maildir) Raw(ctx context.Context, path string, uidValidity uint32, uid uint32, max int64) ([]byte, bool, error) {
	msgs, err := m.scanChecked(path, uidValidity)
	if err != nil {
		return nil, false, err
	}
	for _, msg := range msgs {
		if msg.uid != uid {
			continue
		}
		f, err := os.Open(msg.file)
		if err != nil {
			return nil, false, ErrNoMessage
		}
		defer f.Close()
		buf, err := io.ReadAll(io.LimitReader(f, max+1))
		if err != nil {
			return nil, false, fmt.Errorf("mail account %q: read message %d: %w", m.account, uid, err)
		}
		if int64(len(buf)) > max {
			return buf[:max], true, nil
		}
		return buf, false, nil
	}
	return nil, false, ErrNoMessage
}

// SetFlags implements Backend: a Maildir account is read-only.
func (m *Maildir) SetFlags(context.Context, string, uint32, []uint32, []string, bool) error {
	return ErrReadOnly
}

// Move implements Backend: a Maildir account is read-only.
func (m *Maildir) Move(context.Context, string, uint32, []uint32, string) error { return ErrReadOnly }

// Append implements Backend: a Maildir account is read-only.
func (m *Maildir) Append(context.Context, string, []byte, []string, time.Time) (uint32, error) {
	return 0, ErrReadOnly
}

var _ Backend = (*Maildir)(nil)
