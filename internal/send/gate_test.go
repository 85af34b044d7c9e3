package send

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

const (
	alex = "+14155551234"
	msg  = "Confirmed for 3pm."
)

func TestPreviewResponse(t *testing.T) {
	h := newHarness(t)
	res := h.preview(t, "(415) 555-1234", msg)
	want := Preview{To: "(415) 555-1234", ResolvedName: "Alex Example", Service: ServiceIMessage, Text: msg, TextLength: 18, Address: alex}
	got := res.Preview
	got.Warnings = nil
	if !jsonEqual(got, want) {
		t.Fatalf("preview = %+v\nwant      %+v", got, want)
	}
	if res.SendNonceTTLSeconds != 60 {
		t.Errorf("ttl = %d, want 60", res.SendNonceTTLSeconds)
	}
	if _, _, ok := parseToken(res.SendNonce); !ok {
		t.Fatalf("nonce %q is not a well-formed token", res.SendNonce)
	}
	// The protocol's field names, exactly.
	b, _ := json.Marshal(res)
	for _, k := range []string{`"preview":`, `"to":`, `"resolved_name":`, `"service":"iMessage"`, `"text":`, `"text_length":18`, `"blocked":false`, `"send_nonce":`, `"send_nonce_ttl_seconds":60`} {
		if !bytes.Contains(b, []byte(k)) {
			t.Errorf("response lacks %s: %s", k, b)
		}
	}
}

func TestStateFilesArePrivate(t *testing.T) {
	h := newHarness(t)
	res := h.preview(t, alex, msg)
	id, _, _ := parseToken(res.SendNonce)
	for path, want := range map[string]os.FileMode{
		filepath.Join(h.home, nonceDir):     0o700 | os.ModeDir,
		filepath.Join(h.home, nonceDir, id): 0o600,
		filepath.Join(h.home, keyFile):      0o600,
		filepath.Join(h.home, auditFile):    0o600,
	} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(path), fi.Mode(), want)
		}
	}
	// The nonce file holds the tag, not the message.
	data, _ := os.ReadFile(filepath.Join(h.home, nonceDir, id))
	// (The recipient's whole number, not a fragment: the random id and tag
	// held "415" by chance once in a few hundred runs.)
	if bytes.Contains(data, []byte("Confirmed")) || bytes.Contains(data, []byte("4155551234")) {
		t.Errorf("nonce file contains payload: %s", data)
	}
}

func TestSendHappyPath(t *testing.T) {
	h := newHarness(t)
	res := h.preview(t, alex, msg)
	h.clock.Advance(5 * time.Second)
	out, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: res.SendNonce})
	if err != nil {
		t.Fatal(err)
	}
	want := Sent{To: alex, ResolvedName: "Alex Example", Service: ServiceIMessage, TextLength: 18, SentAt: testclock.Text(time.DateOnly+"T"+time.TimeOnly, "2026-11-30T09:00:05")}
	if out.Sent != want {
		t.Fatalf("sent = %+v, want %+v", out.Sent, want)
	}
	if out.Delivery.Status != DeliverySent {
		t.Errorf("delivery = %+v", out.Delivery)
	}
	if h.conf.calls() != 1 || h.sender.calls() != 1 {
		t.Fatalf("confirmer %d calls, sender %d calls; want 1 and 1", h.conf.calls(), h.sender.calls())
	}
	wantReq := ConfirmRequest{Name: "Alex Example", Address: alex, Service: ServiceIMessage, Text: msg}
	if got := h.conf.requests[0]; !jsonEqual(got, wantReq) {
		t.Errorf("confirm request = %+v, want %+v", got, wantReq)
	}
	if got := h.sender.sent[0]; got.Address != alex || got.Text != msg || got.Service != ServiceIMessage || got.ChatGUID != "" {
		t.Errorf("sender got %+v", got)
	}
	entries, _ := os.ReadDir(filepath.Join(h.home, nonceDir))
	if len(entries) != 0 {
		t.Errorf("nonce folder not empty after the send: %v", entries)
	}
}

func TestSMSServiceIsBound(t *testing.T) {
	h := newHarness(t)
	res, err := h.g.Preview(context.Background(), PreviewRequest{To: alex, Text: msg, Service: "sms"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Preview.Service != ServiceSMS {
		t.Fatalf("service = %q", res.Preview.Service)
	}
	// "sms" and "SMS" are the same service; the canonical form is bound.
	if _, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Service: "SMS", Nonce: res.SendNonce}); err != nil {
		t.Fatal(err)
	}
	if h.sender.sent[0].Service != ServiceSMS {
		t.Errorf("sender service = %q", h.sender.sent[0].Service)
	}
}

func TestReplayIsRejectedBeforeConfirmation(t *testing.T) {
	h := newHarness(t)
	res := h.preview(t, alex, msg)
	req := SendRequest{To: alex, Text: msg, Nonce: res.SendNonce}
	if _, err := h.g.Send(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, err := h.g.Send(context.Background(), req)
	wantCode(t, err, CodeNonceReplay)
	if h.conf.calls() != 1 || h.sender.calls() != 1 {
		t.Fatalf("replay reached the confirmer or sender: %d/%d", h.conf.calls(), h.sender.calls())
	}
	// A cancelled attempt used the nonce up too.
	h.conf.answer = AnswerCancelled
	res = h.preview(t, alex, "second")
	req = SendRequest{To: alex, Text: "second", Nonce: res.SendNonce}
	_, err = h.g.Send(context.Background(), req)
	if err == nil || err.Error() != MsgCancelled {
		t.Fatalf("cancel: %v", err)
	}
	h.conf.answer = AnswerApproved
	_, err = h.g.Send(context.Background(), req)
	wantCode(t, err, CodeNonceReplay)
}

func TestTamperedPayloadIsRejected(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "a.png")
	writePNG(t, img, 4, 4)
	base := SendRequest{To: alex, Text: msg, Service: "iMessage", ImagePath: img}
	tests := []struct {
		name   string
		mutate func(*SendRequest)
		code   Code
	}{
		{"recipient other number", func(r *SendRequest) { r.To = "+14155559876" }, CodePayloadMismatch},
		{"recipient same number other spelling", func(r *SendRequest) { r.To = "(415) 555-1234" }, CodePayloadMismatch},
		{"recipient email", func(r *SendRequest) { r.To = "bob@example.com" }, CodePayloadMismatch},
		{"text one character", func(r *SendRequest) { r.Text = msg[:len(msg)-1] + "!" }, CodePayloadMismatch},
		{"text appended", func(r *SendRequest) { r.Text = msg + " " }, CodePayloadMismatch},
		{"service", func(r *SendRequest) { r.Service = "SMS" }, CodePayloadMismatch},
		{"image removed", func(r *SendRequest) { r.ImagePath = "" }, CodePayloadMismatch},
		{"image content changed", func(r *SendRequest) { writePNG(t, img, 5, 5) }, CodePayloadMismatch},
		{"recipient group id", func(r *SendRequest) { r.To = "chat123" }, CodeGroupChat},
		{"text with control", func(r *SendRequest) { r.Text = msg + "\x00" }, CodeInvalidText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writePNG(t, img, 4, 4)
			h := newHarness(t, func(o *Options) { o.FileDirs = []string{dir} })
			res, err := h.g.Preview(context.Background(), PreviewRequest{To: base.To, Text: base.Text, Service: base.Service, ImagePath: base.ImagePath})
			if err != nil {
				t.Fatal(err)
			}
			req := base
			req.Nonce = res.SendNonce
			tt.mutate(&req)
			_, err = h.g.Send(context.Background(), req)
			wantCode(t, err, tt.code)
			if tt.code == CodePayloadMismatch && err.Error() != MsgPayloadMismatch {
				t.Errorf("message %q, want the protocol's %q", err, MsgPayloadMismatch)
			}
			if h.conf.calls() != 0 || h.sender.calls() != 0 {
				t.Fatal("a tampered payload reached the confirmer or sender")
			}
			// The failed attempt deleted the nonce: the original payload
			// cannot use it any more.
			writePNG(t, img, 4, 4)
			orig := base
			orig.Nonce = res.SendNonce
			_, err = h.g.Send(context.Background(), orig)
			wantCode(t, err, CodeNonceReplay)
		})
	}
}

func TestNonceErrors(t *testing.T) {
	h := newHarness(t)
	_, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg})
	wantCode(t, err, CodeMissingNonce)
	if err.Error() != MsgMissingNonce {
		t.Errorf("message %q, want %q", err, MsgMissingNonce)
	}
	for _, bad := range []string{"Zk9...short-opaque-string", strings.Repeat("a", nonceTokenLen), "../../etc/passwd"} {
		_, err = h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: bad})
		wantCode(t, err, CodeInvalidNonce)
	}
	// A known id with a forged tag is refused and burns the nonce.
	res := h.preview(t, alex, msg)
	id, tag, _ := parseToken(res.SendNonce)
	forged := id + "." + strings.Repeat("A", len(tag))
	_, err = h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: forged})
	wantCode(t, err, CodeInvalidNonce)
	_, err = h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: res.SendNonce})
	wantCode(t, err, CodeNonceReplay)
	// A nonce from another install (another key) is unknown here.
	other := newHarness(t)
	foreign := other.preview(t, alex, msg).SendNonce
	_, err = h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: foreign})
	wantCode(t, err, CodeNonceReplay)
	if h.conf.calls() != 0 {
		t.Fatal("a bad nonce reached the confirmer")
	}
}

func TestNonceExpiry(t *testing.T) {
	for _, tt := range []struct {
		wait time.Duration
		ok   bool
	}{
		{59*time.Second + 999*time.Millisecond, true},
		{60 * time.Second, false},
		{10 * time.Minute, false},
	} {
		t.Run(tt.wait.String(), func(t *testing.T) {
			h := newHarness(t)
			res := h.preview(t, alex, msg)
			h.clock.Advance(tt.wait)
			_, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: res.SendNonce})
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, CodeNonceExpired)
			if h.conf.calls() != 0 {
				t.Fatal("an expired nonce reached the confirmer")
			}
		})
	}
}

func TestExpiredNoncesAreReaped(t *testing.T) {
	h := newHarness(t)
	h.preview(t, alex, msg)
	h.preview(t, alex, "other")
	h.clock.Advance(61 * time.Second)
	fresh := h.preview(t, alex, "third")
	entries, _ := os.ReadDir(filepath.Join(h.home, nonceDir))
	id, _, _ := parseToken(fresh.SendNonce)
	if len(entries) != 1 || entries[0].Name() != id {
		t.Fatalf("nonce folder = %v, want only %s", entries, id)
	}
}

func TestConcurrentSendsUseANonceOnce(t *testing.T) {
	h := newHarness(t)
	res := h.preview(t, alex, msg)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: res.SendNonce})
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if CodeOf(err) != CodeNonceReplay {
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 || h.conf.calls() != 1 || h.sender.calls() != 1 {
		t.Fatalf("%d sends succeeded, %d dialogs, %d sends; want 1 each", ok, h.conf.calls(), h.sender.calls())
	}
}

func TestBlockedRecipient(t *testing.T) {
	h := newHarness(t)
	h.pol.set(t, policy.ModeBlocklist, []string{"+1-415-555-1234", "secret@example.com"}, nil)
	for _, to := range []string{alex, "4155551234", "Secret@Example.com"} {
		res := h.preview(t, to, msg)
		if !res.Preview.Blocked || res.SendNonce != "" || res.SendNonceTTLSeconds != 0 {
			t.Fatalf("%s: preview = %+v, want blocked without nonce", to, res)
		}
		if res.Preview.ResolvedName != "" {
			t.Errorf("%s: a blocked person's name was looked up: %q", to, res.Preview.ResolvedName)
		}
	}
	// Blocked after the preview: the send re-checks.
	h.pol.set(t, policy.ModeBlocklist, nil, nil)
	res := h.preview(t, alex, msg)
	if res.Preview.Blocked || res.SendNonce == "" {
		t.Fatalf("unblocked preview = %+v", res)
	}
	h.pol.set(t, policy.ModeBlocklist, []string{"5551234"}, nil)
	_, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: res.SendNonce})
	wantCode(t, err, CodeBlocked)
	if h.conf.calls() != 0 {
		t.Fatal("a blocked send reached the confirmer")
	}
}

func TestAllowlistModeLimitsRecipients(t *testing.T) {
	h := newHarness(t)
	h.pol.set(t, policy.ModeAllowlist, nil, []string{"bob@example.com"})
	if res := h.preview(t, "bob@example.com", msg); res.Preview.Blocked || res.SendNonce == "" {
		t.Fatalf("allowlisted: %+v", res)
	}
	res := h.preview(t, alex, msg)
	if !res.Preview.Blocked || res.SendNonce != "" || !strings.Contains(strings.Join(res.Preview.Warnings, " "), "allowlist") {
		t.Fatalf("not allowlisted: %+v", res)
	}
}

func TestPolicyUnavailableRefuses(t *testing.T) {
	h := newHarness(t)
	res := h.preview(t, alex, msg)
	h.pol.mu.Lock()
	h.pol.p, h.pol.err = nil, errors.New("blocked_chats.txt is world-writable")
	h.pol.mu.Unlock()
	_, err := h.g.Preview(context.Background(), PreviewRequest{To: alex, Text: msg})
	wantCode(t, err, CodePolicy)
	_, err = h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: res.SendNonce})
	wantCode(t, err, CodePolicy)
}

func TestPreviewRefusals(t *testing.T) {
	h := newHarness(t)
	for _, tt := range []struct {
		to, text, service string
		code              Code
	}{
		{"chat123456789", msg, "", CodeGroupChat},
		{"iMessage;+;chat123456789", msg, "", CodeGroupChat},
		{alex, "", "", CodeInvalidText},
		{alex, strings.Repeat("x", 4001), "", CodeInvalidText},
		{alex, "hi\x1b[2J", "", CodeInvalidText},
		{alex, msg, "Telegram", CodeInvalidService},
		{"not a number", msg, "", CodeInvalidRecipient},
	} {
		res, err := h.g.Preview(context.Background(), PreviewRequest{To: tt.to, Text: tt.text, Service: tt.service})
		wantCode(t, err, tt.code)
		if res.SendNonce != "" {
			t.Fatalf("%q: nonce minted for a refused preview", tt.to)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(h.home, nonceDir))
	if len(entries) != 0 {
		t.Fatalf("refused previews left nonces: %v", entries)
	}
}

func TestRateLimitPersists(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.RateLimit = 3 })
	var early PreviewResult
	for i := range 3 {
		if i == 2 {
			// Minted while a slot was still free.
			early = h.preview(t, "bob@example.com", "early")
		}
		text := "message " + string(rune('a'+i))
		res := h.preview(t, alex, text)
		if _, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: text, Nonce: res.SendNonce}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if i < 2 {
			h.clock.Advance(10 * time.Minute)
		}
	}
	// The nonce minted before the limit was reached is refused at send.
	_, err := h.g.Send(context.Background(), SendRequest{To: "bob@example.com", Text: "early", Nonce: early.SendNonce})
	wantCode(t, err, CodeRateLimited)
	if h.conf.calls() != 3 || h.sender.calls() != 3 {
		t.Fatalf("dialogs %d, sends %d; want 3 and 3", h.conf.calls(), h.sender.calls())
	}
	// A new preview is refused, saying when a slot frees up (an hour after
	// the first send)...
	_, err = h.g.Preview(context.Background(), PreviewRequest{To: alex, Text: "message d"})
	wantCode(t, err, CodeRateLimited)
	if !strings.Contains(err.Error(), testclock.Text(time.DateOnly+"T"+time.TimeOnly, "2026-11-30T10:00:00")) {
		t.Errorf("refusal %q does not say when the next send is possible", err)
	}
	// ...also by a restarted gate, which reads the audit log back.
	g2 := h.reopen(t)
	_, err = g2.Preview(context.Background(), PreviewRequest{To: alex, Text: "message d"})
	wantCode(t, err, CodeRateLimited)
	// An hour after the first send a slot is free again.
	h.clock.Advance(40 * time.Minute)
	res, err := g2.Preview(context.Background(), PreviewRequest{To: alex, Text: "message e"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g2.Send(context.Background(), SendRequest{To: alex, Text: "message e", Nonce: res.SendNonce}); err != nil {
		t.Fatal(err)
	}
}

func TestRateLimitCountsAttemptsNotCancellations(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.RateLimit = 1 })
	h.conf.answer = AnswerCancelled
	for range 3 {
		res := h.preview(t, alex, msg)
		h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: res.SendNonce})
	}
	h.conf.answer = AnswerApproved
	res := h.preview(t, alex, msg)
	if _, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: res.SendNonce}); err != nil {
		t.Fatalf("cancelled dialogs used up the rate limit: %v", err)
	}
}

func TestDuplicateGuard(t *testing.T) {
	h := newHarness(t)
	// Two previews of the same message; the first is sent.
	first := h.preview(t, alex, msg)
	second := h.preview(t, alex, "confirmed  for 3PM.") // near-duplicate
	if _, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: first.SendNonce}); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(20 * time.Second)
	// The second was previewed before the first went out: refused.
	_, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: "confirmed  for 3PM.", Nonce: second.SendNonce})
	wantCode(t, err, CodeDuplicate)
	if !strings.Contains(err.Error(), "send_preview again") {
		t.Errorf("refusal %q does not say how to proceed", err)
	}
	// A new preview warns, and the dialog repeats the warning.
	third := h.preview(t, alex, msg)
	if w := strings.Join(third.Preview.Warnings, " "); !strings.Contains(w, "identical message") {
		t.Fatalf("warnings = %q", w)
	}
	if _, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: third.SendNonce}); err != nil {
		t.Fatal(err)
	}
	if n := h.conf.requests[len(h.conf.requests)-1].Notes; len(n) != 1 || !strings.Contains(n[0], "exact message") {
		t.Errorf("dialog notes = %q", n)
	}
	// Another recipient or another text is not a duplicate.
	if w := h.preview(t, "bob@example.com", msg).Preview.Warnings; len(w) != 0 {
		t.Errorf("other recipient warned: %q", w)
	}
	if w := h.preview(t, alex, "Confirmed for 4pm.").Preview.Warnings; len(w) != 0 {
		t.Errorf("other text warned: %q", w)
	}
	// Ten minutes later it is no longer a duplicate.
	h.clock.Advance(DuplicateWindow)
	if w := h.preview(t, alex, msg).Preview.Warnings; len(w) != 0 {
		t.Errorf("warned after the window: %q", w)
	}
}

func TestConfirmationOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(h *harness)
		code    Code
		dialogs int
	}{
		{"cancel", func(h *harness) { h.conf.answer = AnswerCancelled }, CodeCancelled, 1},
		{"timeout", func(h *harness) { h.conf.answer = AnswerTimeout }, CodeCancelled, 1},
		{"unknown answer", func(h *harness) { h.conf.answer = "maybe" }, CodeCancelled, 1},
		{"dialog error", func(h *harness) { h.conf.err = errors.New("osascript crashed") }, CodeConfirmFailed, 1},
		{"no confirmer", func(h *harness) { h.conf.unavail = newErr(CodeNoConfirmer, NoDialogSentence) }, CodeNoConfirmer, 0},
		{"no sender", func(h *harness) { h.sender.unavail = newErr(CodeNoSender, NoSenderSentence) }, CodeNoSender, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			tt.setup(h)
			res := h.preview(t, alex, msg)
			_, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: res.SendNonce})
			wantCode(t, err, tt.code)
			if tt.code == CodeCancelled && err.Error() != MsgCancelled {
				t.Errorf("message %q, want %q", err, MsgCancelled)
			}
			if h.conf.calls() != tt.dialogs {
				t.Errorf("dialogs = %d, want %d", h.conf.calls(), tt.dialogs)
			}
			if h.sender.calls() != 0 {
				t.Fatal("sent without approval")
			}
		})
	}
}

func TestPreviewWarnsWhenSendingCannotWork(t *testing.T) {
	h := newHarness(t)
	h.sender.unavail = newErr(CodeNoSender, NoSenderSentence)
	res := h.preview(t, alex, msg)
	if !strings.Contains(strings.Join(res.Preview.Warnings, " "), "sending is unavailable") {
		t.Fatalf("warnings = %q", res.Preview.Warnings)
	}
	st := h.g.Status()
	if st.SenderAvailable || !st.ConfirmerAvailable || st.Note != NoSenderSentence || st.RateLimitPerHour != DefaultRateLimit {
		t.Fatalf("status = %+v", st)
	}
}

func TestDeliveryOutcomesReachTheCaller(t *testing.T) {
	h := newHarness(t)
	h.sender.delivery = Delivery{Status: DeliveryFailed, ErrorCode: 22, Rows: []RowStatus{{RowID: 9, Part: PartText, Error: 22}}, Note: "x"}
	res := h.preview(t, alex, msg)
	out, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: res.SendNonce})
	wantCode(t, err, CodeDeliveryFailed)
	if out.Delivery.ErrorCode != 22 || out.Sent.To != alex {
		t.Fatalf("result = %+v", out)
	}
	h.sender.delivery = Delivery{Status: DeliveryUnconfirmed, Note: "not yet"}
	res = h.preview(t, alex, "another")
	out, err = h.g.Send(context.Background(), SendRequest{To: alex, Text: "another", Nonce: res.SendNonce})
	if err != nil || out.Delivery.Status != DeliveryUnconfirmed {
		t.Fatalf("unconfirmed: %+v, %v", out, err)
	}
	h.sender.err = newErr(CodeSendFailed, "send failed: Messages refused the message")
	res = h.preview(t, alex, "third")
	_, err = h.g.Send(context.Background(), SendRequest{To: alex, Text: "third", Nonce: res.SendNonce})
	wantCode(t, err, CodeSendFailed)
}

// TestAuditLog checks the log's mode and content: every step is recorded
// with the text's hash and length, and the text itself never appears.
func TestAuditLog(t *testing.T) {
	const sentinel = "zebra-sentinel-7731 meet at the old mill"
	h := newHarness(t)
	res := h.preview(t, alex, sentinel)
	if _, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: sentinel, Nonce: res.SendNonce}); err != nil {
		t.Fatal(err)
	}
	h.g.Send(context.Background(), SendRequest{To: alex, Text: sentinel, Nonce: res.SendNonce}) // replay
	h.g.Preview(context.Background(), PreviewRequest{To: "chat42", Text: sentinel})

	data := readAudit(t, h.home)
	if bytes.Contains(data, []byte("zebra")) || bytes.Contains(data, []byte("mill")) {
		t.Fatalf("audit log contains the message text:\n%s", data)
	}
	fi, _ := os.Stat(filepath.Join(h.home, auditFile))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("audit mode = %v", fi.Mode())
	}
	var events []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var e AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		events = append(events, e.Event+":"+e.Outcome)
		if e.Time != testclock.Text(time.RFC3339, "2026-11-30T09:00:00Z") {
			t.Errorf("time %q does not come from the gate's clock", e.Time)
		}
		if e.Event != EventPreview || e.Outcome != "refused" {
			if e.TextSHA256 != hashText(sentinel) || e.TextLength != len(sentinel) || e.Recipient != alex {
				t.Errorf("entry %+v lacks hash, length or recipient", e)
			}
		}
	}
	want := []string{"preview:nonce_issued", "confirmation:approved", "send_started:started", "send_result:sent", "send_refused:refused", "preview:refused"}
	if strings.Join(events, ",") != strings.Join(want, ",") {
		t.Fatalf("events = %v\nwant     %v", events, want)
	}
}

func TestAuditLogRefusesUnsafeFile(t *testing.T) {
	t.Run("symlink", func(t *testing.T) {
		h := newHarness(t)
		target := filepath.Join(t.TempDir(), "elsewhere")
		os.WriteFile(target, nil, 0o600)
		if err := os.Symlink(target, filepath.Join(h.home, auditFile)); err != nil {
			t.Fatal(err)
		}
		_, err := h.g.Preview(context.Background(), PreviewRequest{To: alex, Text: msg})
		wantCode(t, err, CodeState)
		if b, _ := os.ReadFile(target); len(b) != 0 {
			t.Fatal("the audit entry went through the symlink")
		}
		if entries, _ := os.ReadDir(filepath.Join(h.home, nonceDir)); len(entries) != 0 {
			t.Fatal("a nonce survived an unaudited preview")
		}
	})
	t.Run("readable by others", func(t *testing.T) {
		h := newHarness(t)
		os.WriteFile(filepath.Join(h.home, auditFile), nil, 0o644)
		os.Chmod(filepath.Join(h.home, auditFile), 0o644)
		_, err := h.g.Preview(context.Background(), PreviewRequest{To: alex, Text: msg})
		wantCode(t, err, CodeState)
	})
}

func TestNewRefusesUnsafeState(t *testing.T) {
	mk := func(t *testing.T) Options {
		return Options{Home: filepath.Join(t.TempDir(), "h"), Policy: &staticPolicy{}, Confirmer: &fakeConfirmer{}, Sender: &fakeSender{}}
	}
	t.Run("open nonce folder", func(t *testing.T) {
		o := mk(t)
		os.MkdirAll(filepath.Join(o.Home, nonceDir), 0o755)
		os.Chmod(filepath.Join(o.Home, nonceDir), 0o755)
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), "chmod 700") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("symlinked nonce folder", func(t *testing.T) {
		o := mk(t)
		os.MkdirAll(o.Home, 0o700)
		real := t.TempDir()
		os.Symlink(real, filepath.Join(o.Home, nonceDir))
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("readable key", func(t *testing.T) {
		o := mk(t)
		if _, err := New(o); err != nil {
			t.Fatal(err)
		}
		os.Chmod(filepath.Join(o.Home, keyFile), 0o644)
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("short key", func(t *testing.T) {
		o := mk(t)
		os.MkdirAll(o.Home, 0o700)
		os.WriteFile(filepath.Join(o.Home, keyFile), []byte("short"), 0o600)
		if _, err := New(o); err == nil {
			t.Fatal("a 5-byte key was accepted")
		}
	})
	t.Run("key is stable", func(t *testing.T) {
		o := mk(t)
		g1, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		g2, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g1.nonces.key, g2.nonces.key) || len(g1.nonces.key) != keySize {
			t.Fatal("the key changed between two gates on one home")
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
