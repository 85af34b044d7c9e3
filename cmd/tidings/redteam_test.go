package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/send"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// TestServeSendBlockedPersonOtherHandle: `tidings serve` wires the
// contacts book into the send gate, so blocking someone's number blocks
// sending to the e-mail address on their card (and to any spelling of the
// number): no nonce, no name, nothing reaches the dialog.
func TestServeSendBlockedPersonOtherHandle(t *testing.T) {
	conf, snd := fakeSendPlatform(t, send.AnswerApproved)
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	home := filepath.Join(t.TempDir(), "tidings")
	servicetest.WritePolicy(t, home, policy.ModeBlocklist, []string{servicetest.BlockedPhone}, nil)
	c := startClient(t, map[string]string{"TIDINGS_HOME": home, "TIDINGS_IMESSAGE": chatDB, "TIDINGS_CONTACTS": vcf,
		"TIDINGS_NOW": servicetest.Now.Format(time.RFC3339), "ENABLE_MCP_SEND_MESSAGE": "true"})
	for _, to := range []string{"zanzi@sentinel.example", "Zanzi@Sentinel.example", "+1\u00a0415\u00a0555\u00a00002"} {
		r := c.call("preview_message", map[string]any{"recipient": to, "text": "hi"})
		if r.IsErr {
			continue // refusing the spelling is as good as blocking it
		}
		var pv map[string]any
		if err := json.Unmarshal([]byte(r.Text), &pv); err != nil {
			t.Fatalf("%s: %v", to, err)
		}
		if pv["preview"].(map[string]any)["blocked"] != true || pv["send_nonce"] != nil || strings.Contains(r.Text, "Zanzisentinel") {
			t.Errorf("%s: preview %s, want blocked without nonce or name", to, r.Text)
		}
	}
	if len(conf.asked)+len(snd.sent) != 0 {
		t.Fatal("a blocked person's other handle reached the dialog or the sender")
	}
}
