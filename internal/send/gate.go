package send

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// Limits of the gate.
const (
	// DefaultRateLimit is how many sends may start per rolling hour.
	DefaultRateLimit = 10
	// DuplicateWindow is how long an identical message to the same
	// recipient needs a fresh preview.
	DuplicateWindow = 10 * time.Minute
	// sentAtLayout is the protocol's timestamp format (local time).
	sentAtLayout = "2006-01-02T15:04:05"
)

// PolicySource yields the current read policy; *policy.Store implements it.
type PolicySource interface {
	Current() (*policy.Policy, error)
}

// NameResolver names the person behind a handle, or "" for nobody;
// *contacts.Book implements it.
type NameResolver interface {
	DisplayName(handle string) string
}

// Options configure a Gate.
type Options struct {
	// Home is $TIDINGS_HOME: the key, nonces/, audit.jsonl and the lock
	// live there.
	Home string
	// Now is the clock (config.Config.Now, which TIDINGS_NOW pins).
	Now func() time.Time
	// Location formats sent_at; default time.Local.
	Location *time.Location
	// Region is the default phone region for numbers without a country
	// code (config.Config.Region).
	Region string
	// Policy is required: a send is checked against the read policy at
	// preview and again at send.
	Policy PolicySource
	// Names resolves the recipient's name; nil resolves nobody.
	Names NameResolver
	// Confirmer and Sender are required; see Platform.
	Confirmer Confirmer
	Sender    Sender
	// FileDirs are the folders image_path may point into (a profile's
	// file_dirs). Empty refuses every image.
	FileDirs []string
	// RateLimit is the number of sends per rolling hour; 0 means
	// DefaultRateLimit.
	RateLimit int
	Logger    *slog.Logger
}

// Gate is the one path to sending a message: preview (validate, resolve,
// check policy, mint a nonce), then send (consume the nonce, check it,
// check limits, ask a person, send, verify). The MCP tools and the bridge
// actions both call it. Its methods are safe for concurrent use; sends are
// serialised, within the process and across processes sharing Home.
type Gate struct {
	o      Options
	nonces *nonceStore
	audit  auditLog
	lockMu sync.Mutex
}

// New prepares the gate's state under o.Home: the home folder, the nonce
// folder (0700) and the per-install key (0600). It fails when any of them
// is unsafe (a symlink, readable by others, owned by someone else).
func New(o Options) (*Gate, error) {
	if o.Home == "" {
		return nil, errors.New("send gate: no home folder")
	}
	if o.Policy == nil || o.Confirmer == nil || o.Sender == nil {
		return nil, errors.New("send gate: policy, confirmer and sender are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.RateLimit <= 0 {
		o.RateLimit = DefaultRateLimit
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(o.Home, 0o700); err != nil {
		return nil, fmt.Errorf("send gate: %w", err)
	}
	dir := filepath.Join(o.Home, nonceDir)
	if err := privateDir(dir); err != nil {
		return nil, fmt.Errorf("send gate: %w", err)
	}
	key, err := loadOrCreateKey(o.Home)
	if err != nil {
		return nil, fmt.Errorf("send gate: %w", err)
	}
	return &Gate{o: o, nonces: &nonceStore{dir: dir, key: key}, audit: auditLog{path: filepath.Join(o.Home, auditFile)}}, nil
}

// PreviewRequest is a send_preview / preview_message call. Service "" means
// iMessage. ImagePath is optional.
type PreviewRequest struct {
	To, Text, Service, ImagePath string
}

// SendRequest is a send / send_message call: the previewed payload,
// repeated exactly, and the nonce the preview returned.
type SendRequest struct {
	To, Text, Service, ImagePath string
	Nonce                        string
}

// Preview is the protocol's preview object, plus Address (the normalised
// address Messages will be given), Image and Warnings.
type Preview struct {
	To           string   `json:"to"`
	ResolvedName string   `json:"resolved_name"`
	Service      string   `json:"service"`
	Text         string   `json:"text"`
	TextLength   int      `json:"text_length"`
	Blocked      bool     `json:"blocked" jsonschema:"true when the read policy blocks this recipient; then there is no nonce"`
	Address      string   `json:"address,omitempty" jsonschema:"the normalised address Messages will be given"`
	Image        *Image   `json:"image,omitempty"`
	Warnings     []string `json:"warnings,omitempty" jsonschema:"sentences to show the user with the preview"`
}

// PreviewResult is the protocol's send_preview response body. A blocked
// recipient gets Blocked = true and no nonce.
type PreviewResult struct {
	Preview             Preview `json:"preview"`
	SendNonce           string  `json:"send_nonce,omitempty"`
	SendNonceTTLSeconds int     `json:"send_nonce_ttl_seconds,omitempty"`
}

// Sent is the protocol's sent object.
type Sent struct {
	To           string `json:"to"`
	ResolvedName string `json:"resolved_name"`
	Service      string `json:"service"`
	TextLength   int    `json:"text_length"`
	SentAt       string `json:"sent_at" jsonschema:"local time the message was handed to Messages (YYYY-MM-DDTHH:MM:SS)"`
}

// SendResult is the protocol's send response body plus the verified
// delivery.
type SendResult struct {
	Sent     Sent     `json:"sent"`
	Delivery Delivery `json:"delivery"`
}

// checked is a validated request.
type checked struct {
	rcpt    recipient
	service string
	image   *Image
}

// validate applies every rule that does not depend on state.
func (g *Gate) validate(to, text, service, imagePath string) (checked, error) {
	svc, err := canonService(service)
	if err != nil {
		return checked{}, err
	}
	rcpt, err := parseRecipient(to, g.o.Region)
	if err != nil {
		return checked{}, err
	}
	if err := checkText(text); err != nil {
		return checked{}, err
	}
	c := checked{rcpt: rcpt, service: svc}
	if imagePath != "" {
		if c.image, err = checkImage(imagePath, g.o.FileDirs); err != nil {
			return checked{}, err
		}
		c.image.Name = sanitize.Field(c.image.Name)
	}
	return c, nil
}

// PersonHandles is implemented by a NameResolver that also knows a
// person's other handles (the serve wiring's contacts book). The gate then
// refuses a recipient when any handle of the person behind it is blocked:
// blocking someone's number blocks sending to their e-mail address too.
type PersonHandles interface {
	// HandlesOf returns every phone and address of the person behind
	// handle, or nothing when nobody is known.
	HandlesOf(handle string) []string
}

// allowed checks the recipient against the current read policy, extended
// with the recipient's other handles when Names knows them. A policy that
// cannot be loaded refuses, as the policy package does everywhere.
func (g *Gate) allowed(address string) (policy.Decision, error) {
	p, err := g.o.Policy.Current()
	if err != nil || p == nil {
		return policy.Decision{}, newErr(CodePolicy, "send gate: the read policy could not be loaded, so nothing can be sent until it is fixed (run tidings doctor)")
	}
	if ph, ok := g.o.Names.(PersonHandles); ok {
		if hs := ph.HandlesOf(address); len(hs) > 0 {
			p = p.WithPeople([][]string{append(hs, address)})
		}
	}
	return p.AllowHandle(address), nil
}

// name resolves and sanitizes the recipient's display name.
func (g *Gate) name(address string) string {
	if g.o.Names == nil {
		return ""
	}
	return clip(output.Name(g.o.Names.DisplayName(address)), 120)
}

// entry starts an audit entry for a request.
func (g *Gate) entry(event string, now time.Time, c checked, text string) AuditEntry {
	e := AuditEntry{Time: now.UTC().Format(time.RFC3339Nano), Event: event, Recipient: c.rcpt.Address, Service: c.service}
	if text != "" {
		e.TextSHA256, e.TextLength, e.NearSHA256 = hashText(text), utf8.RuneCountInString(text), hashText(nearKey(text))
	}
	if c.image != nil {
		e.ImageSHA256 = c.image.SHA256
	}
	return e
}

// Preview validates a message, resolves the recipient's name, checks the
// read policy and mints a nonce bound to (to, text, service, image) valid
// for NonceTTL and one send attempt. It reads no message database and sends
// nothing. A blocked recipient is not an error: the result says blocked and
// carries no nonce.
func (g *Gate) Preview(ctx context.Context, r PreviewRequest) (PreviewResult, error) {
	now := g.o.Now()
	g.nonces.reap(now)
	c, err := g.validate(r.To, r.Text, r.Service, r.ImagePath)
	if err != nil {
		g.record(AuditEntry{Time: now.UTC().Format(time.RFC3339Nano), Event: EventPreview, Outcome: "refused", Code: CodeOf(err), Recipient: clip(sanitize.Field(r.To), 80)})
		return PreviewResult{}, err
	}
	dec, err := g.allowed(c.rcpt.Address)
	if err != nil {
		g.record(withOutcome(g.entry(EventPreview, now, c, r.Text), "refused", CodePolicy))
		return PreviewResult{}, err
	}
	pv := Preview{To: r.To, Service: c.service, Text: r.Text, TextLength: utf8.RuneCountInString(r.Text), Address: c.rcpt.Address, Image: c.image}
	if !dec.Allowed {
		// A blocked person's name is not looked up: the policy hides them.
		pv.Blocked = true
		pv.Warnings = []string{blockedSentence(dec)}
		if err := g.audit.append(withOutcome(g.entry(EventPreview, now, c, r.Text), "blocked", CodeBlocked)); err != nil {
			return PreviewResult{}, stateErr(err)
		}
		return PreviewResult{Preview: pv}, nil
	}
	pv.ResolvedName = g.name(c.rcpt.Address)
	if w, err := g.limitWarnings(now, c, r.Text); err != nil {
		g.record(withOutcome(g.entry(EventPreview, now, c, r.Text), "refused", CodeOf(err)))
		return PreviewResult{}, err
	} else {
		pv.Warnings = w
	}
	if c.image != nil && !c.image.Decoded {
		pv.Warnings = append(pv.Warnings, c.image.Note)
	}
	if err := g.o.Sender.Available(); err != nil {
		pv.Warnings = append(pv.Warnings, err.Error())
	} else if err := g.o.Confirmer.Available(); err != nil {
		pv.Warnings = append(pv.Warnings, err.Error())
	}
	token, rec, err := g.nonces.mint(now, payloadOf(r.To, r.Text, c))
	if err != nil {
		return PreviewResult{}, stateErr(err)
	}
	e := withOutcome(g.entry(EventPreview, now, c, r.Text), "nonce_issued", "")
	e.NonceID = rec.ID
	if err := g.audit.append(e); err != nil {
		os.Remove(filepath.Join(g.nonces.dir, rec.ID))
		return PreviewResult{}, stateErr(err)
	}
	return PreviewResult{Preview: pv, SendNonce: token, SendNonceTTLSeconds: int(NonceTTL / time.Second)}, nil
}

func payloadOf(to, text string, c checked) payload {
	p := payload{Raw: to, Address: c.rcpt.Address, Service: c.service, Text: text}
	if c.image != nil {
		p.ImageSHA256 = c.image.SHA256
	}
	return p
}

func blockedSentence(d policy.Decision) string {
	if d.Reason == policy.ReasonNotAllowlisted {
		return "this recipient is not on the allowlist of the read policy: do not ask the user to approve this message"
	}
	return "this recipient is blocked by the read policy (contacts/blocked_chats.txt): do not ask the user to approve this message"
}

func withOutcome(e AuditEntry, outcome string, code Code) AuditEntry {
	e.Outcome, e.Code = outcome, code
	return e
}

// record appends an audit entry on a path that is already failing; a
// write error is logged, since the refusal itself stands either way.
func (g *Gate) record(e AuditEntry) {
	if err := g.audit.append(e); err != nil {
		g.o.Logger.Error("send audit log", "err", err)
	}
}

func stateErr(err error) error {
	return newErr(CodeState, fmt.Sprintf("send gate: %v; nothing was sent", err))
}

// limitWarnings applies the rate limit (refusing when it is reached) and
// reports a recent identical message as a warning.
func (g *Gate) limitWarnings(now time.Time, c checked, text string) ([]string, error) {
	if err := g.checkRate(now); err != nil {
		return nil, err
	}
	prev, err := g.lastDuplicate(now, c, text)
	if err != nil {
		return nil, err
	}
	if prev.IsZero() {
		return nil, nil
	}
	return []string{duplicateNote(now, prev)}, nil
}

func duplicateNote(now, prev time.Time) string {
	return fmt.Sprintf("an identical message went to this recipient %s ago; send it again only if that is intended", now.Sub(prev).Round(time.Second))
}

// checkRate refuses when RateLimit sends started in the last hour.
func (g *Gate) checkRate(now time.Time) error {
	_, times, err := g.audit.recent(EventSendStarted, now.Add(-time.Hour))
	if err != nil {
		return stateErr(err)
	}
	if len(times) < g.o.RateLimit {
		return nil
	}
	next := times[len(times)-g.o.RateLimit].Add(time.Hour)
	return newErr(CodeRateLimited, fmt.Sprintf("send gate: rate limit reached (%d sends in the last hour); the next send is possible after %s", g.o.RateLimit, next.In(g.o.Location).Format(sentAtLayout)))
}

// lastDuplicate returns when the same text (compared by nearKey) last went
// to the same recipient within DuplicateWindow, or the zero time.
func (g *Gate) lastDuplicate(now time.Time, c checked, text string) (time.Time, error) {
	entries, times, err := g.audit.recent(EventSendStarted, now.Add(-DuplicateWindow))
	if err != nil {
		return time.Time{}, stateErr(err)
	}
	near := hashText(nearKey(text))
	var last time.Time
	for i, e := range entries {
		if e.Recipient == c.rcpt.Address && e.NearSHA256 == near {
			last = times[i]
		}
	}
	return last, nil
}

// Send completes a previewed message. In order: the nonce is consumed (so
// it can never be used twice, whatever follows); a missing, malformed,
// unknown, used or expired nonce, a changed payload, a recipient blocked
// since the preview, the rate limit, a duplicate the preview did not warn
// about, or a missing confirmer or sender each refuse the send before any
// dialog appears. Then a person is asked outside the agent; only their
// approval sends. The message is handed to the Sender, which verifies it.
//
// A delivery that chat.db reports as failed returns the result and an
// *Error with CodeDeliveryFailed; unconfirmed and cannot_verify return the
// result and no error (Delivery.Note says what is known).
func (g *Gate) Send(ctx context.Context, r SendRequest) (SendResult, error) {
	unlock, err := g.lock(ctx)
	if err != nil {
		return SendResult{}, err
	}
	defer unlock()
	now := g.o.Now()
	// Reaped after this attempt's nonce is consumed, so an expired nonce
	// is reported as expired rather than unknown.
	defer g.nonces.reap(now)

	refuse := func(c checked, err error) (SendResult, error) {
		e := g.entry(EventSendRefused, now, c, r.Text)
		if c.rcpt.Address == "" {
			e.Recipient = clip(sanitize.Field(r.To), 80)
		}
		g.record(withOutcome(e, "refused", CodeOf(err)))
		return SendResult{}, err
	}

	rec, err := g.nonces.consume(r.Nonce, now)
	if err != nil {
		return refuse(checked{}, err)
	}
	c, err := g.validate(r.To, r.Text, r.Service, r.ImagePath)
	if err != nil {
		return refuse(c, err)
	}
	if !g.nonces.matches(rec, payloadOf(r.To, r.Text, c)) {
		return refuse(c, newErr(CodePayloadMismatch, MsgPayloadMismatch))
	}
	dec, err := g.allowed(c.rcpt.Address)
	if err != nil {
		return refuse(c, err)
	}
	if !dec.Allowed {
		return refuse(c, newErr(CodeBlocked, "send gate: "+blockedSentence(dec)))
	}
	if err := g.checkRate(now); err != nil {
		return refuse(c, err)
	}
	prev, err := g.lastDuplicate(now, c, r.Text)
	if err != nil {
		return refuse(c, err)
	}
	var notes []string
	if !prev.IsZero() {
		if prev.UnixNano() >= rec.Issued {
			return refuse(c, newErr(CodeDuplicate, fmt.Sprintf("send gate: an identical message went to this recipient %s ago, after this preview was made; to send it again on purpose, call send_preview again", now.Sub(prev).Round(time.Second))))
		}
		notes = append(notes, "You sent this exact message to this person "+now.Sub(prev).Round(time.Second).String()+" ago.")
	}
	if err := g.o.Sender.Available(); err != nil {
		return refuse(c, err)
	}
	if err := g.o.Confirmer.Available(); err != nil {
		return refuse(c, err)
	}

	name := g.name(c.rcpt.Address)
	req := ConfirmRequest{Name: name, Address: c.rcpt.Address, Service: c.service, Text: r.Text, Notes: notes}
	if c.image != nil {
		req.Image = c.image.Name
		if !c.image.Decoded {
			req.Notes = append(req.Notes, "The image was recognised by its HEIC signature; its content could not be checked.")
		}
	}
	ans, cerr := g.o.Confirmer.Confirm(ctx, req)
	ce := g.entry(EventConfirmation, g.o.Now(), c, r.Text)
	ce.NonceID = rec.ID
	switch {
	case cerr != nil:
		g.record(withOutcome(ce, "failed", CodeConfirmFailed))
		return SendResult{}, newErr(CodeConfirmFailed, fmt.Sprintf("send gate: the confirmation dialog failed (%s); nothing was sent", clip(cerr.Error(), 200)))
	case ans != AnswerApproved:
		g.record(withOutcome(ce, string(ans), CodeCancelled))
		return SendResult{}, newErr(CodeCancelled, MsgCancelled)
	}
	if err := g.audit.append(withOutcome(ce, string(AnswerApproved), "")); err != nil {
		return SendResult{}, stateErr(err)
	}
	started := g.entry(EventSendStarted, g.o.Now(), c, r.Text)
	started.NonceID = rec.ID
	if err := g.audit.append(withOutcome(started, "started", "")); err != nil {
		return SendResult{}, stateErr(err)
	}

	d, serr := g.o.Sender.Send(ctx, Outgoing{Address: c.rcpt.Address, Service: c.service, Text: r.Text, Image: c.image})
	done := g.o.Now()
	re := g.entry(EventSendResult, done, c, r.Text)
	re.NonceID = rec.ID
	if serr != nil {
		code := CodeOf(serr)
		if code == "" {
			code = CodeSendFailed
			serr = newErr(code, "send failed: "+clip(serr.Error(), 200))
		}
		g.record(withOutcome(re, "error", code))
		return SendResult{}, serr
	}
	re.Outcome, re.AppleError, re.Rows = string(d.Status), d.ErrorCode, len(d.Rows)
	if err := g.audit.append(re); err != nil {
		g.o.Logger.Error("send audit log", "err", err)
		d.Note += " (the audit log could not be written: " + err.Error() + ")"
	}
	res := SendResult{
		Sent:     Sent{To: r.To, ResolvedName: name, Service: c.service, TextLength: utf8.RuneCountInString(r.Text), SentAt: done.In(g.o.Location).Format(sentAtLayout)},
		Delivery: d,
	}
	if d.Status == DeliveryFailed {
		return res, newErr(CodeDeliveryFailed, fmt.Sprintf("Messages did not send the message (error %d); it was handed over but chat.db shows it failed", d.ErrorCode))
	}
	return res, nil
}

// lock serialises sends: an in-process mutex, then an flock on
// $TIDINGS_HOME/send.lock for other processes. It waits while another send
// (and its dialog) is in progress, up to the context or two minutes.
func (g *Gate) lock(ctx context.Context) (func(), error) {
	busy := newErr(CodeBusy, "send gate: another send is waiting for its confirmation; try again when it is finished")
	deadline := time.Now().Add(2 * time.Minute)
	for !g.lockMu.TryLock() {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, busy
		}
		time.Sleep(50 * time.Millisecond)
	}
	f, err := os.OpenFile(filepath.Join(g.o.Home, lockName), os.O_RDWR|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		g.lockMu.Unlock()
		return nil, stateErr(err)
	}
	for {
		ok, err := lockFile(f)
		if err != nil {
			f.Close()
			g.lockMu.Unlock()
			return nil, stateErr(err)
		}
		if ok {
			break
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			f.Close()
			g.lockMu.Unlock()
			return nil, busy
		}
		time.Sleep(100 * time.Millisecond)
	}
	return func() {
		f.Close() // releases the flock
		g.lockMu.Unlock()
	}, nil
}

// Status describes the gate for get_status and the bridge's status action.
type Status struct {
	Confirmer          string `json:"confirmer"`
	ConfirmerAvailable bool   `json:"confirmer_available"`
	Sender             string `json:"sender"`
	SenderAvailable    bool   `json:"sender_available"`
	RateLimitPerHour   int    `json:"rate_limit_per_hour"`
	// Note is the first reason sending cannot work, if any.
	Note string `json:"note,omitempty"`
}

// Status reports whether a send could be confirmed and delivered now.
func (g *Gate) Status() Status {
	s := Status{Confirmer: g.o.Confirmer.Name(), Sender: g.o.Sender.Name(), RateLimitPerHour: g.o.RateLimit}
	serr, cerr := g.o.Sender.Available(), g.o.Confirmer.Available()
	s.SenderAvailable, s.ConfirmerAvailable = serr == nil, cerr == nil
	switch {
	case serr != nil:
		s.Note = serr.Error()
	case cerr != nil:
		s.Note = cerr.Error()
	}
	return s
}
