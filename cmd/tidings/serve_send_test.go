package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/send"
	"github.com/tidings-mcp/tidings/internal/service/servicetest"
)

// fakeConfirmer stands in for the native dialog: it records what the
// person would have been shown and answers as told.
type fakeConfirmer struct {
	mu     sync.Mutex
	answer send.Answer
	asked  []send.ConfirmRequest
}

func (f *fakeConfirmer) Name() string     { return "fake" }
func (f *fakeConfirmer) Available() error { return nil }
func (f *fakeConfirmer) Confirm(_ context.Context, r send.ConfirmRequest) (send.Answer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, r)
	return f.answer, nil
}

// fakeSender records what would have gone to Messages; nothing leaves.
type fakeSender struct {
	mu   sync.Mutex
	sent []send.Outgoing
}

func (f *fakeSender) Name() string     { return "fake" }
func (f *fakeSender) Available() error { return nil }
func (f *fakeSender) Send(_ context.Context, m send.Outgoing) (send.Delivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m)
	return send.Delivery{Status: send.DeliverySent, Rows: []send.RowStatus{{RowID: 4242, Part: send.PartText, IsSent: true}},
		Note: "fake sender: recorded by the test"}, nil
}

// fakeSendPlatform makes serve build its real gate (send.New, same
// options as send.FromConfig) with the fakes behind it.
func fakeSendPlatform(t *testing.T, answer send.Answer) (*fakeConfirmer, *fakeSender) {
	t.Helper()
	conf, snd := &fakeConfirmer{answer: answer}, &fakeSender{}
	prev := newSendGate
	newSendGate = func(cfg *config.Config, pol send.PolicySource, names send.NameResolver, dirs []string, logger *slog.Logger) (*send.Gate, error) {
		return send.New(send.Options{Home: cfg.Home, Now: cfg.Now, Region: cfg.Region, Policy: pol, Names: names,
			Confirmer: conf, Sender: snd, FileDirs: dirs, RateLimit: cfg.SendRateLimit, Logger: logger})
	}
	t.Cleanup(func() { newSendGate = prev })
	return conf, snd
}

// TestServeSendEndToEnd: with ENABLE_MCP_SEND_MESSAGE=true, `tidings
// serve` builds the send gate (home policy, contacts for names) and an MCP
// client previews, sends and sees the delivery outcome; the nonce works
// once; a blocked recipient gets no nonce; the audit log never holds the
// text.
func TestServeSendEndToEnd(t *testing.T) {
	conf, snd := fakeSendPlatform(t, send.AnswerApproved)
	dir := t.TempDir()
	chatDB, vcf := servicetest.BuildFixture(t, dir)
	home := filepath.Join(t.TempDir(), "tidings")
	servicetest.WritePolicy(t, home, policy.ModeBlocklist, []string{servicetest.BlockedPhone}, nil)
	c := startClient(t, map[string]string{"TIDINGS_HOME": home, "TIDINGS_IMESSAGE": chatDB, "TIDINGS_CONTACTS": vcf,
		"TIDINGS_NOW": servicetest.Now.Format(time.RFC3339), "ENABLE_MCP_SEND_MESSAGE": "true"})
	if names := c.toolNames(); !hasAll(names, "preview_message", "send_message") {
		t.Fatalf("send tools not registered: %v", names)
	}
	st := c.mustCall("get_status", nil)
	if st["access"].(map[string]any)["send_enabled"] != true {
		t.Errorf("get_status access = %v", st["access"])
	}

	const text = "On se voit samedi à midi ?"
	args := map[string]any{"recipient": "+33 6 39 98 11 11", "text": text}
	pv := c.mustCall("preview_message", args)
	p := pv["preview"].(map[string]any)
	nonce, _ := pv["send_nonce"].(string)
	if p["resolved_name"] != "Camille Durand" || p["address"] != "+33639981111" || p["blocked"] != false || nonce == "" {
		t.Fatalf("preview = %v", pv)
	}
	if len(conf.asked)+len(snd.sent) != 0 {
		t.Fatal("a preview reached the confirmer or the sender")
	}
	args["send_nonce"] = nonce
	out := c.mustCall("send_message", args)
	sent, delivery := out["sent"].(map[string]any), out["delivery"].(map[string]any)
	if sent["resolved_name"] != "Camille Durand" || sent["text_length"] != 26.0 || delivery["status"] != "sent" ||
		!strings.Contains(delivery["note"].(string), "fake sender") {
		t.Errorf("send_message = %v", out)
	}
	if len(conf.asked) != 1 || conf.asked[0].Name != "Camille Durand" || conf.asked[0].Text != text {
		t.Errorf("confirmer asked %+v", conf.asked)
	}
	if len(snd.sent) != 1 || snd.sent[0].Address != "+33639981111" || snd.sent[0].Text != text || snd.sent[0].Service != send.ServiceIMessage {
		t.Errorf("sender got %+v", snd.sent)
	}

	// The nonce is single-use.
	if r := c.call("send_message", args); !r.IsErr || len(snd.sent) != 1 {
		t.Errorf("a replayed nonce: %v %s; sends %d", r.IsErr, r.Text, len(snd.sent))
	}
	// A blocked recipient: no nonce, and the next step says stop.
	bl := c.mustCall("preview_message", map[string]any{"recipient": "415-555-0002", "text": "hi"})
	if bl["preview"].(map[string]any)["blocked"] != true || bl["send_nonce"] != nil || !strings.Contains(bl["next_step"].(string), "Do not send") {
		t.Errorf("blocked preview = %v", bl)
	}
	audit, err := os.ReadFile(filepath.Join(home, "audit.jsonl"))
	if err != nil || !strings.Contains(string(audit), `"sent"`) || strings.Contains(string(audit), "samedi") {
		t.Errorf("audit log (err %v):\n%s", err, audit)
	}
}

// TestServeSendCancelled: the person's "no" in the dialog stops the send.
func TestServeSendCancelled(t *testing.T) {
	_, snd := fakeSendPlatform(t, send.AnswerCancelled)
	c := startClient(t, map[string]string{"ENABLE_MCP_SEND_MESSAGE": "true"})
	args := map[string]any{"recipient": "+14155551234", "text": "Running late"}
	pv := c.mustCall("preview_message", args)
	args["send_nonce"] = pv["send_nonce"]
	r := c.call("send_message", args)
	if !r.IsErr || !strings.Contains(r.Text, "send cancelled by user") || len(snd.sent) != 0 {
		t.Errorf("cancelled send: %v %s; sends %d", r.IsErr, r.Text, len(snd.sent))
	}
}

// TestServeSendGateUnavailable: a gate that cannot be built (here a zero
// rate limit in config.toml) leaves the tools registered, answering why.
func TestServeSendGateUnavailable(t *testing.T) {
	home := filepath.Join(t.TempDir(), "tidings")
	os.MkdirAll(home, 0o700)
	os.WriteFile(filepath.Join(home, "config.toml"), []byte("send_rate_limit = 0\n"), 0o600)
	c := startClient(t, map[string]string{"TIDINGS_HOME": home, "ENABLE_MCP_SEND_MESSAGE": "true"})
	r := c.call("preview_message", map[string]any{"recipient": "+14155551234", "text": "hi"})
	if !r.IsErr || !strings.Contains(r.Text, "send_rate_limit = 0") {
		t.Errorf("preview without a gate: %v %s", r.IsErr, r.Text)
	}
}

// TestServeSendToolsAbsent: without ENABLE_MCP_SEND_MESSAGE, or with
// --read-only, the send tools are not registered and nothing is prepared.
func TestServeSendToolsAbsent(t *testing.T) {
	fakeSendPlatform(t, send.AnswerApproved)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"switch off", nil, nil},
		{"switch false", map[string]string{"ENABLE_MCP_SEND_MESSAGE": "false"}, nil},
		{"read-only", map[string]string{"ENABLE_MCP_SEND_MESSAGE": "true"}, []string{"--read-only"}},
		{"read-only env", map[string]string{"ENABLE_MCP_SEND_MESSAGE": "true", "TIDINGS_READ_ONLY": "1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "tidings")
			env := map[string]string{"TIDINGS_HOME": home}
			for k, v := range tc.env {
				env[k] = v
			}
			c := startClient(t, env, tc.args...)
			if names := c.toolNames(); !hasNone(names, "preview_message", "send_message") {
				t.Errorf("send tools registered: %v", names)
			}
			st := c.mustCall("get_status", nil)
			if st["access"].(map[string]any)["send_enabled"] != false {
				t.Errorf("access = %v", st["access"])
			}
			if _, err := os.Stat(filepath.Join(home, "nonces")); err == nil {
				t.Error("the send gate's state was created although sending is off")
			}
		})
	}
}

// TestServeReadOnlyInventory runs --read-only with every other setting
// asking for write tools (send switch on, a profile with access = "write"
// and file_dirs) and checks tools/list against the whole inventory: every
// write tool (save_attachment writes files, the send tools send) is
// absent, every read tool present, and each listed tool says readOnlyHint.
func TestServeReadOnlyInventory(t *testing.T) {
	fakeSendPlatform(t, send.AnswerApproved)
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile.toml")
	os.WriteFile(profile, []byte("access = \"write\"\nfile_dirs = [\""+dir+"\"]\n"), 0o600)
	env := map[string]string{"ENABLE_MCP_SEND_MESSAGE": "true"}
	for _, ro := range []bool{false, true} {
		args := []string{"--profile", profile}
		if ro {
			args = append(args, "--read-only")
		}
		c := startClient(t, env, args...)
		listed := map[string]bool{}
		for _, tl := range c.tools() {
			listed[tl.Name] = true
			if ro && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
				t.Errorf("read-only server lists %s without readOnlyHint", tl.Name)
			}
		}
		for _, tool := range mcpserver.Inventory() {
			want := !ro || !tool.IsWrite()
			if listed[tool.Name] != want {
				t.Errorf("read-only %v: %s listed = %v, want %v", ro, tool.Name, listed[tool.Name], want)
			}
		}
		for _, w := range []string{"save_attachment", "preview_message", "send_message"} {
			if listed[w] == ro {
				t.Errorf("read-only %v: %s listed = %v", ro, w, listed[w])
			}
		}
	}
}

// TestServeDemoNeverRegistersSendTools: with --demo the send tools are not
// registered even when ENABLE_MCP_SEND_MESSAGE=true (the demo's people are
// made up, so a registered send tool could only answer "off"), and
// get_status says send is off for the reason "demo mode".
func TestServeDemoNeverRegistersSendTools(t *testing.T) {
	fakeSendPlatform(t, send.AnswerApproved)
	root := t.TempDir()
	env := map[string]string{"HOME": root, "TIDINGS_HOME": filepath.Join(root, "tidings"), "ENABLE_MCP_SEND_MESSAGE": "true",
		"TIDINGS_NOW": anchorRFC3339}
	c := startClient(t, env, "--demo")
	if names := c.toolNames(); !hasNone(names, "preview_message", "send_message") {
		t.Errorf("send tools registered in demo mode: %v", names)
	}
	st := c.mustCall("get_status", nil)
	if st["access"].(map[string]any)["send_enabled"] != false {
		t.Errorf("access = %v", st["access"])
	}
	reasons := map[string]string{}
	for _, ts := range st["toolsets"].([]any) {
		for _, d := range ts.(map[string]any)["tools"].([]any) {
			dm := d.(map[string]any)
			if dm["enabled"] == false {
				reasons[dm["tool"].(string)], _ = dm["reason"].(string)
			}
		}
	}
	for _, tool := range []string{"preview_message", "send_message"} {
		if !strings.HasPrefix(reasons[tool], "demo mode") {
			t.Errorf("%s: reason %q, want \"demo mode: …\"", tool, reasons[tool])
		}
	}
}
