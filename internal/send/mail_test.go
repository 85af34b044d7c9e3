package send

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/policy"
)

// fakeMailSender records mails and returns a fixed delivery.
type fakeMailSender struct {
	mu      sync.Mutex
	unavail error
	err     error
	sent    []MailMessage
}

func (f *fakeMailSender) Name() string           { return "fake-smtp" }
func (f *fakeMailSender) Available(string) error { return f.unavail }
func (f *fakeMailSender) calls() int             { f.mu.Lock(); defer f.mu.Unlock(); return len(f.sent) }
func (f *fakeMailSender) SendMail(_ context.Context, m MailMessage) (MailDelivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m)
	return MailDelivery{Accepted: true, Reply: "250 OK", SentCopy: "saved"}, f.err
}

type mailHarness struct {
	mg     *MailGate
	home   string
	clock  *clock
	pol    *staticPolicy
	conf   *fakeConfirmer
	sender *fakeMailSender
}

func newMailHarness(t *testing.T) *mailHarness {
	t.Helper()
	h := &mailHarness{home: filepath.Join(t.TempDir(), "home"), clock: newClock(), pol: &staticPolicy{},
		conf: &fakeConfirmer{answer: AnswerApproved}, sender: &fakeMailSender{}}
	h.pol.set(t, policy.ModeBlocklist, []string{"mallory@blocked.example"}, nil)
	mg, err := NewMailGate(Options{Home: h.home, Now: h.clock.Now, Location: time.UTC, Region: "US", Policy: h.pol, Confirmer: h.conf}, h.sender)
	if err != nil {
		t.Fatal(err)
	}
	h.mg = mg
	return h
}

func baseMail() MailMessage {
	return MailMessage{Account: "work", From: "me@example.com", To: []string{"ana@example.org"}, Cc: []string{"bruno@example.org"},
		Bcc: []string{"carla@example.org"}, Subject: "Lunch", Body: "Thursday at one?",
		Attachments: []MailAttachment{{Name: "menu.pdf", ContentType: "application/pdf", Data: []byte("%PDF"), SHA256: "aa"}}}
}

func TestMailNonceIsBoundToEveryField(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*MailMessage)
	}{
		{"account", func(m *MailMessage) { m.Account = "home" }},
		{"from", func(m *MailMessage) { m.From = "me@work.example" }},
		{"to", func(m *MailMessage) { m.To = []string{"evil@attacker.example"} }},
		{"to added", func(m *MailMessage) { m.To = append(m.To, "evil@attacker.example") }},
		{"cc", func(m *MailMessage) { m.Cc = nil }},
		{"cc moved to to", func(m *MailMessage) { m.To, m.Cc = append(m.To, m.Cc...), nil }},
		{"bcc", func(m *MailMessage) { m.Bcc = []string{"evil@attacker.example"} }},
		{"subject", func(m *MailMessage) { m.Subject = "Lunch!" }},
		{"body", func(m *MailMessage) { m.Body += " Bring the code 123456." }},
		{"subject and body swapped boundary", func(m *MailMessage) { m.Subject, m.Body = "Lunch1", "6:Thursday at one?" }},
		{"attachment content", func(m *MailMessage) { m.Attachments[0].SHA256 = "bb" }},
		{"attachment name", func(m *MailMessage) { m.Attachments[0].Name = "menu.exe" }},
		{"attachment dropped", func(m *MailMessage) { m.Attachments = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newMailHarness(t)
			m := baseMail()
			pv, err := h.mg.PreviewMail(context.Background(), m)
			if err != nil || pv.SendNonce == "" {
				t.Fatalf("preview: %+v, %v", pv, err)
			}
			changed := baseMail()
			changed.Attachments = []MailAttachment{m.Attachments[0]}
			tc.change(&changed)
			_, err = h.mg.SendMail(context.Background(), changed, pv.SendNonce)
			if CodeOf(err) != CodePayloadMismatch || h.conf.calls() != 0 || h.sender.calls() != 0 {
				t.Fatalf("changed %s: %v (code %q), %d dialogs, %d sends; want payload_mismatch before any dialog", tc.name, err, CodeOf(err), h.conf.calls(), h.sender.calls())
			}
			// The nonce is used up by the refused attempt.
			if _, err := h.mg.SendMail(context.Background(), m, pv.SendNonce); CodeOf(err) != CodeNonceReplay && CodeOf(err) != CodeInvalidNonce {
				t.Fatalf("the original after a refused attempt: %v", err)
			}
		})
	}
}

func TestMailGateDecidesInOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(*testing.T, *mailHarness)
		nonce   func(string) string
		code    Code
		dialogs int
		sends   int
	}{
		{"approved: sent once", nil, nil, "", 1, 1},
		{"no nonce", nil, func(string) string { return "" }, CodeMissingNonce, 0, 0},
		{"forged nonce", nil, func(n string) string { return n[:len(n)-2] + "AA" }, CodeInvalidNonce, 0, 0},
		{"expired nonce", func(t *testing.T, h *mailHarness) { h.clock.Advance(NonceTTL + time.Second) }, nil, CodeNonceExpired, 0, 0},
		{"recipient blocked since the preview", func(t *testing.T, h *mailHarness) {
			h.pol.set(t, policy.ModeBlocklist, []string{"bruno@example.org"}, nil)
		}, nil, CodeBlocked, 0, 0},
		{"allowlist without every recipient", func(t *testing.T, h *mailHarness) {
			h.pol.set(t, policy.ModeAllowlist, nil, []string{"ana@example.org"})
		}, nil, CodeBlocked, 0, 0},
		{"no confirmer", func(t *testing.T, h *mailHarness) { h.conf.unavail = newErr(CodeNoConfirmer, "no dialog") }, nil, CodeNoConfirmer, 0, 0},
		{"no sender", func(t *testing.T, h *mailHarness) { h.sender.unavail = newErr(CodeNoSender, "no smtp") }, nil, CodeNoSender, 0, 0},
		{"cancelled", func(t *testing.T, h *mailHarness) { h.conf.answer = AnswerCancelled }, nil, CodeCancelled, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newMailHarness(t)
			m := baseMail()
			pv, err := h.mg.PreviewMail(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(t, h)
			}
			nonce := pv.SendNonce
			if tc.nonce != nil {
				nonce = tc.nonce(nonce)
			}
			res, err := h.mg.SendMail(context.Background(), m, nonce)
			if CodeOf(err) != tc.code || h.conf.calls() != tc.dialogs || h.sender.calls() != tc.sends {
				t.Fatalf("%v (code %q), %d dialogs, %d sends; want %q, %d, %d", err, CodeOf(err), h.conf.calls(), h.sender.calls(), tc.code, tc.dialogs, tc.sends)
			}
			if tc.code == "" {
				if !res.Delivery.Accepted || res.Delivery.SentCopy != "saved" {
					t.Fatalf("result = %+v", res)
				}
				if r := h.conf.requests[0]; !strings.Contains(r.Address, "carla@example.org") || !strings.Contains(r.Text, "Thursday") || r.Image != "menu.pdf" {
					t.Fatalf("the dialog shows %+v", r)
				}
				if _, err := h.mg.SendMail(context.Background(), m, pv.SendNonce); CodeOf(err) != CodeNonceReplay {
					t.Fatalf("replay: %v", err)
				}
			}
			audit, _ := os.ReadFile(filepath.Join(h.home, auditFile))
			if strings.Contains(string(audit), "Thursday") || !strings.Contains(string(audit), `"service":"mail"`) {
				t.Fatalf("audit log holds the text or lacks mail lines: %s", audit)
			}
		})
	}
}

func TestMailPreviewOfABlockedRecipientHasNoNonce(t *testing.T) {
	h := newMailHarness(t)
	m := baseMail()
	m.Bcc = []string{"Mallory@Blocked.example"}
	m.Bcc[0] = strings.ToLower(m.Bcc[0])
	pv, err := h.mg.PreviewMail(context.Background(), m)
	if err != nil || !pv.Blocked || pv.SendNonce != "" {
		t.Fatalf("preview = %+v, %v; want blocked without a nonce", pv, err)
	}
	for _, bad := range []func(*MailMessage){
		func(m *MailMessage) { m.To = []string{"ana@example.org\r\nBcc: x@y.z"} },
		func(m *MailMessage) { m.Subject = "a\r\nBcc: x@y.z" },
		func(m *MailMessage) { m.To, m.Cc, m.Bcc = nil, nil, nil },
	} {
		mm := baseMail()
		bad(&mm)
		if _, err := h.mg.PreviewMail(context.Background(), mm); err == nil {
			t.Errorf("preview of %+v succeeded", mm)
		}
	}
}
