package send

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// The gate's mail half (docs/security.md, "Sending mail"): the same
// nonce store, audit log, lock, rate limit and confirmation dialog as
// messages, with a payload that is a whole e-mail. A nonce is bound to
// the account, the sender, every recipient (To, Cc, Bcc), the subject,
// the body and each attachment's name and SHA-256, so a send that
// changes any of them is refused.

// ServiceMail is the Service of a mail payload and its audit entries.
const ServiceMail = "mail"

// MailAttachment is one file attached to a mail, already read from a
// folder the profile allows (the caller resolves it).
type MailAttachment struct {
	Name        string
	ContentType string
	Data        []byte
	SHA256      string
}

// MailMessage is a mail the gate previews and sends. Addresses are bare,
// lower case and checked by the caller (internal/mail); From must be one
// the account owns, which the caller checked too.
type MailMessage struct {
	Account     string
	From        string
	To, Cc, Bcc []string
	Subject     string
	Body        string
	Attachments []MailAttachment
}

// Recipients lists To, Cc and Bcc.
func (m MailMessage) Recipients() []string {
	return append(append(append([]string{}, m.To...), m.Cc...), m.Bcc...)
}

// MailDelivery is what a mail sender reports: the server's answer to the
// message, and the copy in Sent, separately (a message can be delivered
// and its copy fail).
type MailDelivery struct {
	// Accepted is true when the SMTP server answered 250 to the message.
	Accepted bool   `json:"accepted"`
	Reply    string `json:"reply,omitempty" jsonschema:"the server's reply"`
	// SentCopy is "saved", "skipped" (sent_copy = false) or "failed".
	SentCopy     string `json:"sent_copy"`
	SentCopyNote string `json:"sent_copy_note,omitempty"`
	MessageID    string `json:"message_id,omitempty"`
}

// MailSender hands a mail to its account's SMTP server (internal/mail).
type MailSender interface {
	Name() string
	// Available is nil when the account can send.
	Available(account string) error
	SendMail(ctx context.Context, m MailMessage) (MailDelivery, error)
}

// MailGate is the one path to sending mail: PreviewMail then SendMail.
type MailGate struct {
	g      *Gate
	sender MailSender
}

// noMessages is the Sender of a mail gate's inner Gate: it never sends a
// message (mail goes through MailSender).
type noMessages struct{}

func (noMessages) Name() string { return "none" }
func (noMessages) Available() error {
	return newErr(CodeNoSender, "this gate sends mail only")
}
func (noMessages) Send(context.Context, Outgoing) (Delivery, error) {
	return Delivery{}, newErr(CodeNoSender, "this gate sends mail only")
}

// NewMailGate builds the mail gate under o (o.Sender is ignored: mail
// goes to sender).
func NewMailGate(o Options, sender MailSender) (*MailGate, error) {
	if sender == nil {
		return nil, errors.New("send gate: a mail sender is required")
	}
	o.Sender = noMessages{}
	g, err := New(o)
	if err != nil {
		return nil, err
	}
	return &MailGate{g: g, sender: sender}, nil
}

// Limits of a mail.
const (
	maxMailRecipients = 50
	maxMailSubject    = 998
	maxMailBody       = 256 << 10
	maxMailAttach     = 10
)

// checkMail applies every rule that does not depend on state.
func checkMail(m MailMessage) error {
	bad := func(s string) error { return newErr(CodeInvalidRecipient, "send gate: "+s+"; nothing was sent") }
	if len(m.Recipients()) == 0 {
		return bad("give at least one recipient in to, cc or bcc")
	}
	if len(m.Recipients()) > maxMailRecipients {
		return bad(fmt.Sprintf("at most %d recipients", maxMailRecipients))
	}
	for _, a := range append(m.Recipients(), m.From) {
		if a == "" || strings.IndexFunc(a, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 || strings.Count(a, "@") != 1 {
			return bad(fmt.Sprintf("%q is not a bare e-mail address", clip(sanitize.Field(a), 80)))
		}
	}
	if strings.ContainsAny(m.Subject, "\r\n") || !utf8.ValidString(m.Subject) || len(m.Subject) > maxMailSubject {
		return newErr(CodeInvalidText, fmt.Sprintf("send gate: the subject must be one line of at most %d bytes; nothing was sent", maxMailSubject))
	}
	if !utf8.ValidString(m.Body) || len(m.Body) > maxMailBody {
		return newErr(CodeInvalidText, fmt.Sprintf("send gate: the body must be UTF-8 text of at most %d KiB; nothing was sent", maxMailBody>>10))
	}
	if strings.TrimSpace(m.Body) == "" && strings.TrimSpace(m.Subject) == "" {
		return newErr(CodeInvalidText, "send gate: the message has neither subject nor body; nothing was sent")
	}
	if len(m.Attachments) > maxMailAttach {
		return newErr(CodeInvalidImage, fmt.Sprintf("send gate: at most %d attachments; nothing was sent", maxMailAttach))
	}
	return nil
}

// mailPayload is the nonce payload of m: every field, length-prefixed so
// no two messages share an encoding.
func mailPayload(m MailMessage) payload {
	lp := func(parts ...string) string {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(strconv.Itoa(len(p)) + ":" + p)
		}
		return b.String()
	}
	rcpts := lp(lp(m.To...), lp(m.Cc...), lp(m.Bcc...))
	var att []string
	for _, a := range m.Attachments {
		att = append(att, lp(a.Name, a.ContentType, a.SHA256))
	}
	return payload{Raw: lp(m.Account, m.From), Address: rcpts, Service: ServiceMail, Text: lp(m.Subject, m.Body), ImageSHA256: lp(att...)}
}

// mailText is what the audit log hashes and the dialog shows.
func mailText(m MailMessage) string {
	return "Subject: " + m.Subject + "\n\n" + m.Body
}

func (mg *MailGate) entry(event string, now time.Time, m MailMessage) AuditEntry {
	p := mailPayload(m)
	text := mailText(m)
	return AuditEntry{Time: now.UTC().Format(time.RFC3339Nano), Event: event, Service: ServiceMail,
		Recipient: clip(strings.Join(m.Recipients(), ","), 200), TextSHA256: hashText(p.Raw + p.Address + p.Text + p.ImageSHA256),
		TextLength: utf8.RuneCountInString(text), NearSHA256: hashText(nearKey(text))}
}

// allowedAll checks every recipient against the read policy.
func (mg *MailGate) allowedAll(m MailMessage) (policy.Decision, error) {
	for _, a := range m.Recipients() {
		d, err := mg.g.allowed(a)
		if err != nil {
			return policy.Decision{}, err
		}
		if !d.Allowed {
			return d, nil
		}
	}
	return policy.Decision{Allowed: true}, nil
}

// MailPreview is preview_mail's result.
type MailPreview struct {
	Account     string   `json:"account"`
	From        string   `json:"from"`
	To          []string `json:"to"`
	Cc          []string `json:"cc,omitempty"`
	Bcc         []string `json:"bcc,omitempty"`
	Subject     string   `json:"subject"`
	Body        string   `json:"body"`
	Attachments []string `json:"attachments,omitempty"`
	Blocked     bool     `json:"blocked"`
	Warnings    []string `json:"warnings,omitempty"`
	SendNonce   string   `json:"send_nonce,omitempty"`
	NonceTTL    int      `json:"send_nonce_ttl_seconds,omitempty"`
}

// PreviewMail validates m, checks every recipient against the read
// policy and mints a nonce bound to all of m. A blocked recipient is not
// an error: the result says blocked and carries no nonce.
func (mg *MailGate) PreviewMail(ctx context.Context, m MailMessage) (MailPreview, error) {
	g := mg.g
	now := g.o.Now()
	g.nonces.reap(now)
	if err := checkMail(m); err != nil {
		g.record(withOutcome(mg.entry(EventPreview, now, m), "refused", CodeOf(err)))
		return MailPreview{}, err
	}
	pv := MailPreview{Account: m.Account, From: m.From, To: m.To, Cc: m.Cc, Bcc: m.Bcc, Subject: m.Subject, Body: m.Body}
	for _, a := range m.Attachments {
		pv.Attachments = append(pv.Attachments, fmt.Sprintf("%s (%s, %d bytes)", a.Name, a.ContentType, len(a.Data)))
	}
	dec, err := mg.allowedAll(m)
	if err != nil {
		g.record(withOutcome(mg.entry(EventPreview, now, m), "refused", CodePolicy))
		return MailPreview{}, err
	}
	if !dec.Allowed {
		pv.Blocked, pv.Warnings = true, []string{blockedSentence(dec)}
		if err := g.audit.append(withOutcome(mg.entry(EventPreview, now, m), "blocked", CodeBlocked)); err != nil {
			return MailPreview{}, stateErr(err)
		}
		return pv, nil
	}
	if err := g.checkRate(now); err != nil {
		g.record(withOutcome(mg.entry(EventPreview, now, m), "refused", CodeOf(err)))
		return MailPreview{}, err
	}
	if err := mg.sender.Available(m.Account); err != nil {
		pv.Warnings = append(pv.Warnings, err.Error())
	} else if err := g.o.Confirmer.Available(); err != nil {
		pv.Warnings = append(pv.Warnings, err.Error())
	}
	token, rec, err := g.nonces.mint(now, mailPayload(m))
	if err != nil {
		return MailPreview{}, stateErr(err)
	}
	e := withOutcome(mg.entry(EventPreview, now, m), "nonce_issued", "")
	e.NonceID = rec.ID
	if err := g.audit.append(e); err != nil {
		os.Remove(filepath.Join(g.nonces.dir, rec.ID))
		return MailPreview{}, stateErr(err)
	}
	pv.SendNonce, pv.NonceTTL = token, int(NonceTTL/time.Second)
	return pv, nil
}

// MailSent is mail_send's result.
type MailSent struct {
	Account  string       `json:"account"`
	From     string       `json:"from"`
	To       []string     `json:"to"`
	SentAt   string       `json:"sent_at"`
	Delivery MailDelivery `json:"delivery"`
}

// SendMail completes a previewed mail, in the order of Gate.Send: the
// nonce is consumed first (it can never be used twice); a bad nonce, a
// changed message, a recipient blocked since the preview, the rate limit
// or a missing confirmer or sender refuse before any dialog; then a
// person approves outside the agent, and only then is the mail handed to
// the sender.
func (mg *MailGate) SendMail(ctx context.Context, m MailMessage, nonce string) (MailSent, error) {
	g := mg.g
	unlock, err := g.lock(ctx)
	if err != nil {
		return MailSent{}, err
	}
	defer unlock()
	now := g.o.Now()
	defer g.nonces.reap(now)
	refuse := func(err error) (MailSent, error) {
		g.record(withOutcome(mg.entry(EventSendRefused, now, m), "refused", CodeOf(err)))
		return MailSent{}, err
	}
	if strings.TrimSpace(nonce) == "" {
		return refuse(newErr(CodeMissingNonce, "send gate: send_nonce is required: call preview_mail first and pass its send_nonce"))
	}
	rec, err := g.nonces.consume(nonce, now)
	if err != nil {
		return refuse(err)
	}
	if err := checkMail(m); err != nil {
		return refuse(err)
	}
	if !g.nonces.matches(rec, mailPayload(m)) {
		return refuse(newErr(CodePayloadMismatch, MsgPayloadMismatch))
	}
	dec, err := mg.allowedAll(m)
	if err != nil {
		return refuse(err)
	}
	if !dec.Allowed {
		return refuse(newErr(CodeBlocked, "send gate: "+blockedSentence(dec)))
	}
	if err := g.checkRate(now); err != nil {
		return refuse(err)
	}
	if err := mg.sender.Available(m.Account); err != nil {
		return refuse(err)
	}
	if err := g.o.Confirmer.Available(); err != nil {
		return refuse(err)
	}
	req := ConfirmRequest{Address: strings.Join(m.Recipients(), ", "), Service: "e-mail from " + m.From, Text: mailText(m)}
	var names []string
	for _, a := range m.Attachments {
		names = append(names, a.Name)
	}
	req.Image = strings.Join(names, ", ")
	if len(m.Bcc) > 0 {
		req.Notes = append(req.Notes, "Bcc: "+strings.Join(m.Bcc, ", "))
	}
	ans, cerr := g.o.Confirmer.Confirm(ctx, req)
	ce := mg.entry(EventConfirmation, g.o.Now(), m)
	ce.NonceID = rec.ID
	switch {
	case cerr != nil:
		g.record(withOutcome(ce, "failed", CodeConfirmFailed))
		return MailSent{}, newErr(CodeConfirmFailed, fmt.Sprintf("send gate: the confirmation dialog failed (%s); nothing was sent", clip(cerr.Error(), 200)))
	case ans != AnswerApproved:
		g.record(withOutcome(ce, string(ans), CodeCancelled))
		return MailSent{}, newErr(CodeCancelled, MsgCancelled)
	}
	if err := g.audit.append(withOutcome(ce, string(AnswerApproved), "")); err != nil {
		return MailSent{}, stateErr(err)
	}
	started := mg.entry(EventSendStarted, g.o.Now(), m)
	started.NonceID = rec.ID
	if err := g.audit.append(withOutcome(started, "started", "")); err != nil {
		return MailSent{}, stateErr(err)
	}
	d, serr := mg.sender.SendMail(ctx, m)
	done := g.o.Now()
	re := mg.entry(EventSendResult, done, m)
	re.NonceID = rec.ID
	if serr != nil {
		code := CodeOf(serr)
		if code == "" {
			code = CodeSendFailed
			serr = newErr(code, "send failed: "+clip(serr.Error(), 300))
		}
		g.record(withOutcome(re, "error", code))
		return MailSent{}, serr
	}
	re.Outcome = "accepted; sent copy " + d.SentCopy
	if err := g.audit.append(re); err != nil {
		g.o.Logger.Error("send audit log", "err", err)
	}
	return MailSent{Account: m.Account, From: m.From, To: m.Recipients(), SentAt: done.In(g.o.Location).Format(sentAtLayout), Delivery: d}, nil
}

// Confirmer is the gate's confirmer (for status).
func (mg *MailGate) Confirmer() Confirmer { return mg.g.o.Confirmer }
