package mail

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/filesafe"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/policy/redact"
	"github.com/tidings-mcp/tidings/internal/scope"
)

// The Mail service's tools (docs/tools.md, "Mail"). Every tool resolves
// its mailbox through the scope (mail_accounts, mail_mailboxes), applies
// the read policy to every message it touches (a hidden message reads as
// one that does not exist), and sends every third-party string through
// internal/output: names and subjects as one-line names (subjects also
// redacted), bodies and sources redacted and wrapped as untrusted.

// body is the output boundary with every redaction class: a 2FA code in
// a mail is masked like one in a message.
var body = output.New(redact.Default())

// Read limits.
const (
	// maxRaw bounds the bytes mail_get_email and mail_save_attachment read
	// of one message.
	maxRaw = 64 << 20
	// defaultChars and maxChars bound mail_get_email's body.
	defaultChars = 20000
	maxChars     = 200000
)

var (
	listLimit   = coerce.IntSpec{Name: "limit", Default: 25, Min: 1, Max: 100, Clamp: true}
	charsSpec   = coerce.IntSpec{Name: "max_chars", Default: defaultChars, Min: 100, Max: maxChars, Clamp: true}
	sourceBytes = coerce.IntSpec{Name: "max_bytes", Default: 64 << 10, Min: 1024, Max: 512 << 10, Clamp: true}
	uidSpec     = coerce.IntSpec{Name: "uid", Min: 1, Max: 1<<32 - 1}
)

// Tools returns the mail tools over st.
func Tools(st *Store) []mcpserver.Tool {
	return []mcpserver.Tool{
		listAccountsTool(st), listMailboxesTool(st), getEmailsTool(st), getEmailTool(st), getSourceTool(st),
		saveAttachmentTool(st), moveTool(st), markReadTool(st), flagTool(st), trashTool(st),
		createDraftTool(st), replyDraftTool(st),
	}
}

// located is a resolved mailbox and its backend.
type located struct {
	mb Mailbox
	b  Backend
}

// scopedListing lists the mailboxes of the accounts in scope and checks
// the scope against them.
func scopedListing(ctx context.Context, st *Store, account string) ([]Mailbox, scope.ScopedRows, []string, error) {
	sc, err := scope.FromContext(ctx)
	if err != nil {
		return nil, scope.ScopedRows{}, nil, err
	}
	var accounts []string
	if vals, in := sc.Values(scope.MailAccounts); in {
		accounts = vals
	}
	if a := strings.TrimSpace(account); a != "" {
		if accounts != nil && !slices.ContainsFunc(accounts, func(v string) bool { return scope.Fold(v) == scope.Fold(a) }) {
			return nil, scope.ScopedRows{}, nil, scope.Violationf("mail account %q is outside this client's scope", a)
		}
		if _, err := st.Backend(a); err != nil {
			return nil, scope.ScopedRows{}, nil, err
		}
		accounts = []string{a}
	}
	l := st.Mailboxes(ctx, accounts)
	sr := sc.Rows(scope.Mail, Rows(l.Mailboxes))
	sr.Noun = "mailbox"
	if a := strings.TrimSpace(account); a != "" {
		// Only this account was listed: the scope's values for other
		// accounts are not this call's business (they would otherwise
		// read as naming nothing).
		sr.Account.Values = onlyAccount(sr.Account, a, false)
		sr.Name.Values = onlyAccount(sr.Name, a, true)
		if sr.Name.InForce() && len(sr.Name.Values) == 0 {
			return nil, scope.ScopedRows{}, nil, scope.Violationf("mail account %q is outside this client's scope", a)
		}
	}
	return l.Mailboxes, sr, quoteAll(l.Problems), nil
}

// onlyAccount keeps the values of an access that concern account (the
// account itself, or with paths its "Account/..." values); nil stays nil.
func onlyAccount(acc scope.Access, account string, paths bool) []string {
	if !acc.InForce() {
		return nil
	}
	out := []string{}
	for _, v := range acc.Values {
		a := v
		if paths {
			a, _, _ = strings.Cut(v, "/")
		}
		if scope.Fold(a) == scope.Fold(account) {
			out = append(out, v)
		}
	}
	return out
}

// locate resolves a tool's account + mailbox: by path, then by a unique
// leaf name, among the mailboxes in scope; a mailbox that exists only
// outside the scope is a violation, worded the same as one that does not
// exist outside it.
func locate(ctx context.Context, st *Store, account, mailbox string) (located, error) {
	mbs, sr, problems, err := scopedListing(ctx, st, account)
	if err != nil {
		return located{}, err
	}
	allowed, err := sr.Allowed()
	if err != nil {
		return located{}, err
	}
	in := make([]Mailbox, len(allowed))
	for k, i := range allowed {
		in[k] = mbs[i]
	}
	if sc, _ := scope.FromContext(ctx); sc.Unrestricted() {
		in = mbs
	}
	i, err := ResolveMailbox(in, account, mailbox)
	if err != nil {
		if _, errAll := ResolveMailbox(mbs, account, mailbox); errAll == nil {
			return located{}, scope.Violationf("mailbox %q is outside this client's scope", strings.TrimSpace(mailbox))
		}
		if len(problems) > 0 {
			return located{}, fmt.Errorf("%v (some accounts could not be listed: %s)", err, strings.Join(problems, "; "))
		}
		return located{}, err
	}
	b, err := st.Backend(in[i].Account)
	if err != nil {
		return located{}, err
	}
	return located{mb: in[i], b: b}, nil
}

// special finds the account's mailbox with a special-use attribute among
// those in scope.
func special(ctx context.Context, st *Store, account, use string) (located, error) {
	// Every caller writes into the mailbox it finds: a read-only account
	// is refused as such, not as one lacking Drafts or Trash.
	if b, err := st.Backend(account); err == nil && readOnlyBackend(b) {
		return located{}, writeErr(ErrReadOnly)
	}
	mbs, sr, _, err := scopedListing(ctx, st, account)
	if err != nil {
		return located{}, err
	}
	allowed, err := sr.Allowed()
	if err != nil {
		return located{}, err
	}
	if sc, _ := scope.FromContext(ctx); sc.Unrestricted() {
		allowed = make([]int, len(mbs))
		for i := range mbs {
			allowed[i] = i
		}
	}
	for _, i := range allowed {
		if slices.Contains(mbs[i].SpecialUse, use) {
			b, err := st.Backend(mbs[i].Account)
			if err != nil {
				return located{}, err
			}
			return located{mb: mbs[i], b: b}, nil
		}
	}
	return located{}, fmt.Errorf("mail account %q has no %s mailbox this client may use", account, strings.TrimPrefix(use, `\`))
}

// visibleSummary reads one message's summary; a missing or hidden one is
// ErrNotFound.
func visibleSummary(ctx context.Context, st *Store, loc located, uid uint32) (Summary, error) {
	sums, err := loc.b.Summaries(ctx, loc.mb.Path, loc.mb.UIDValidity, []uint32{uid})
	if err != nil {
		return Summary{}, err
	}
	if len(sums) == 0 || !st.Visible(ctx, sums[0]) {
		return Summary{}, ErrNotFound
	}
	return sums[0], nil
}

func quoteAll(s []string) []string {
	for i := range s {
		s[i] = output.Name(s[i])
	}
	return s
}

func addrOut(a Address) string {
	if a.Name != "" {
		return output.Name(a.Name + " <" + a.Addr + ">")
	}
	return output.Name(a.Addr)
}

func addrsOut(l []Address) []string {
	var out []string
	for _, a := range l {
		out = append(out, addrOut(a))
	}
	return out
}

func uidOf(n coerce.Number) (uint32, error) {
	v, err := coerce.Int(n, uidSpec)
	if err != nil {
		return 0, err
	}
	return uint32(v), nil
}

func uidsOf(ns []coerce.Number) ([]uint32, error) {
	if len(ns) == 0 {
		return nil, errors.New("uids is required: the uid values mail_get_emails lists")
	}
	if len(ns) > 500 {
		return nil, errors.New("at most 500 uids per call")
	}
	var out []uint32
	for _, n := range ns {
		u, err := uidOf(n)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out, nil
}

// checkVisible refuses a batch holding a message that is missing or
// hidden, naming its uid, before anything is changed.
func checkVisible(ctx context.Context, st *Store, loc located, uids []uint32) error {
	sums, err := loc.b.Summaries(ctx, loc.mb.Path, loc.mb.UIDValidity, uids)
	if err != nil {
		return err
	}
	ok := map[uint32]bool{}
	for _, s := range sums {
		ok[s.UID] = st.Visible(ctx, s)
	}
	for _, u := range uids {
		if !ok[u] {
			return fmt.Errorf("uid %d: %w; nothing was changed", u, ErrNotFound)
		}
	}
	return nil
}

// writeErr words a backend's refusal of a write.
func writeErr(err error) error {
	if errors.Is(err, ErrReadOnly) {
		return errors.New("this mail account is read-only (a Maildir, or Mail.app's local store off macOS): moving, flagging and drafts need an IMAP account")
	}
	return err
}

// readOnlyBackend reports whether a backend refuses every write
// (docs/tools.md, "Mail"): a Maildir, and Mail.app's local store off macOS
// (on macOS it is written through Mail.app, which says so by Writable).
func readOnlyBackend(b Backend) bool {
	if w, ok := b.(interface{ Writable() bool }); ok {
		return !w.Writable()
	}
	return b.Kind() == "maildir" || b.Kind() == "applemail"
}

// readOnlyAccount is readOnlyBackend of the account's backend; an account
// without one (SMTP only) is not read-only.
func (st *Store) readOnlyAccount(name string) bool {
	b, err := st.Backend(name)
	return err == nil && readOnlyBackend(b)
}

// --- mail_list_accounts ---

type accountOut struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	From     []string `json:"from,omitempty"`
	CanSend  bool     `json:"can_send"`
	ReadOnly bool     `json:"read_only,omitempty"`
}

type listAccountsOut struct {
	Accounts []accountOut `json:"accounts"`
}

func listAccountsTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_list_accounts", Title: "List mail accounts",
		Description: "List the mail accounts this client may read: name, kind (imap or maildir), the addresses it may send as.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[struct{}, listAccountsOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, listAccountsOut, error) {
			sc, err := scope.FromContext(ctx)
			if err != nil {
				return nil, listAccountsOut{}, err
			}
			vals, in := sc.Values(scope.MailAccounts)
			out := listAccountsOut{Accounts: []accountOut{}}
			for _, a := range st.Accounts {
				if in && !slices.ContainsFunc(vals, func(v string) bool { return scope.Fold(v) == scope.Fold(a.Name) }) {
					continue
				}
				out.Accounts = append(out.Accounts, accountOut{Name: output.Name(a.Name), Kind: a.Kind, From: quoteAll(slices.Clone(a.From)),
					CanSend: a.CanSend, ReadOnly: st.readOnlyAccount(a.Name)})
			}
			return nil, out, nil
		}
	})
}

// --- mail_list_mailboxes ---

type mailboxOut struct {
	Path       string   `json:"path"`
	Account    string   `json:"account"`
	Mailbox    string   `json:"mailbox"`
	SpecialUse []string `json:"special_use,omitempty"`
	Messages   int      `json:"messages"`
	Unseen     int      `json:"unseen"`
}

type listMailboxesIn struct {
	Account string `json:"account,omitempty" jsonschema:"an account from mail_list_accounts (default: all in scope)"`
}

type listMailboxesOut struct {
	Mailboxes []mailboxOut `json:"mailboxes"`
	Problems  []string     `json:"problems,omitempty"`
}

func listMailboxesTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_list_mailboxes", Title: "List mailboxes",
		Description: "List the mailboxes this client may read with message and unseen counts. path is Account/Mailbox; mailbox is what the other mail tools take.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[listMailboxesIn, listMailboxesOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in listMailboxesIn) (*mcp.CallToolResult, listMailboxesOut, error) {
			mbs, sr, problems, err := scopedListing(ctx, st, in.Account)
			if err != nil {
				return nil, listMailboxesOut{}, err
			}
			idx, err := sr.Allowed()
			if err != nil {
				return nil, listMailboxesOut{}, err
			}
			if len(idx) == 0 && len(problems) > 0 {
				return nil, listMailboxesOut{}, fmt.Errorf("no mailbox could be listed: %s", strings.Join(problems, "; "))
			}
			out := listMailboxesOut{Mailboxes: []mailboxOut{}, Problems: problems}
			for _, i := range idx {
				m := mbs[i]
				out.Mailboxes = append(out.Mailboxes, mailboxOut{Path: output.Name(m.Account + "/" + m.Path), Account: output.Name(m.Account),
					Mailbox: output.Name(m.Path), SpecialUse: m.SpecialUse, Messages: m.Messages, Unseen: m.Unseen})
			}
			return nil, out, nil
		}
	})
}

// --- mail_get_emails ---

type getEmailsIn struct {
	Account    string        `json:"account,omitempty" jsonschema:"account name (default: the only one holding the mailbox)"`
	Mailbox    string        `json:"mailbox,omitempty" jsonschema:"mailbox path or unique name (default INBOX)"`
	UnreadOnly bool          `json:"unread_only,omitempty"`
	Limit      coerce.Number `json:"limit,omitzero" jsonschema:"1-100 (default 25)"`
	Cursor     string        `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

// emailRow is one message of a listing.
type emailRow struct {
	UID     uint32   `json:"uid"`
	Date    string   `json:"date,omitempty"`
	From    string   `json:"from,omitempty"`
	To      []string `json:"to,omitempty"`
	Subject string   `json:"subject"`
	Unread  bool     `json:"unread"`
	Flagged bool     `json:"flagged,omitempty"`
	Size    int64    `json:"size"`
}

type getEmailsOut struct {
	Account string         `json:"account"`
	Mailbox string         `json:"mailbox"`
	Emails  []emailRow     `json:"emails"`
	Page    mcpserver.Page `json:"page"`
	Hidden  int            `json:"hidden,omitempty"`
}

func rowOf(s Summary) emailRow {
	r := emailRow{UID: s.UID, Subject: body.Line(s.Subject), Unread: !slices.Contains(s.Flags, Seen),
		Flagged: slices.Contains(s.Flags, Flagged), Size: s.Size}
	d := s.Date
	if d.IsZero() {
		d = s.InternalDate
	}
	if !d.IsZero() {
		r.Date = d.Format(time.RFC3339)
	}
	if len(s.From) > 0 {
		r.From = addrOut(s.From[0])
	}
	to := addrsOut(s.To)
	if len(to) > 3 {
		to = append(to[:3], fmt.Sprintf("(+%d more)", len(to)-3))
	}
	r.To = to
	return r
}

func getEmailsTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_get_emails", Title: "List emails in a mailbox",
		Description: "List a mailbox's messages newest first (uid, date, from, subject, unread). Read a message with mail_get_email. Reading never marks mail as read.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true, OutputSchema: emailsSchema,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[getEmailsIn, getEmailsOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in getEmailsIn) (*mcp.CallToolResult, getEmailsOut, error) {
			limit, err := coerce.Int(in.Limit, listLimit)
			if err != nil {
				return nil, getEmailsOut{}, err
			}
			below := uint32(0)
			if c := strings.TrimSpace(in.Cursor); c != "" {
				n, err := strconv.ParseUint(c, 10, 32)
				if err != nil || n == 0 {
					return nil, getEmailsOut{}, errors.New("cursor must be the next_cursor of a previous page")
				}
				below = uint32(n)
			}
			loc, err := locate(ctx, st, in.Account, in.Mailbox)
			if err != nil {
				return nil, getEmailsOut{}, err
			}
			uids, err := loc.b.UIDs(ctx, loc.mb.Path, loc.mb.UIDValidity)
			if err != nil {
				return nil, getEmailsOut{}, err
			}
			slices.Reverse(uids)
			if below > 0 {
				k := slices.IndexFunc(uids, func(u uint32) bool { return u < below })
				if k < 0 {
					k = len(uids)
				}
				uids = uids[k:]
			}
			out := getEmailsOut{Account: output.Name(loc.mb.Account), Mailbox: output.Name(loc.mb.Path), Emails: []emailRow{}}
			next := ""
			const batch = 50
		scan:
			for start := 0; start < len(uids); start += batch {
				chunk := uids[start:min(start+batch, len(uids))]
				sums, err := loc.b.Summaries(ctx, loc.mb.Path, loc.mb.UIDValidity, chunk)
				if err != nil {
					return nil, getEmailsOut{}, err
				}
				for _, s := range sums {
					if len(out.Emails) == limit {
						next = strconv.FormatUint(uint64(out.Emails[len(out.Emails)-1].UID), 10)
						break scan
					}
					if !st.Visible(ctx, s) {
						out.Hidden++
						continue
					}
					if in.UnreadOnly && slices.Contains(s.Flags, Seen) {
						continue
					}
					out.Emails = append(out.Emails, rowOf(s))
				}
			}
			kept, page, err := mcpserver.Cut(out.Emails, 1024, func(n int) string { return strconv.FormatUint(uint64(out.Emails[n-1].UID), 10) })
			if err != nil {
				return nil, getEmailsOut{}, err
			}
			if len(kept) == len(out.Emails) && next != "" {
				page.Truncated, page.NextCursor = true, next
				page.Note = "more messages are older; pass next_cursor to continue"
			}
			out.Emails, out.Page = kept, page
			return nil, out, nil
		}
	})
}

// --- mail_get_email ---

type messageIn struct {
	Account string        `json:"account,omitempty" jsonschema:"account name (default: the only one holding the mailbox)"`
	Mailbox string        `json:"mailbox,omitempty" jsonschema:"mailbox path or unique name (default INBOX)"`
	UID     coerce.Number `json:"uid" jsonschema:"the uid from mail_get_emails"`
}

type getEmailIn struct {
	messageIn
	MaxChars coerce.Number `json:"max_chars,omitzero" jsonschema:"body length cap, 100-200000 (default 20000)"`
}

type attachmentOut struct {
	PartID      string `json:"part_id"`
	Name        string `json:"name,omitempty"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	Inline      bool   `json:"inline,omitempty"`
}

type getEmailOut struct {
	Account       string          `json:"account"`
	Mailbox       string          `json:"mailbox"`
	UID           uint32          `json:"uid"`
	Subject       string          `json:"subject"`
	From          []string        `json:"from,omitempty"`
	ReplyTo       []string        `json:"reply_to,omitempty"`
	To            []string        `json:"to,omitempty"`
	Cc            []string        `json:"cc,omitempty"`
	Date          string          `json:"date,omitempty"`
	MessageID     string          `json:"message_id,omitempty"`
	InReplyTo     string          `json:"in_reply_to,omitempty"`
	Flags         []string        `json:"flags"`
	Body          string          `json:"body"`
	BodyFromHTML  bool            `json:"body_from_html,omitempty"`
	BodyTruncated bool            `json:"body_truncated,omitempty"`
	Attachments   []attachmentOut `json:"attachments"`
	Complete      bool            `json:"complete"`
	Problems      []string        `json:"problems,omitempty"`
}

// readMessage reads and parses one visible message.
func readMessage(ctx context.Context, st *Store, in messageIn) (located, Summary, []byte, *Parsed, error) {
	uid, err := uidOf(in.UID)
	if err != nil {
		return located{}, Summary{}, nil, nil, err
	}
	loc, err := locate(ctx, st, in.Account, in.Mailbox)
	if err != nil {
		return located{}, Summary{}, nil, nil, err
	}
	sum, err := visibleSummary(ctx, st, loc, uid)
	if err != nil {
		return located{}, Summary{}, nil, nil, err
	}
	raw, truncated, err := loc.b.Raw(ctx, loc.mb.Path, loc.mb.UIDValidity, uid, maxRaw)
	if errors.Is(err, ErrNoMessage) {
		return located{}, Summary{}, nil, nil, ErrNotFound
	}
	if err != nil {
		return located{}, Summary{}, nil, nil, err
	}
	p, err := Parse(raw)
	if err != nil {
		return located{}, Summary{}, nil, nil, fmt.Errorf("uid %d cannot be read: %w", uid, err)
	}
	// The header the body came with is checked too: an envelope and a
	// header that disagree must not let a blocked correspondent through.
	if !st.Visible(ctx, p.Header) {
		return located{}, Summary{}, nil, nil, ErrNotFound
	}
	if truncated {
		p.Complete = false
		p.Problems = append(p.Problems, fmt.Sprintf("the message is larger than %d MiB; only its start was read", maxRaw>>20))
	}
	return loc, sum, raw, p, nil
}

func getEmailTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_get_email", Title: "Read an email",
		Description: "Read one message: headers, the text body (made from HTML when there is no plain text) and its attachments by part_id. Does not mark it read.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true, OutputSchema: emailSchema,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[getEmailIn, getEmailOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in getEmailIn) (*mcp.CallToolResult, getEmailOut, error) {
			chars, err := coerce.Int(in.MaxChars, charsSpec)
			if err != nil {
				return nil, getEmailOut{}, err
			}
			loc, sum, _, p, err := readMessage(ctx, st, in.messageIn)
			if err != nil {
				return nil, getEmailOut{}, err
			}
			h := p.Header
			out := getEmailOut{Account: output.Name(loc.mb.Account), Mailbox: output.Name(loc.mb.Path), UID: sum.UID,
				Subject: body.Line(h.Subject), From: addrsOut(h.From), ReplyTo: addrsOut(h.ReplyTo), To: addrsOut(h.To), Cc: addrsOut(h.Cc),
				MessageID: output.Name(h.MessageID), InReplyTo: output.Name(h.InReplyTo), Flags: sum.Flags,
				BodyFromHTML: p.FromHTML, BodyTruncated: p.TextTruncated, Attachments: []attachmentOut{},
				Complete: p.Complete, Problems: p.Problems}
			if !h.Date.IsZero() {
				out.Date = h.Date.Format(time.RFC3339)
			}
			text := p.Text
			if r := []rune(text); len(r) > chars {
				text, out.BodyTruncated = string(r[:chars]), true
			}
			out.Body = body.WrappedBody(text, nil)
			for _, a := range p.Attachments {
				out.Attachments = append(out.Attachments, attachmentOut{PartID: a.PartID, Name: output.Filename(a.Name),
					ContentType: output.Name(a.ContentType), Size: a.Size, Inline: a.Inline})
			}
			return nil, out, nil
		}
	})
}

// --- mail_get_source ---

type getSourceIn struct {
	messageIn
	MaxBytes coerce.Number `json:"max_bytes,omitzero" jsonschema:"1024-524288 (default 65536)"`
}

type getSourceOut struct {
	UID       uint32 `json:"uid"`
	Source    string `json:"source"`
	Bytes     int    `json:"bytes"`
	Truncated bool   `json:"truncated"`
}

func getSourceTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_get_source", Title: "Read an email's raw source",
		Description: "The raw RFC 822 source of one message, capped at max_bytes. Secrets such as one-time codes are masked here too.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[getSourceIn, getSourceOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in getSourceIn) (*mcp.CallToolResult, getSourceOut, error) {
			max, err := coerce.Int(in.MaxBytes, sourceBytes)
			if err != nil {
				return nil, getSourceOut{}, err
			}
			uid, err := uidOf(in.UID)
			if err != nil {
				return nil, getSourceOut{}, err
			}
			loc, err := locate(ctx, st, in.Account, in.Mailbox)
			if err != nil {
				return nil, getSourceOut{}, err
			}
			if _, err := visibleSummary(ctx, st, loc, uid); err != nil {
				return nil, getSourceOut{}, err
			}
			raw, truncated, err := loc.b.Raw(ctx, loc.mb.Path, loc.mb.UIDValidity, uid, int64(max))
			if errors.Is(err, ErrNoMessage) {
				return nil, getSourceOut{}, ErrNotFound
			}
			if err != nil {
				return nil, getSourceOut{}, err
			}
			// The header is checked again from the bytes themselves.
			if !st.Visible(ctx, SummaryFromHeader(headerBlock(raw))) {
				return nil, getSourceOut{}, ErrNotFound
			}
			src := strings.ToValidUTF8(string(raw), "\uFFFD")
			return nil, getSourceOut{UID: uid, Source: body.WrappedBody(src, nil), Bytes: len(raw), Truncated: truncated}, nil
		}
	})
}

// --- mail_save_attachment ---

type saveAttachmentIn struct {
	messageIn
	PartID      string `json:"part_id" jsonschema:"an attachment's part_id from mail_get_email"`
	Destination string `json:"destination" jsonschema:"absolute path of the file to write, inside the profile's file_dirs"`
	Overwrite   bool   `json:"overwrite,omitempty"`
}

type saveAttachmentOut struct {
	Destination string `json:"destination"`
	Bytes       int    `json:"bytes"`
	Name        string `json:"name,omitempty"`
	ContentType string `json:"content_type"`
	Overwrote   bool   `json:"overwrote"`
}

func saveAttachmentTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_save_attachment", Title: "Save an email attachment",
		Description: "Save one attachment (by part_id from mail_get_email) to a file inside the folders this client may write (file_dirs). Never overwrites unless asked.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true, WritesFiles: true,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
	}, func(d *mcpserver.Deps) mcp.ToolHandlerFor[saveAttachmentIn, saveAttachmentOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in saveAttachmentIn) (*mcp.CallToolResult, saveAttachmentOut, error) {
			var dirs []string
			if d != nil && d.Profile != nil {
				dirs = d.Profile.FileDirs
			}
			// The destination is checked before the message is read.
			if _, _, err := filesafe.CheckDestination(in.Destination, dirs); err != nil {
				return nil, saveAttachmentOut{}, err
			}
			if strings.TrimSpace(in.PartID) == "" {
				return nil, saveAttachmentOut{}, errors.New("part_id is required: take it from the attachments of mail_get_email")
			}
			_, _, raw, p, err := readMessage(ctx, st, in.messageIn)
			if err != nil {
				return nil, saveAttachmentOut{}, err
			}
			if !p.Complete && len(p.Attachments) == 0 {
				return nil, saveAttachmentOut{}, fmt.Errorf("no attachment could be read out of this message: %s", strings.Join(p.Problems, "; "))
			}
			a, data, err := Extract(raw, strings.TrimSpace(in.PartID))
			if errors.Is(err, ErrNoPart) {
				return nil, saveAttachmentOut{}, fmt.Errorf("the message has no attachment with part_id %s; mail_get_email lists them", output.Name(in.PartID))
			}
			if err != nil {
				return nil, saveAttachmentOut{}, err
			}
			dir, path, err := filesafe.CheckDestination(in.Destination, dirs)
			if err != nil {
				return nil, saveAttachmentOut{}, err
			}
			over, err := filesafe.WriteAtomic(dir, path, data, in.Overwrite)
			if err != nil {
				return nil, saveAttachmentOut{}, err
			}
			return nil, saveAttachmentOut{Destination: output.Name(path), Bytes: len(data), Name: output.Filename(a.Name),
				ContentType: output.Name(a.ContentType), Overwrote: over}, nil
		}
	})
}

// --- writes on messages: mail_move, mail_mark_read, mail_flag, mail_trash ---

type batchIn struct {
	Account string          `json:"account,omitempty" jsonschema:"account name (default: the only one holding the mailbox)"`
	Mailbox string          `json:"mailbox,omitempty" jsonschema:"mailbox path or unique name (default INBOX)"`
	UIDs    []coerce.Number `json:"uids" jsonschema:"uids from mail_get_emails (at most 500)"`
}

type batchOut struct {
	Account string   `json:"account"`
	Mailbox string   `json:"mailbox"`
	UIDs    []uint32 `json:"uids"`
	Done    string   `json:"done"`
	Target  string   `json:"target,omitempty"`
}

// batch resolves and checks a batch before a write.
func batch(ctx context.Context, st *Store, in batchIn) (located, []uint32, error) {
	uids, err := uidsOf(in.UIDs)
	if err != nil {
		return located{}, nil, err
	}
	loc, err := locate(ctx, st, in.Account, in.Mailbox)
	if err != nil {
		return located{}, nil, err
	}
	if err := checkVisible(ctx, st, loc, uids); err != nil {
		return located{}, nil, err
	}
	return loc, uids, nil
}

type moveIn struct {
	batchIn
	TargetMailbox string `json:"target_mailbox" jsonschema:"destination path or unique name in the same account"`
}

func moveTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_move", Title: "Move emails",
		Description: "Move messages to another mailbox of the same account.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[moveIn, batchOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in moveIn) (*mcp.CallToolResult, batchOut, error) {
			if strings.TrimSpace(in.TargetMailbox) == "" {
				return nil, batchOut{}, errors.New("target_mailbox is required")
			}
			loc, uids, err := batch(ctx, st, in.batchIn)
			if err != nil {
				return nil, batchOut{}, err
			}
			dest, err := locate(ctx, st, loc.mb.Account, in.TargetMailbox)
			if err != nil {
				return nil, batchOut{}, err
			}
			if dest.mb.Path == loc.mb.Path {
				return nil, batchOut{}, errors.New("the messages are already in that mailbox")
			}
			if err := loc.b.Move(ctx, loc.mb.Path, loc.mb.UIDValidity, uids, dest.mb.Path); err != nil {
				return nil, batchOut{}, writeErr(err)
			}
			return nil, batchOut{Account: output.Name(loc.mb.Account), Mailbox: output.Name(loc.mb.Path), UIDs: uids, Done: "moved",
				Target: output.Name(dest.mb.Account + "/" + dest.mb.Path)}, nil
		}
	})
}

type markReadIn struct {
	batchIn
	Read *bool `json:"read,omitempty" jsonschema:"true marks read (default), false unread"`
}

func markReadTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_mark_read", Title: "Mark emails read or unread",
		Description: "Mark messages read (or unread with read: false).",
		Toolset:     mcpserver.ToolsetMail, Bridged: true,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[markReadIn, batchOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in markReadIn) (*mcp.CallToolResult, batchOut, error) {
			read := in.Read == nil || *in.Read
			return setFlag(ctx, st, in.batchIn, Seen, read, map[bool]string{true: "marked read", false: "marked unread"}[read])
		}
	})
}

type flagIn struct {
	batchIn
	Flagged *bool `json:"flagged,omitempty" jsonschema:"true flags (default), false clears the flag"`
}

func flagTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_flag", Title: "Flag emails",
		Description: "Flag messages for follow-up (or clear the flag with flagged: false).",
		Toolset:     mcpserver.ToolsetMail, Bridged: true,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[flagIn, batchOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in flagIn) (*mcp.CallToolResult, batchOut, error) {
			on := in.Flagged == nil || *in.Flagged
			return setFlag(ctx, st, in.batchIn, Flagged, on, map[bool]string{true: "flagged", false: "unflagged"}[on])
		}
	})
}

func setFlag(ctx context.Context, st *Store, in batchIn, flag string, add bool, done string) (*mcp.CallToolResult, batchOut, error) {
	loc, uids, err := batch(ctx, st, in)
	if err != nil {
		return nil, batchOut{}, err
	}
	if err := loc.b.SetFlags(ctx, loc.mb.Path, loc.mb.UIDValidity, uids, []string{flag}, add); err != nil {
		return nil, batchOut{}, writeErr(err)
	}
	return nil, batchOut{Account: output.Name(loc.mb.Account), Mailbox: output.Name(loc.mb.Path), UIDs: uids, Done: done}, nil
}

func trashTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_trash", Title: "Move emails to Trash",
		Description: "Move messages to the account's Trash mailbox (recoverable there; nothing is expunged).",
		Toolset:     mcpserver.ToolsetMail, Bridged: true,
		ReadOnly: mcpserver.No, Destructive: mcpserver.Yes, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[batchIn, batchOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in batchIn) (*mcp.CallToolResult, batchOut, error) {
			loc, uids, err := batch(ctx, st, in)
			if err != nil {
				return nil, batchOut{}, err
			}
			trash, err := special(ctx, st, loc.mb.Account, Trash)
			if err != nil {
				return nil, batchOut{}, err
			}
			if trash.mb.Path == loc.mb.Path {
				return nil, batchOut{}, errors.New("the messages are already in Trash")
			}
			if err := loc.b.Move(ctx, loc.mb.Path, loc.mb.UIDValidity, uids, trash.mb.Path); err != nil {
				return nil, batchOut{}, writeErr(err)
			}
			return nil, batchOut{Account: output.Name(loc.mb.Account), Mailbox: output.Name(loc.mb.Path), UIDs: uids, Done: "moved to Trash",
				Target: output.Name(trash.mb.Account + "/" + trash.mb.Path)}, nil
		}
	})
}

// --- drafts: mail_create_draft, mail_reply_draft ---

type draftOut struct {
	Account   string   `json:"account"`
	Mailbox   string   `json:"mailbox"`
	UID       uint32   `json:"uid,omitempty"`
	MessageID string   `json:"message_id"`
	From      string   `json:"from"`
	To        []string `json:"to"`
	Cc        []string `json:"cc,omitempty"`
	Subject   string   `json:"subject"`
	Note      string   `json:"note"`
}

// draftAccount picks the account a draft is written in: the named one,
// else the only one in scope that can hold drafts.
func draftAccount(ctx context.Context, st *Store, account string) (string, error) {
	if a := strings.TrimSpace(account); a != "" {
		return a, nil
	}
	sc, err := scope.FromContext(ctx)
	if err != nil {
		return "", err
	}
	vals, in := sc.Values(scope.MailAccounts)
	var names []string
	for _, a := range st.Accounts {
		if st.readOnlyAccount(a.Name) || (in && !slices.ContainsFunc(vals, func(v string) bool { return scope.Fold(v) == scope.Fold(a.Name) })) {
			continue
		}
		names = append(names, a.Name)
	}
	switch len(names) {
	case 1:
		return names[0], nil
	case 0:
		return "", errors.New("no mail account this client may use can hold drafts (Maildir and Mail.app store accounts are read-only)")
	}
	return "", fmt.Errorf("say which account: one of %s", strings.Join(names, ", "))
}

// saveDraft checks the sender and recipients and APPENDs c to the
// account's Drafts mailbox.
func saveDraft(ctx context.Context, st *Store, account string, c Compose) (*mcp.CallToolResult, draftOut, error) {
	info, ok := st.Info(account)
	if !ok {
		return nil, draftOut{}, fmt.Errorf("there is no mail account %q (mail_list_accounts lists them)", account)
	}
	if strings.TrimSpace(c.From) == "" {
		if len(info.From) == 0 {
			return nil, draftOut{}, fmt.Errorf("mail account %q has no from address in config.toml: add from = [\"you@example.org\"]", info.Name)
		}
		c.From = info.From[0]
	}
	// A from the account does not own is refused, never substituted.
	if !st.Owns(info.Name, c.From) {
		return nil, draftOut{}, fmt.Errorf("mail account %q may not send as %s; it may send as: %s", info.Name, output.Name(c.From), strings.Join(info.From, ", "))
	}
	var all []string
	for field, l := range map[string][]string{"to": c.To, "cc": c.Cc, "bcc": c.Bcc} {
		addrs, err := ParseRecipients(field, l)
		if err != nil {
			return nil, draftOut{}, err
		}
		for _, a := range addrs {
			all = append(all, a.Address)
		}
	}
	if len(all) == 0 {
		return nil, draftOut{}, errors.New("give at least one recipient in to, cc or bcc")
	}
	// A recipient the read policy blocks is refused (a draft is one click
	// from being sent to them).
	if st.Allow != nil {
		var others []string
		for _, a := range all {
			if !slices.Contains(st.Self, a) {
				others = append(others, a)
			}
		}
		if ok, err := st.Allow(ctx, others); err != nil || !ok {
			return nil, draftOut{}, errors.New("a recipient is blocked by the read policy (or the policy cannot be loaded): remove them")
		}
	}
	loc, err := special(ctx, st, info.Name, Drafts)
	if err != nil {
		return nil, draftOut{}, err
	}
	if st.Now != nil {
		c.Date = st.Now()
	}
	raw, id, err := c.Build()
	if err != nil {
		return nil, draftOut{}, err
	}
	uid, err := loc.b.Append(ctx, loc.mb.Path, raw, []string{Draft, Seen}, c.Date)
	if err != nil {
		return nil, draftOut{}, writeErr(err)
	}
	return nil, draftOut{Account: output.Name(info.Name), Mailbox: output.Name(loc.mb.Path), UID: uid, MessageID: output.Name(id),
		From: output.Name(c.From), To: quoteAll(slices.Clone(c.To)), Cc: quoteAll(slices.Clone(c.Cc)), Subject: output.Name(c.Subject),
		Note: "saved as a draft; nothing was sent"}, nil
}

type createDraftIn struct {
	Account string   `json:"account,omitempty" jsonschema:"account to save the draft in (default: the only one)"`
	From    string   `json:"from,omitempty" jsonschema:"one of the account's from addresses (default: its first)"`
	To      []string `json:"to,omitempty"`
	Cc      []string `json:"cc,omitempty"`
	Bcc     []string `json:"bcc,omitempty"`
	Subject string   `json:"subject"`
	Body    string   `json:"body" jsonschema:"plain text"`
}

func createDraftTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_create_draft", Title: "Create an email draft",
		Description: "Save a new plain-text message in the account's Drafts mailbox for the user to review and send. Nothing is sent.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[createDraftIn, draftOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in createDraftIn) (*mcp.CallToolResult, draftOut, error) {
			account, err := draftAccount(ctx, st, in.Account)
			if err != nil {
				return nil, draftOut{}, err
			}
			return saveDraft(ctx, st, account, Compose{From: in.From, To: in.To, Cc: in.Cc, Bcc: in.Bcc, Subject: strings.TrimSpace(in.Subject), Body: in.Body})
		}
	})
}

type replyDraftIn struct {
	messageIn
	Body     string `json:"body" jsonschema:"the reply's plain text (the original is not quoted)"`
	ReplyAll bool   `json:"reply_all,omitempty" jsonschema:"also address the original's other recipients"`
}

func replyDraftTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "mail_reply_draft", Title: "Draft a reply",
		Description: "Save a reply to a message in the account's Drafts, threaded (In-Reply-To, References) and addressed to its Reply-To or From (reply_all adds the other recipients). Nothing is sent.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[replyDraftIn, draftOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in replyDraftIn) (*mcp.CallToolResult, draftOut, error) {
			loc, _, _, p, err := readMessage(ctx, st, in.messageIn)
			if err != nil {
				return nil, draftOut{}, err
			}
			c, err := replyOf(st, loc.mb.Account, p, in.Body, in.ReplyAll)
			if err != nil {
				return nil, draftOut{}, err
			}
			return saveDraft(ctx, st, loc.mb.Account, c)
		}
	})
}

// replyOf addresses a reply to p: Reply-To else From (else, for the
// user's own sent mail, its To); reply-all adds To and Cc; the user's own
// addresses are left out. The sender is the account address the original
// was sent to, else the account's first.
func replyOf(st *Store, account string, p *Parsed, text string, all bool) (Compose, error) {
	h := p.Header
	info, _ := st.Info(account)
	c := Compose{Subject: ReplySubject(h.Subject), Body: text, InReplyTo: h.MessageID}
	for _, a := range append(append([]Address{}, h.To...), h.Cc...) {
		if slices.Contains(info.From, a.Addr) {
			c.From = a.Addr
			break
		}
	}
	seen := map[string]bool{}
	add := func(list *[]string, as []Address) {
		for _, a := range as {
			if a.Addr == "" || seen[a.Addr] || slices.Contains(st.Self, a.Addr) {
				continue
			}
			seen[a.Addr] = true
			*list = append(*list, a.Addr)
		}
	}
	if len(h.ReplyTo) > 0 {
		add(&c.To, h.ReplyTo)
	} else {
		add(&c.To, h.From)
	}
	if len(c.To) == 0 {
		add(&c.To, h.To)
	}
	if all {
		add(&c.Cc, h.To)
		add(&c.Cc, h.Cc)
	}
	if len(c.To) == 0 && len(c.Cc) == 0 {
		return Compose{}, errors.New("the message has no address to reply to")
	}
	refs := slices.Clone(p.References)
	if h.MessageID != "" && !slices.Contains(refs, h.MessageID) {
		refs = append(refs, h.MessageID)
	}
	if len(refs) > 20 {
		refs = append(refs[:1], refs[len(refs)-19:]...)
	}
	c.References = refs
	return c, nil
}

// Small output schemas (the tools/list budget); the items' fields are in
// docs/tools.md.
var (
	emailsSchema = &jsonschema.Schema{
		Type:     "object",
		Required: []string{"account", "mailbox", "emails", "page"},
		Properties: map[string]*jsonschema.Schema{
			"account": {Type: "string"}, "mailbox": {Type: "string"},
			"emails": {Type: "array", Description: "uid, date, from, to, subject, unread, flagged, size"},
			"page":   {Type: "object", Description: "returned, total, truncated, next_cursor, note"},
			"hidden": {Type: "integer", Description: "messages hidden by the read policy"},
		},
	}
	emailSchema = &jsonschema.Schema{
		Type:     "object",
		Required: []string{"uid", "subject", "body", "attachments", "complete"},
		Properties: map[string]*jsonschema.Schema{
			"uid": {Type: "integer"}, "subject": {Type: "string"}, "body": {Type: "string", Description: "untrusted text, redacted"},
			"attachments": {Type: "array", Description: "part_id, name, content_type, size, inline"},
			"complete":    {Type: "boolean"},
		},
	}
)
