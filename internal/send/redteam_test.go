package send

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tidings-mcp/tidings/internal/policy"
)

// The red-team tests attack the send gate the way a prompt-injected agent
// would: reach a blocked person through another handle or spelling, smuggle
// a different text past the person who approves, reuse or forge a nonce,
// and race two approvals of one message.

// people is a NameResolver that also knows each person's handles.
type people map[string][]string // handle → the person's handles (first: name)

func (p people) DisplayName(h string) string {
	if hs, ok := p[h]; ok {
		return hs[0]
	}
	return ""
}

func (p people) HandlesOf(h string) []string {
	if hs, ok := p[h]; ok {
		return hs[1:]
	}
	return nil
}

// zanzi is a blocked person with a number and an e-mail address.
var zanzi = []string{"Zanzisentinel Quokkasentinel", "+14155550002", "zanzi@sentinel.example"}

func zanziHarness(t *testing.T) *harness {
	h := newHarness(t, func(o *Options) {
		o.Names = people{"+14155550002": zanzi, "zanzi@sentinel.example": zanzi, alex: {"Alex Example", alex}}
	})
	h.pol.set(t, policy.ModeBlocklist, []string{"+1 415 555 0002"}, nil)
	return h
}

// TestRedTeamBlockedPersonByAnotherHandle: blocking a number blocks every
// handle on that person's card, and every spelling of the number. The
// preview says blocked, mints no nonce and names nobody.
func TestRedTeamBlockedPersonByAnotherHandle(t *testing.T) {
	h := zanziHarness(t)
	for _, to := range []string{"zanzi@sentinel.example", "ZANZI@sentinel.example", "+14155550002", "\uff0b\uff11 415\u2011555\u20110002", "+1\u00a0415\u00a0555\u00a00002", "(415) 555-0002"} {
		res, err := h.g.Preview(context.Background(), PreviewRequest{To: to, Text: msg})
		if err != nil {
			// Refusing the spelling outright is as good as blocking it.
			if c := CodeOf(err); c != CodeInvalidRecipient {
				t.Errorf("%q: %v", to, err)
			}
			continue
		}
		b, _ := json.Marshal(res)
		if !res.Preview.Blocked || res.SendNonce != "" || strings.Contains(string(b), "Zanzi") || strings.Contains(string(b), "Quokka") {
			t.Errorf("%q: preview %s, want blocked, no nonce, no name", to, b)
		}
	}
	// A nonce minted before the block is refused at send for the other
	// handle too, before any dialog.
	h.pol.set(t, policy.ModeBlocklist, nil, nil)
	res := h.preview(t, "zanzi@sentinel.example", msg)
	if res.SendNonce == "" {
		t.Fatal("no nonce while nobody is blocked")
	}
	h.pol.set(t, policy.ModeBlocklist, []string{"4155550002"}, nil)
	_, err := h.g.Send(context.Background(), SendRequest{To: "zanzi@sentinel.example", Text: msg, Nonce: res.SendNonce})
	wantCode(t, err, CodeBlocked)
	if h.conf.calls() != 0 || h.sender.calls() != 0 {
		t.Fatal("a send to a blocked person's other handle reached the dialog or the sender")
	}
	// Someone else is unaffected.
	if res := h.preview(t, alex, msg); res.Preview.Blocked || res.SendNonce == "" {
		t.Fatalf("alex blocked: %+v", res.Preview)
	}
}

// TestRedTeamTextSmuggling: what the person approves is what is sent.
// Texts that look the same but differ (another normalisation form, an
// invisible character, a look-alike letter) are another payload; texts
// with characters the dialog cannot show are refused at preview.
func TestRedTeamTextSmuggling(t *testing.T) {
	const nfc, nfd = "caf\u00e9 at 3", "cafe\u0301 at 3"
	for _, tt := range []struct {
		name, preview, send string
	}{
		{"NFC previewed, NFD sent", nfc, nfd},
		{"NFD previewed, NFC sent", nfd, nfc},
		{"Cyrillic a", "pay alex", "p\u0430y alex"},
		{"no-break space", "see you at 3", "see you at\u00a03"},
		{"CRLF", "line one\nline two", "line one\r\nline two"},
		{"trailing newline", "ok", "ok\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			res := h.preview(t, alex, tt.preview)
			_, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: tt.send, Nonce: res.SendNonce})
			wantCode(t, err, CodePayloadMismatch)
			if h.conf.calls() != 0 || h.sender.calls() != 0 {
				t.Fatal("a changed text reached the dialog or the sender")
			}
		})
	}
	h := newHarness(t)
	for _, text := range []string{
		"ok\u202eevil", "ok\u200bthere", "ok\U000E0041\U000E0042", "ok\u2066x\u2069", "ok\ufe0f\ufe0f\ufe0f", "ok\x1b[2J", "ok\x00", "ok\u0085", "\xff\xfe",
	} {
		res, err := h.g.Preview(context.Background(), PreviewRequest{To: alex, Text: text})
		wantCode(t, err, CodeInvalidText)
		if res.SendNonce != "" {
			t.Fatalf("%q: nonce minted", text)
		}
	}
	// The approved text is exactly the previewed and the sent one.
	const text = "Meet at \u201cthe usual\u201d place \U0001F44B\nline two\ttab"
	res := h.preview(t, alex, text)
	if _, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: text, Nonce: res.SendNonce}); err != nil {
		t.Fatal(err)
	}
	if h.conf.requests[0].Text != text || h.sender.sent[0].Text != text || res.Preview.Text != text {
		t.Fatalf("preview %q, dialog %q, sent %q", res.Preview.Text, h.conf.requests[0].Text, h.sender.sent[0].Text)
	}
}

// TestRedTeamForgedNonces: nonces shaped to walk out of the nonce folder,
// or built from pieces of two real ones, are refused before any dialog,
// and nothing outside the folder is touched.
func TestRedTeamForgedNonces(t *testing.T) {
	h := newHarness(t)
	a := h.preview(t, alex, msg)
	b := h.preview(t, alex, "other text")
	idA, tagA, _ := parseToken(a.SendNonce)
	idB, tagB, _ := parseToken(b.SendNonce)
	canary := filepath.Join(h.home, "send.key")
	keyBefore, err := os.ReadFile(canary)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{
		"../send.key." + tagA, "..%2fsend.key." + tagA, "/etc/passwd." + tagA, idA + "/../" + idB + "." + tagA,
		idA + "." + tagB, // A's record, B's tag
		idB + "." + tagA,
		strings.ToUpper(idA) + "." + tagA,
		idA + "." + tagA + ".x",
		" " + idA + "." + tagA + "\x00",
		idA + "\n." + tagA,
	} {
		_, err := h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: n})
		if err == nil {
			t.Fatalf("nonce %q accepted", n)
		}
		if c := CodeOf(err); c != CodeInvalidNonce && c != CodeNonceReplay && c != CodePayloadMismatch && c != CodeMissingNonce {
			t.Errorf("nonce %q: %v", n, err)
		}
	}
	if h.conf.calls() != 0 || h.sender.calls() != 0 {
		t.Fatal("a forged nonce reached the dialog or the sender")
	}
	if keyAfter, err := os.ReadFile(canary); err != nil || string(keyAfter) != string(keyBefore) {
		t.Fatal("the key file was touched")
	}
}

// TestRedTeamTwoApprovalsRace: two previews of one message, sent at the
// same moment, put one message out; the second is refused as a duplicate
// (its nonce predates the first send) and never shows a second dialog.
func TestRedTeamTwoApprovalsRace(t *testing.T) {
	h := newHarness(t)
	n1 := h.preview(t, alex, msg).SendNonce
	n2 := h.preview(t, alex, msg).SendNonce
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, n := range []string{n1, n2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = h.g.Send(context.Background(), SendRequest{To: alex, Text: msg, Nonce: n})
		}()
	}
	wg.Wait()
	okN, dup := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			okN++
		case CodeOf(err) == CodeDuplicate:
			dup++
		default:
			t.Errorf("unexpected: %v", err)
		}
	}
	if okN != 1 || dup != 1 || h.conf.calls() != 1 || h.sender.calls() != 1 {
		t.Fatalf("%d sent, %d duplicates, %d dialogs, %d sends; want 1/1/1/1", okN, dup, h.conf.calls(), h.sender.calls())
	}
}
