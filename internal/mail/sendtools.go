package mail

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/filesafe"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/scope"
	"github.com/tidings-mcp/tidings/internal/send"
)

// maxAttachment bounds one file mail_send attaches.
const maxAttachment = 20 << 20

// Sender is send.MailSender over the store's SMTP accounts: it submits
// the message and, after the server's 250, appends the exact bytes to
// the account's Sent mailbox unless the account sets sent_copy = false,
// reporting the two separately.
type Sender struct {
	St *Store
	// SMTP maps an account name to its submitter.
	SMTP map[string]*SMTP
	// NoSentCopy lists accounts with sent_copy = false.
	NoSentCopy map[string]bool
}

var _ send.MailSender = (*Sender)(nil)

// Name implements send.MailSender.
func (s *Sender) Name() string { return "smtp" }

// Available implements send.MailSender.
func (s *Sender) Available(account string) error {
	if s.SMTP[account] == nil {
		return fmt.Errorf("mail account %q has no smtp server in config.toml, so it cannot send", account)
	}
	return nil
}

// SendMail implements send.MailSender.
func (s *Sender) SendMail(ctx context.Context, m send.MailMessage) (send.MailDelivery, error) {
	sub := s.SMTP[m.Account]
	if sub == nil {
		return send.MailDelivery{}, s.Available(m.Account)
	}
	c := Compose{From: m.From, To: m.To, Cc: m.Cc, Bcc: m.Bcc, Subject: m.Subject, Body: m.Body, OmitBcc: true}
	if s.St.Now != nil {
		c.Date = s.St.Now()
	}
	for _, a := range m.Attachments {
		c.Attachments = append(c.Attachments, Attached{Name: a.Name, ContentType: a.ContentType, Data: a.Data})
	}
	raw, id, err := c.Build()
	if err != nil {
		return send.MailDelivery{}, err
	}
	reply, err := sub.Submit(ctx, m.From, m.Recipients(), raw)
	if err != nil {
		return send.MailDelivery{}, err
	}
	d := send.MailDelivery{Accepted: true, Reply: output.Name(reply), MessageID: id, SentCopy: "skipped"}
	if s.NoSentCopy[m.Account] {
		d.SentCopyNote = "the account sets sent_copy = false"
		return d, nil
	}
	// The copy goes where the scope allows; a Sent mailbox out of scope
	// is a failed copy, never another mailbox.
	loc, err := special(ctx, s.St, m.Account, Sent)
	if err == nil {
		_, err = loc.b.Append(ctx, loc.mb.Path, raw, []string{Seen}, c.Date)
	}
	if err != nil {
		d.SentCopy, d.SentCopyNote = "failed", "the message was delivered but no copy was saved: "+output.Name(err.Error())
		return d, nil
	}
	d.SentCopy, d.SentCopyNote = "saved", "copy saved in "+output.Name(loc.mb.Account+"/"+loc.mb.Path)
	return d, nil
}

type mailSendIn struct {
	Account     string   `json:"account,omitempty" jsonschema:"account to send from (default: the only one that can send)"`
	From        string   `json:"from,omitempty" jsonschema:"one of the account's from addresses (default: its first)"`
	To          []string `json:"to,omitempty"`
	Cc          []string `json:"cc,omitempty"`
	Bcc         []string `json:"bcc,omitempty"`
	Subject     string   `json:"subject"`
	Body        string   `json:"body" jsonschema:"plain text"`
	Attachments []string `json:"attachments,omitempty" jsonschema:"absolute paths inside the profile's file_dirs"`
}

type mailSendNonceIn struct {
	mailSendIn
	SendNonce string `json:"send_nonce" jsonschema:"the send_nonce preview_mail returned for exactly this message"`
}

// message validates a preview_mail / mail_send call into the gate's
// message: the account in scope and able to send, a from it owns
// (refused, never substituted), bare recipients, attachments read from
// file_dirs.
func message(ctx context.Context, st *Store, snd *Sender, dirs []string, in mailSendIn) (send.MailMessage, error) {
	sc, err := scope.FromContext(ctx)
	if err != nil {
		return send.MailMessage{}, err
	}
	vals, inForce := sc.Values(scope.MailAccounts)
	account := strings.TrimSpace(in.Account)
	if account == "" {
		var names []string
		for _, a := range st.Accounts {
			if a.CanSend && (!inForce || slices.ContainsFunc(vals, func(v string) bool { return scope.Fold(v) == scope.Fold(a.Name) })) {
				names = append(names, a.Name)
			}
		}
		if len(names) != 1 {
			return send.MailMessage{}, fmt.Errorf("say which account to send from: one of %s", strings.Join(names, ", "))
		}
		account = names[0]
	}
	info, ok := st.Info(account)
	if !ok {
		return send.MailMessage{}, fmt.Errorf("there is no mail account %q (mail_list_accounts lists them)", account)
	}
	if inForce && !slices.ContainsFunc(vals, func(v string) bool { return scope.Fold(v) == scope.Fold(info.Name) }) {
		return send.MailMessage{}, scope.Violationf("mail account %q is outside this client's scope", account)
	}
	if err := snd.Available(info.Name); err != nil {
		return send.MailMessage{}, err
	}
	from := strings.ToLower(strings.TrimSpace(in.From))
	if from == "" && len(info.From) > 0 {
		from = info.From[0]
	}
	if !st.Owns(info.Name, from) {
		return send.MailMessage{}, fmt.Errorf("mail account %q may not send as %s; it may send as: %s", info.Name, output.Name(in.From), strings.Join(info.From, ", "))
	}
	m := send.MailMessage{Account: info.Name, From: from, Subject: in.Subject, Body: in.Body}
	for _, l := range []struct {
		name string
		in   []string
		out  *[]string
	}{{"to", in.To, &m.To}, {"cc", in.Cc, &m.Cc}, {"bcc", in.Bcc, &m.Bcc}} {
		addrs, err := ParseRecipients(l.name, l.in)
		if err != nil {
			return send.MailMessage{}, err
		}
		for _, a := range addrs {
			*l.out = append(*l.out, a.Address)
		}
	}
	for _, p := range in.Attachments {
		data, err := filesafe.ReadInside(p, dirs, maxAttachment)
		if err != nil {
			return send.MailMessage{}, err
		}
		sum := sha256.Sum256(data)
		name := filepath.Base(p)
		ct := mime.TypeByExtension(strings.ToLower(filepath.Ext(name)))
		if ct == "" {
			ct = "application/octet-stream"
		}
		m.Attachments = append(m.Attachments, send.MailAttachment{Name: name, ContentType: ct, Data: data, SHA256: hex.EncodeToString(sum[:])})
	}
	return m, nil
}

func fileDirs(d *mcpserver.Deps) []string {
	if d != nil && d.Profile != nil {
		return d.Profile.FileDirs
	}
	return nil
}

// SendTools are preview_mail and mail_send over gate (registered only
// with ENABLE_MCP_SEND_MAIL=true).
func SendTools(st *Store, snd *Sender, gate *send.MailGate) []mcpserver.Tool {
	preview := mcpserver.Define(mcpserver.Tool{
		Name: "preview_mail", Title: "Preview an email before sending",
		Description: "Check an e-mail and get a send_nonce bound to exactly this message (from, recipients, subject, body, attachments). Show the preview to the user; nothing is sent.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true, OutputSchema: previewSchema,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.Yes,
	}, func(d *mcpserver.Deps) mcp.ToolHandlerFor[mailSendIn, send.MailPreview] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in mailSendIn) (*mcp.CallToolResult, send.MailPreview, error) {
			m, err := message(ctx, st, snd, fileDirs(d), in)
			if err != nil {
				return nil, send.MailPreview{}, err
			}
			pv, err := gate.PreviewMail(ctx, m)
			if err != nil {
				return nil, send.MailPreview{}, err
			}
			pv.Subject, pv.Body = output.Name(pv.Subject), output.Wrapped(pv.Body)
			return nil, pv, nil
		}
	})
	sendTool := mcpserver.Define(mcpserver.Tool{
		Name: "mail_send", Title: "Send an email",
		Description: "Send the e-mail preview_mail checked, repeating its arguments exactly with its send_nonce. The user approves it in a dialog; then it goes over SMTP and a copy is saved in Sent.",
		Toolset:     mcpserver.ToolsetMail, Bridged: true,
		ReadOnly: mcpserver.No, Destructive: mcpserver.Yes, Idempotent: mcpserver.No, OpenWorld: mcpserver.Yes,
	}, func(d *mcpserver.Deps) mcp.ToolHandlerFor[mailSendNonceIn, send.MailSent] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in mailSendNonceIn) (*mcp.CallToolResult, send.MailSent, error) {
			m, err := message(ctx, st, snd, fileDirs(d), in.mailSendIn)
			if err != nil {
				return nil, send.MailSent{}, err
			}
			if strings.TrimSpace(in.SendNonce) == "" {
				return nil, send.MailSent{}, errors.New("send_nonce is required: call preview_mail first and pass its send_nonce")
			}
			return withSent(gate.SendMail(ctx, m, in.SendNonce))
		}
	})
	return []mcpserver.Tool{preview, sendTool}
}

func withSent(s send.MailSent, err error) (*mcp.CallToolResult, send.MailSent, error) {
	if err != nil {
		return nil, send.MailSent{}, err
	}
	return nil, s, nil
}

// previewSchema keeps preview_mail within the tools/list budget; the
// fields are in docs/tools.md.
var previewSchema = &jsonschema.Schema{
	Type:     "object",
	Required: []string{"account", "from", "to", "subject", "body", "blocked"},
	Properties: map[string]*jsonschema.Schema{
		"account": {Type: "string"}, "from": {Type: "string"}, "to": {Type: "array"}, "subject": {Type: "string"}, "body": {Type: "string"},
		"blocked":    {Type: "boolean", Description: "a recipient is blocked: no nonce"},
		"send_nonce": {Type: "string"},
	},
}
