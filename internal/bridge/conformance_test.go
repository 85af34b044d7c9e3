//go:build unix

package bridge

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/send"
)

// TestSeedSentences: the error strings protocol 1.2 defines are the send
// gate's own, byte for byte (clients match them), and protocol 1.2's examples
// carry them.
func TestSeedSentences(t *testing.T) {
	ex := loadExamples(t)
	for _, tc := range []struct{ bridge, gate, example string }{
		{ErrTextMissingNonce, send.MsgMissingNonce, "send_missing_nonce"},
		{ErrTextPayloadDiff, send.MsgPayloadMismatch, ""},
		{ErrTextCancelled, send.MsgCancelled, "send_cancelled"},
		{ErrTextNotPermitted, "", "role_denied"},
	} {
		if tc.gate != "" && tc.bridge != tc.gate {
			t.Errorf("bridge %q != gate %q", tc.bridge, tc.gate)
		}
		if tc.example != "" {
			want := decodeAny(t, ex[tc.example].Response).(map[string]any)["error"]
			if want != tc.bridge {
				t.Errorf("seed example %s says %q, the bridge %q", tc.example, want, tc.bridge)
			}
		}
	}
	if !strings.HasPrefix(send.MsgGroupChat, "group chat IDs not supported") {
		t.Errorf("group refusal = %q", send.MsgGroupChat)
	}
}

// TestOneTwoSeesOnlyOneTwo: a 1.2 client never sees a 1.3-only field — not
// in a success (the gate's preview, the delivery report), not in an error
// (error_code, a failed send's detail) — and a 1.3 client gets them.
func TestOneTwoSeesOnlyOneTwo(t *testing.T) {
	h, _, snd := newSendHarness(t)
	to, text := "+14155551234", "Running late"
	errorKeys12 := "allowed_actions,bridge_role,error,id,ok"
	for i, v := range []string{"", Version13} {
		id := func(s string) string { return fmt.Sprintf("%s%d", s, i) }
		pv := h.roundTrip(id("p"), request(id("p"), ActionSendPreview, map[string]any{"to": to, "text": text}, v))
		keys := strings.Join(keysOf(pv), ",")
		if v == "" && keys != "action,id,ok,preview,send_nonce,send_nonce_ttl_seconds" || v == Version13 && pv["gate"] == nil {
			t.Errorf("%q preview keys = %s", v, keys)
		}
		snd.delivery = send.Delivery{Status: send.DeliveryFailed, ErrorCode: 22, Note: "error 22"}
		got := h.roundTrip(id("s"), request(id("s"), ActionSend, map[string]any{"to": to, "text": text, "send_nonce": pv["send_nonce"]}, v))
		keys = strings.Join(keysOf(got), ",")
		if v == "" && keys != errorKeys12 {
			t.Errorf("1.2 failed send keys = %s", keys)
		}
		if v == Version13 && (got["error_code"] != string(send.CodeDeliveryFailed) || got["delivery"] == nil || got["sent"] == nil) {
			t.Errorf("1.3 failed send = %v", got)
		}
		bad := h.roundTrip(id("b"), request(id("b"), ActionReview, map[string]any{"days": "soon"}, v))
		if keys := strings.Join(keysOf(bad), ","); v == "" && keys != errorKeys12 || v == Version13 && bad["error_code"] != CodeInvalidParams {
			t.Errorf("%q invalid params = %v", v, bad)
		}
	}
	// Unknown top-level keys are ignored, and so are a 1.2 action's
	// unknown parameters: a newer minor version may add fields (seed:
	// "minor versions add backward-compatible actions or fields").
	got := h.roundTrip("u1", []byte(`{"id":"u1","action":"status","params":{"verbose":true},"trace":"abc"}`))
	if got["ok"] != true || got["trace"] != nil || got["verbose"] != nil {
		t.Errorf("unknown keys: %v", got)
	}
}
