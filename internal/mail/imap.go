package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"

	"github.com/tidings-mcp/tidings/internal/account"
)

// Timeout bounds dialling an IMAP server and the TLS handshake; one
// command is bounded by the caller's context (the connection is closed
// when it ends).
const Timeout = 30 * time.Second

// fetchBatch bounds the UIDs of one UID FETCH, so a 10k-message sync is
// many moderate commands rather than one huge response.
const fetchBatch = 500

// IMAPConfig is one [[mail.accounts]] entry's IMAP half as the backend
// needs it.
type IMAPConfig struct {
	Account string
	// URL follows the URL rule of internal/account (imaps://,
	// imap+starttls://, imap:// to loopback only).
	URL      string
	Username string
	// Auth is "password" (LOGIN) or "xoauth2" (SASL XOAUTH2; Password
	// then yields an OAuth access token).
	Auth string
	// Password resolves the secret when the first connection needs it.
	Password func(ctx context.Context) (account.Secret, error)
	CAFile   string
}

// IMAP is an IMAP account. One connection, opened on first use and shared
// by every call under a mutex: IMAP has one selected mailbox per
// connection, so calls are serialized. Reads EXAMINE (read-only select)
// and fetch BODY.PEEK[], so no read ever sets \Seen; writes SELECT.
type IMAP struct {
	cfg  IMAPConfig
	ep   account.Endpoint
	tlsc *tls.Config

	mu       sync.Mutex
	c        *imapclient.Client
	selected string // server name of the selected mailbox
	rw       bool   // selected with SELECT (true) or EXAMINE
	sel      *imap.SelectData
	delim    rune
	names    map[string]string // "/" path -> server name
}

// NewIMAP checks the account's URL and TLS settings; nothing is contacted
// until the first call.
func NewIMAP(cfg IMAPConfig) (*IMAP, error) {
	ep, err := account.ParseEndpoint(cfg.URL, account.IMAP)
	if err != nil {
		return nil, fmt.Errorf("mail account %q: imap: %w", cfg.Account, err)
	}
	tlsc, err := ep.TLSConfig(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("mail account %q: %w", cfg.Account, err)
	}
	switch cfg.Auth {
	case "", "password", "xoauth2":
	default:
		return nil, fmt.Errorf("mail account %q: auth %q: want \"password\" or \"xoauth2\"", cfg.Account, cfg.Auth)
	}
	return &IMAP{cfg: cfg, ep: ep, tlsc: tlsc}, nil
}

// Account implements Backend.
func (b *IMAP) Account() string { return b.cfg.Account }

// Kind implements Backend.
func (b *IMAP) Kind() string { return "imap" }

// Close implements Backend.
func (b *IMAP) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drop()
	return nil
}

// drop closes the connection (mu held).
func (b *IMAP) drop() {
	if b.c != nil {
		_ = b.c.Close()
	}
	b.c, b.selected, b.sel = nil, "", nil
}

// do runs fn on a connected, logged-in client under the mutex. When ctx
// ends mid-command the connection is closed (imapclient takes no
// context), and any failure drops the connection so the next call
// starts clean rather than on a connection in an unknown state.
func (b *IMAP) do(ctx context.Context, fn func(c *imapclient.Client) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.c == nil {
		c, err := b.connect(ctx)
		if err != nil {
			return fmt.Errorf("mail account %q: %w", b.cfg.Account, err)
		}
		b.c = c
	}
	c := b.c
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	err := fn(c)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		var ierr *imap.Error
		if !errors.As(err, &ierr) || ctx.Err() != nil {
			// Not a tagged NO/BAD: the connection may be broken.
			b.drop()
		}
		return fmt.Errorf("mail account %q: %w", b.cfg.Account, err)
	}
	return nil
}

// connect dials per the URL rule and logs in.
func (b *IMAP) connect(ctx context.Context) (*imapclient.Client, error) {
	d := b.ep.Dialer(Timeout)
	conn, err := d.DialContext(ctx, "tcp", b.ep.Address())
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", b.ep.Address(), err)
	}
	opts := &imapclient.Options{TLSConfig: b.tlsc, WordDecoder: headerDecoder()}
	var c *imapclient.Client
	switch b.ep.TLS {
	case account.TLSImplicit:
		tc := tls.Client(conn, b.tlsc)
		hctx, cancel := context.WithTimeout(ctx, Timeout)
		err = tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("TLS with %s: %w", b.ep.Address(), err)
		}
		c = imapclient.New(tc, opts)
	case account.TLSStartTLS:
		c, err = imapclient.NewStartTLS(conn, opts)
		if err != nil {
			return nil, fmt.Errorf("STARTTLS with %s (required by the imap+starttls URL; nothing was sent in plain text): %w", b.ep.Address(), err)
		}
	default:
		c = imapclient.New(conn, opts)
	}
	if err := c.WaitGreeting(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("greeting from %s: %w", b.ep.Address(), err)
	}
	if c.State() == imap.ConnStateNotAuthenticated {
		if err := b.login(ctx, c); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (b *IMAP) login(ctx context.Context, c *imapclient.Client) error {
	if b.cfg.Password == nil {
		return errors.New("no password source: set password_env or password_cmd")
	}
	sec, err := b.cfg.Password(ctx)
	if err != nil {
		return err
	}
	if b.cfg.Auth == "xoauth2" {
		if err := c.Authenticate(xoauth2{user: b.cfg.Username, token: sec.Reveal()}); err != nil {
			return fmt.Errorf("XOAUTH2 login as %s: %w", b.cfg.Username, err)
		}
		return nil
	}
	if err := c.Login(b.cfg.Username, sec.Reveal()).Wait(); err != nil {
		return fmt.Errorf("login as %s: %w", b.cfg.Username, err)
	}
	return nil
}

// xoauth2 is the SASL XOAUTH2 mechanism (Google's and Microsoft's
// bearer-token login): one initial response, and on failure the server's
// JSON challenge is answered with an empty line so it sends the tagged NO.
type xoauth2 struct{ user, token string }

var _ sasl.Client = xoauth2{}

func (x xoauth2) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + x.user + "\x01auth=Bearer " + x.token + "\x01\x01"), nil
}

func (x xoauth2) Next([]byte) ([]byte, error) { return []byte{}, nil }

// serverName maps a "/" path to the server's mailbox name.
func (b *IMAP) serverName(path string) string {
	if n, ok := b.names[path]; ok {
		return n
	}
	if b.delim != 0 && b.delim != '/' {
		return strings.ReplaceAll(path, "/", string(b.delim))
	}
	return path
}

// selectBox selects name read-only (EXAMINE) or read-write and checks
// the caller's UIDVALIDITY.
func (b *IMAP) selectBox(c *imapclient.Client, path string, rw bool, uidValidity uint32) (*imap.SelectData, error) {
	name := b.serverName(path)
	if b.selected != name || b.rw != rw || b.sel == nil {
		opts := &imap.SelectOptions{ReadOnly: !rw, CondStore: c.Caps().Has(imap.CapCondStore)}
		sel, err := c.Select(name, opts).Wait()
		if err != nil {
			b.selected, b.sel = "", nil
			return nil, fmt.Errorf("open mailbox %q: %w", path, err)
		}
		b.selected, b.rw, b.sel = name, rw, sel
	} else {
		// Already selected: NOOP refreshes EXISTS/expunges cheaply.
		if err := c.Noop().Wait(); err != nil {
			return nil, err
		}
	}
	if uidValidity != 0 && b.sel.UIDValidity != uidValidity {
		return nil, ErrUIDValidity
	}
	return b.sel, nil
}

// Mailboxes implements Backend: LIST (with SPECIAL-USE when offered),
// then STATUS per selectable mailbox.
func (b *IMAP) Mailboxes(ctx context.Context) ([]Mailbox, error) {
	var out []Mailbox
	err := b.do(ctx, func(c *imapclient.Client) error {
		var lopts *imap.ListOptions
		if c.Caps().Has(imap.CapSpecialUse) {
			lopts = &imap.ListOptions{ReturnSpecialUse: true}
		}
		list, err := c.List("", "*", lopts).Collect()
		if err != nil {
			return fmt.Errorf("list mailboxes: %w", err)
		}
		names := map[string]string{}
		for _, l := range list {
			if l.Delim != 0 {
				b.delim = l.Delim
			}
		}
		slices.SortFunc(list, func(x, y *imap.ListData) int { return strings.Compare(x.Mailbox, y.Mailbox) })
		for _, l := range list {
			if hasAttr(l.Attrs, imap.MailboxAttrNoSelect) || hasAttr(l.Attrs, imap.MailboxAttrNonExistent) {
				continue
			}
			path := l.Mailbox
			if l.Delim != 0 && l.Delim != '/' {
				path = strings.ReplaceAll(path, string(l.Delim), "/")
			}
			names[path] = l.Mailbox
			m, err := b.status(c, path, l.Mailbox)
			if err != nil {
				return err
			}
			m.SpecialUse = specialUse(l.Attrs, path)
			out = append(out, m)
		}
		b.names = names
		return nil
	})
	return out, err
}

func hasAttr(attrs []imap.MailboxAttr, a imap.MailboxAttr) bool {
	for _, x := range attrs {
		if strings.EqualFold(string(x), string(a)) {
			return true
		}
	}
	return false
}

// specialUse reads RFC 6154 attributes; a server that marks none gets
// the conventional names guessed (INBOX's siblings "Sent", "Drafts", ...),
// because drafts and the Sent copy need somewhere to go.
func specialUse(attrs []imap.MailboxAttr, path string) []string {
	var out []string
	for _, a := range attrs {
		for _, s := range []string{Drafts, Sent, Trash, Archive, Junk, All} {
			if strings.EqualFold(string(a), s) {
				out = append(out, s)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	if s := guessSpecialUse(path); s != "" {
		return []string{s}
	}
	return nil
}

// guessSpecialUse maps a conventional top-level name to its role.
func guessSpecialUse(path string) string {
	switch strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(path, "INBOX/"), "INBOX.")) {
	case "drafts", "draft":
		return Drafts
	case "sent", "sent messages", "sent items", "sent mail":
		return Sent
	case "trash", "deleted messages", "deleted items":
		return Trash
	case "archive", "archives":
		return Archive
	case "junk", "spam":
		return Junk
	}
	return ""
}

func (b *IMAP) status(c *imapclient.Client, path, name string) (Mailbox, error) {
	opts := &imap.StatusOptions{NumMessages: true, UIDNext: true, UIDValidity: true, NumUnseen: true,
		HighestModSeq: c.Caps().Has(imap.CapCondStore)}
	st, err := c.Status(name, opts).Wait()
	if err != nil {
		return Mailbox{}, fmt.Errorf("status of %q: %w", path, err)
	}
	m := Mailbox{Account: b.cfg.Account, Path: path, UIDValidity: st.UIDValidity, UIDNext: uint32(st.UIDNext),
		HighestModSeq: st.HighestModSeq}
	if st.NumMessages != nil {
		m.Messages = int(*st.NumMessages)
	}
	if st.NumUnseen != nil {
		m.Unseen = int(*st.NumUnseen)
	}
	return m, nil
}

// Status implements Backend.
func (b *IMAP) Status(ctx context.Context, path string) (Mailbox, error) {
	var m Mailbox
	err := b.do(ctx, func(c *imapclient.Client) error {
		var err error
		m, err = b.status(c, path, b.serverName(path))
		m.SpecialUse = specialUse(nil, path)
		return err
	})
	return m, err
}

// UIDs implements Backend (UID SEARCH ALL in an EXAMINEd mailbox).
func (b *IMAP) UIDs(ctx context.Context, path string, uidValidity uint32) ([]uint32, error) {
	var out []uint32
	err := b.do(ctx, func(c *imapclient.Client) error {
		if _, err := b.selectBox(c, path, false, uidValidity); err != nil {
			return err
		}
		data, err := c.UIDSearch(&imap.SearchCriteria{}, nil).Wait()
		if err != nil {
			return fmt.Errorf("list UIDs of %q: %w", path, err)
		}
		for _, u := range data.AllUIDs() {
			out = append(out, uint32(u))
		}
		slices.Sort(out)
		return nil
	})
	return out, err
}

// Summaries implements Backend: ENVELOPE, FLAGS, INTERNALDATE, size (and
// MODSEQ with CONDSTORE) in batches.
func (b *IMAP) Summaries(ctx context.Context, path string, uidValidity uint32, uids []uint32) ([]Summary, error) {
	byUID := map[uint32]Summary{}
	err := b.do(ctx, func(c *imapclient.Client) error {
		if _, err := b.selectBox(c, path, false, uidValidity); err != nil {
			return err
		}
		opts := &imap.FetchOptions{Envelope: true, Flags: true, InternalDate: true, RFC822Size: true, UID: true,
			ModSeq: c.Caps().Has(imap.CapCondStore)}
		for start := 0; start < len(uids); start += fetchBatch {
			msgs, err := c.Fetch(uidSet(uids[start:min(start+fetchBatch, len(uids))]), opts).Collect()
			if err != nil {
				return fmt.Errorf("fetch summaries in %q: %w", path, err)
			}
			for _, m := range msgs {
				byUID[uint32(m.UID)] = summaryOf(m)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(uids))
	for _, u := range uids {
		if s, ok := byUID[u]; ok {
			out = append(out, s)
		}
	}
	return out, nil
}

func uidSet(uids []uint32) imap.UIDSet {
	var s imap.UIDSet
	for _, u := range uids {
		s.AddNum(imap.UID(u))
	}
	return s
}

func summaryOf(m *imapclient.FetchMessageBuffer) Summary {
	s := Summary{UID: uint32(m.UID), ModSeq: m.ModSeq, Flags: flagStrings(m.Flags), InternalDate: m.InternalDate, Size: m.RFC822Size}
	if e := m.Envelope; e != nil {
		s.Date, s.Subject, s.MessageID = e.Date, e.Subject, e.MessageID
		s.From, s.Sender, s.ReplyTo = addrs(e.From), addrs(e.Sender), addrs(e.ReplyTo)
		s.To, s.Cc, s.Bcc = addrs(e.To), addrs(e.Cc), addrs(e.Bcc)
		if len(e.InReplyTo) > 0 {
			s.InReplyTo = e.InReplyTo[0]
		}
	}
	return s
}

func addrs(in []imap.Address) []Address {
	var out []Address
	for _, a := range in {
		if a.IsGroupStart() || a.IsGroupEnd() {
			continue
		}
		out = append(out, Address{Name: a.Name, Addr: a.Addr()})
	}
	return out
}

func flagStrings(fs []imap.Flag) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, string(f))
	}
	return out
}

func imapFlags(fs []string) []imap.Flag {
	out := make([]imap.Flag, 0, len(fs))
	for _, f := range fs {
		out = append(out, imap.Flag(f))
	}
	return out
}

// FlagsSince implements Backend (FETCH 1:* (FLAGS) (CHANGEDSINCE m)).
func (b *IMAP) FlagsSince(ctx context.Context, path string, uidValidity uint32, modSeq uint64) ([]FlagUpdate, error) {
	var out []FlagUpdate
	err := b.do(ctx, func(c *imapclient.Client) error {
		if !c.Caps().Has(imap.CapCondStore) {
			return ErrNoModSeq
		}
		if _, err := b.selectBox(c, path, false, uidValidity); err != nil {
			return err
		}
		var all imap.UIDSet
		all.AddRange(1, 0)
		msgs, err := c.Fetch(all, &imap.FetchOptions{UID: true, Flags: true, ModSeq: true, ChangedSince: modSeq}).Collect()
		if err != nil {
			return fmt.Errorf("fetch changed flags in %q: %w", path, err)
		}
		for _, m := range msgs {
			out = append(out, FlagUpdate{UID: uint32(m.UID), ModSeq: m.ModSeq, Flags: flagStrings(m.Flags)})
		}
		slices.SortFunc(out, func(x, y FlagUpdate) int { return int(x.UID) - int(y.UID) })
		return nil
	})
	return out, err
}

// Raw implements Backend: BODY.PEEK[]<0.max+1> so \Seen is never set and
// no more than max+1 bytes cross the wire.
func (b *IMAP) Raw(ctx context.Context, path string, uidValidity uint32, uid uint32, max int64) ([]byte, bool, error) {
	var raw []byte
	var truncated bool
	err := b.do(ctx, func(c *imapclient.Client) error {
		if _, err := b.selectBox(c, path, false, uidValidity); err != nil {
			return err
		}
		sec := &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: max + 1}}
		msgs, err := c.Fetch(uidSet([]uint32{uid}), &imap.FetchOptions{UID: true, RFC822Size: true,
			BodySection: []*imap.FetchItemBodySection{sec}}).Collect()
		if err != nil {
			return fmt.Errorf("fetch message %d in %q: %w", uid, path, err)
		}
		for _, m := range msgs {
			if uint32(m.UID) != uid {
				continue
			}
			for _, s := range m.BodySection {
				raw = s.Bytes
			}
			truncated = int64(len(raw)) > max || m.RFC822Size > max
			if int64(len(raw)) > max {
				raw = raw[:max]
			}
			return nil
		}
		return ErrNoMessage
	})
	return raw, truncated, err
}

// ErrNoMessage is returned when a UID names no message in the mailbox.
var ErrNoMessage = errors.New("no such message (it may have been moved or deleted)")

// SetFlags implements Backend (UID STORE +/-FLAGS.SILENT).
func (b *IMAP) SetFlags(ctx context.Context, path string, uidValidity uint32, uids []uint32, flags []string, add bool) error {
	return b.do(ctx, func(c *imapclient.Client) error {
		if _, err := b.selectBox(c, path, true, uidValidity); err != nil {
			return err
		}
		op := imap.StoreFlagsAdd
		if !add {
			op = imap.StoreFlagsDel
		}
		if err := c.Store(uidSet(uids), &imap.StoreFlags{Op: op, Silent: true, Flags: imapFlags(flags)}, nil).Close(); err != nil {
			return fmt.Errorf("set flags in %q: %w", path, err)
		}
		return nil
	})
}

// ErrNoSafeMove is returned by Move on a server with neither MOVE nor
// UIDPLUS: the COPY fallback would have to EXPUNGE the whole mailbox,
// deleting every other message already marked \Deleted.
var ErrNoSafeMove = errors.New("the mail server offers neither MOVE nor UIDPLUS, so a move cannot be done without expunging other deleted messages")

// Move implements Backend: UID MOVE, or UID COPY + STORE \Deleted + UID
// EXPUNGE (UIDPLUS) so only the moved messages are expunged.
func (b *IMAP) Move(ctx context.Context, path string, uidValidity uint32, uids []uint32, dest string) error {
	return b.do(ctx, func(c *imapclient.Client) error {
		if !c.Caps().Has(imap.CapMove) && !c.Caps().Has(imap.CapUIDPlus) && !c.Caps().Has(imap.CapIMAP4rev2) {
			return ErrNoSafeMove
		}
		if _, err := b.selectBox(c, path, true, uidValidity); err != nil {
			return err
		}
		if _, err := c.Move(uidSet(uids), b.serverName(dest)).Wait(); err != nil {
			return fmt.Errorf("move from %q to %q: %w", path, dest, err)
		}
		return nil
	})
}

// Append implements Backend.
func (b *IMAP) Append(ctx context.Context, path string, msg []byte, flags []string, date time.Time) (uint32, error) {
	var uid uint32
	err := b.do(ctx, func(c *imapclient.Client) error {
		cmd := c.Append(b.serverName(path), int64(len(msg)), &imap.AppendOptions{Flags: imapFlags(flags), Time: date})
		if _, err := cmd.Write(msg); err != nil {
			return fmt.Errorf("append to %q: %w", path, err)
		}
		if err := cmd.Close(); err != nil {
			return fmt.Errorf("append to %q: %w", path, err)
		}
		data, err := cmd.Wait()
		if err != nil {
			return fmt.Errorf("append to %q: %w", path, err)
		}
		uid = uint32(data.UID)
		// The selected mailbox's state is stale after an append into it.
		b.sel = nil
		return nil
	})
	return uid, err
}

var _ Backend = (*IMAP)(nil)
