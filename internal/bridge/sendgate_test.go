//go:build unix

package bridge

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/send"
)

type staticPolicy struct{ p *policy.Policy }

func (s staticPolicy) Current() (*policy.Policy, error) { return s.p, nil }

// fakeConfirmer stands in for the native dialog (the process boundary).
type fakeConfirmer struct {
	mu     sync.Mutex
	answer send.Answer
	shown  int
}

func (f *fakeConfirmer) Name() string     { return "fake" }
func (f *fakeConfirmer) Available() error { return nil }
func (f *fakeConfirmer) Confirm(ctx context.Context, r send.ConfirmRequest) (send.Answer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shown++
	return f.answer, nil
}

// fakeSender records what would have gone to Messages.
type fakeSender struct {
	mu       sync.Mutex
	sent     []send.Outgoing
	delivery send.Delivery
}

func (f *fakeSender) Name() string     { return "fake" }
func (f *fakeSender) Available() error { return nil }
func (f *fakeSender) Send(ctx context.Context, m send.Outgoing) (send.Delivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m)
	return f.delivery, nil
}

func newSendHarness(t *testing.T) (*harness, *fakeConfirmer, *fakeSender) {
	t.Helper()
	conf := &fakeConfirmer{answer: send.AnswerApproved}
	snd := &fakeSender{delivery: send.Delivery{Status: send.DeliverySent, Note: "sent"}}
	pol, err := policy.New(policy.ModeBlocklist, []string{"+15551234567"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h *harness
	h = newHarness(t, "", func(o *Options) {
		o.Open = func(ctx context.Context, r Role) (Backend, error) {
			g, err := send.New(send.Options{Home: filepath.Join(h.dir), Policy: staticPolicy{pol}, Confirmer: conf, Sender: snd})
			if err != nil {
				return nil, err
			}
			return &HostBackend{Gate: &SendGate{Gate: g}}, nil
		}
	})
	return h, conf, snd
}

func keysOf(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	sort.Strings(k)
	return k
}

// TestSendGateOverBridge drives the real send gate through the worker:
// protocol 1.2's preview → nonce → confirm → send flow and its refusals with
// protocol 1.2's exact sentences.
func TestSendGateOverBridge(t *testing.T) {
	h, conf, snd := newSendHarness(t)
	to, text := "+14155551234", "Confirmed for 3pm."
	pv := h.roundTrip("p1", request("p1", ActionSendPreview, map[string]any{"to": to, "text": text, "service": "iMessage"}, ""))
	if pv["ok"] != true || strings.Join(keysOf(pv), ",") != "action,id,ok,preview,send_nonce,send_nonce_ttl_seconds" {
		t.Fatalf("1.2 preview = %v", pv)
	}
	prev := pv["preview"].(map[string]any)
	if strings.Join(keysOf(prev), ",") != "blocked,resolved_name,service,text,text_length,to" || prev["text_length"] != 18.0 || prev["blocked"] != false {
		t.Errorf("preview object = %v", prev)
	}
	nonce := pv["send_nonce"].(string)
	if pv["send_nonce_ttl_seconds"] != 60.0 || nonce == "" {
		t.Errorf("nonce %v", pv)
	}

	// No nonce, a changed payload: refused before any dialog.
	got := h.roundTrip("s0", request("s0", ActionSend, map[string]any{"to": to, "text": text, "service": "iMessage"}, ""))
	if got["error"] != ErrTextMissingNonce {
		t.Errorf("no nonce: %v", got)
	}
	got = h.roundTrip("s1", request("s1", ActionSend, map[string]any{"to": to, "text": text + "!", "service": "iMessage", "send_nonce": nonce}, ""))
	if got["error"] != ErrTextPayloadDiff {
		t.Errorf("changed text: %v", got)
	}
	// The nonce was deleted by that failure; a fresh preview is needed.
	pv = h.roundTrip("p2", request("p2", ActionSendPreview, map[string]any{"to": to, "text": text}, "1.3"))
	if pv["gate"] == nil || pv["error_code"] != nil {
		t.Errorf("1.3 preview lacks the gate detail: %v", pv)
	}
	nonce = pv["send_nonce"].(string)
	got = h.roundTrip("s2", request("s2", ActionSend, map[string]any{"to": to, "text": text, "send_nonce": nonce}, ""))
	if got["ok"] != true || strings.Join(keysOf(got), ",") != "action,id,ok,sent" {
		t.Fatalf("1.2 send = %v", got)
	}
	if sent := got["sent"].(map[string]any); sent["to"] != to || sent["text_length"] != 18.0 || sent["sent_at"] == "" {
		t.Errorf("sent = %v", sent)
	}
	if conf.shown != 1 || len(snd.sent) != 1 {
		t.Errorf("dialogs %d, sends %d", conf.shown, len(snd.sent))
	}
	// Replay of a used nonce.
	got = h.roundTrip("s3", request("s3", ActionSend, map[string]any{"to": to, "text": text, "send_nonce": nonce}, "1.3"))
	if got["ok"] != false || got["error_code"] != string(send.CodeNonceReplay) && got["error_code"] != string(send.CodeInvalidNonce) {
		t.Errorf("replay: %v", got)
	}
	// Cancelled in the dialog.
	conf.answer = send.AnswerCancelled
	pv = h.roundTrip("p4", request("p4", ActionSendPreview, map[string]any{"to": to, "text": "second"}, ""))
	got = h.roundTrip("s4", request("s4", ActionSend, map[string]any{"to": to, "text": "second", "send_nonce": pv["send_nonce"]}, ""))
	if got["error"] != ErrTextCancelled {
		t.Errorf("cancelled: %v", got)
	}
	// Group chat ids and blocked recipients.
	got = h.roundTrip("p5", request("p5", ActionSendPreview, map[string]any{"to": "chat123456789", "text": "hi"}, ""))
	if msg, _ := got["error"].(string); !strings.HasPrefix(msg, "group chat IDs not supported") {
		t.Errorf("group: %v", got)
	}
	got = h.roundTrip("p6", request("p6", ActionSendPreview, map[string]any{"to": "(555) 123-4567", "text": "hi"}, ""))
	if got["ok"] != true || got["preview"].(map[string]any)["blocked"] != true || got["send_nonce"] != nil {
		t.Errorf("blocked recipient: %v", got)
	}
	if len(snd.sent) != 1 {
		t.Errorf("a refused send reached Messages: %d", len(snd.sent))
	}
}

// TestRemoteSend: the MCP side's send gate over the bridge returns what
// the gate returns in-process, including a failed delivery's report.
func TestRemoteSend(t *testing.T) {
	h, _, snd := newSendHarness(t)
	h.watching()
	c := NewClient(h.dir)
	defer c.Close()
	rs := RemoteSend{C: c}
	ctx := context.Background()
	pv, err := rs.Preview(ctx, send.PreviewRequest{To: "+1 (415) 555-1234", Text: "On my way"})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Preview.Address == "" || pv.SendNonce == "" || pv.Preview.Service != "iMessage" {
		t.Errorf("preview %+v", pv)
	}
	snd.delivery = send.Delivery{Status: send.DeliveryFailed, ErrorCode: 22, Note: "Messages reported error 22"}
	res, err := rs.Send(ctx, send.SendRequest{To: "+1 (415) 555-1234", Text: "On my way", Nonce: pv.SendNonce})
	if send.CodeOf(err) != send.CodeDeliveryFailed || res.Delivery.ErrorCode != 22 || res.Sent.TextLength != 9 {
		t.Errorf("failed delivery: %+v %v", res, err)
	}
	_, err = rs.Send(ctx, send.SendRequest{To: "+14155551234", Text: "x", Nonce: ""})
	var se *send.Error
	if !errors.As(err, &se) || se.Code != send.CodeMissingNonce || se.Message != ErrTextMissingNonce {
		t.Errorf("missing nonce: %#v", err)
	}
	if _, err := rs.Preview(ctx, send.PreviewRequest{To: "+14155551234", Text: "x", ImagePath: "/etc/passwd"}); send.CodeOf(err) != send.CodeInvalidImage {
		t.Errorf("image over the bridge: %v", err)
	}
}
