package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/send"
)

// TestSendToolsRegistration proves the quarantine for the two send tools:
// absent unless ENABLE_MCP_SEND_MESSAGE is on, and absent in read-only mode
// whatever else is set.
func TestSendToolsRegistration(t *testing.T) {
	write := &Profile{Access: "write", AllowExternal: true}
	tests := []struct {
		name string
		f    Filters
		want []string // send tools registered
	}{
		{"default", Filters{}, nil},
		{"send enabled", Filters{EnableSend: true}, []string{"preview_message", "send_message"}},
		{"read-only beats send", Filters{ReadOnly: true, EnableSend: true, Profile: write}, nil},
		{"read-only alone", Filters{ReadOnly: true}, nil},
		{"profile access read", Filters{EnableSend: true, Profile: &Profile{Access: "read", AllowExternal: true}}, nil},
		{"profile without external", Filters{EnableSend: true, Profile: &Profile{Access: "write"}}, []string{"preview_message"}},
		{"other toolset only", Filters{EnableSend: true, Toolsets: []string{"status"}}, nil},
		{"send toolset", Filters{EnableSend: true, Toolsets: []string{"send"}}, []string{"preview_message", "send_message"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := New(&Deps{}, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range srv.Selection.Names() {
				if n == "preview_message" || n == "send_message" {
					got = append(got, n)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("send tools = %v, want %v", got, tt.want)
			}
			// What tools/list shows agrees with the selection.
			res, err := connect(t, srv.SDK).ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, tl := range res.Tools {
				if tl.Name == "preview_message" || tl.Name == "send_message" {
					listed = append(listed, tl.Name)
				}
			}
			if !slices.Equal(listed, tt.want) {
				t.Fatalf("tools/list shows %v, want %v", listed, tt.want)
			}
			hasInstr := strings.Contains(srv.Instructions, "call preview_message")
			if hasInstr != slices.Contains(tt.want, "preview_message") {
				t.Errorf("instructions mention the send flow = %v with tools %v", hasInstr, tt.want)
			}
		})
	}
}

func TestSendToolHints(t *testing.T) {
	for _, tt := range []struct {
		tool                                     Tool
		readOnly, destructive, idempotent, world Hint
	}{
		{previewMessage, No, No, No, No},
		{sendMessage, No, Yes, No, Yes},
	} {
		tl := tt.tool
		if tl.ReadOnly != tt.readOnly || tl.Destructive != tt.destructive || tl.Idempotent != tt.idempotent || tl.OpenWorld != tt.world || !tl.SendGate || tl.Toolset != ToolsetSend {
			t.Errorf("%s: hints %v/%v/%v/%v gate %v toolset %s", tl.Name, tl.ReadOnly, tl.Destructive, tl.Idempotent, tl.OpenWorld, tl.SendGate, tl.Toolset)
		}
	}
}

// fakeGate records calls and answers as told.
type fakeGate struct {
	previews []send.PreviewRequest
	sends    []send.SendRequest
	pres     send.PreviewResult
	sres     send.SendResult
	err      error
}

func (f *fakeGate) Preview(_ context.Context, r send.PreviewRequest) (send.PreviewResult, error) {
	f.previews = append(f.previews, r)
	return f.pres, f.err
}

func (f *fakeGate) Send(_ context.Context, r send.SendRequest) (send.SendResult, error) {
	f.sends = append(f.sends, r)
	return f.sres, f.err
}

func sendSession(t *testing.T, g SendService) *mcp.ClientSession {
	t.Helper()
	srv, err := New(&Deps{Send: g}, Filters{EnableSend: true})
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, srv.SDK)
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
	}
	return res, out
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestPreviewMessageTool(t *testing.T) {
	g := &fakeGate{pres: send.PreviewResult{
		Preview:   send.Preview{To: "+14155551234", ResolvedName: "Alex", Service: "iMessage", Text: "Confirmed for 3pm.", TextLength: 18, Address: "+14155551234"},
		SendNonce: "nonce", SendNonceTTLSeconds: 60,
	}}
	cs := sendSession(t, g)
	res, out := call(t, cs, "preview_message", map[string]any{"recipient": "+14155551234", "text": "Confirmed for 3pm."})
	if res.IsError {
		t.Fatalf("error: %s", textOf(res))
	}
	if g.previews[0] != (send.PreviewRequest{To: "+14155551234", Text: "Confirmed for 3pm."}) {
		t.Fatalf("gate got %+v", g.previews[0])
	}
	pv := out["preview"].(map[string]any)
	if out["send_nonce"] != "nonce" || out["send_nonce_ttl_seconds"] != 60.0 || pv["resolved_name"] != "Alex" || pv["text_length"] != 18.0 || pv["blocked"] != false {
		t.Fatalf("structured = %v", out)
	}
	if !strings.Contains(out["next_step"].(string), "send_message") || !strings.Contains(textOf(res), `"send_nonce":"nonce"`) {
		t.Fatalf("next_step / text = %v / %s", out["next_step"], textOf(res))
	}

	// The bridge's name for the field works too.
	call(t, cs, "preview_message", map[string]any{"to": "bob@example.com", "text": "hi", "service": "SMS", "image_path": "/tmp/a.png"})
	if g.previews[1] != (send.PreviewRequest{To: "bob@example.com", Text: "hi", Service: "SMS", ImagePath: "/tmp/a.png"}) {
		t.Fatalf("gate got %+v", g.previews[1])
	}

	// Blocked: no nonce, and the next step says to stop.
	g.pres = send.PreviewResult{Preview: send.Preview{To: "+1", Blocked: true, Service: "iMessage"}}
	_, out = call(t, cs, "preview_message", map[string]any{"recipient": "+1", "text": "x"})
	if _, ok := out["send_nonce"]; ok || !strings.HasPrefix(out["next_step"].(string), "Do not send") {
		t.Fatalf("blocked = %v", out)
	}
}

func TestSendToolsArgumentErrors(t *testing.T) {
	g := &fakeGate{}
	cs := sendSession(t, g)
	for _, tt := range []struct {
		tool string
		args map[string]any
		msg  string
	}{
		{"preview_message", map[string]any{"text": "hi"}, "recipient is required"},
		{"preview_message", map[string]any{"recipient": "a@b.co", "to": "c@d.co", "text": "hi"}, "differ"},
		{"preview_message", map[string]any{"recipient": "a@b.co"}, "text"},
		{"preview_message", map[string]any{"recipient": "a@b.co", "text": "hi", "service": "RCS"}, "service"},
		{"preview_message", map[string]any{"recipient": "a@b.co", "text": "hi", "confirm": true}, "confirm"},
		{"send_message", map[string]any{"recipient": "a@b.co", "text": "hi"}, "send_nonce"},
	} {
		res, _ := call(t, cs, tt.tool, tt.args)
		if !res.IsError || !strings.Contains(textOf(res), tt.msg) {
			t.Errorf("%s %v: isError=%v %q, want an error about %q", tt.tool, tt.args, res.IsError, textOf(res), tt.msg)
		}
	}
	if len(g.previews)+len(g.sends) != 0 {
		t.Fatal("a bad call reached the gate")
	}
	// The same value under both names is fine.
	res, _ := call(t, cs, "preview_message", map[string]any{"recipient": "a@b.co", "to": "a@b.co", "text": "hi"})
	if res.IsError || g.previews[0].To != "a@b.co" {
		t.Fatalf("identical alias refused: %s", textOf(res))
	}
}

func TestSendMessageTool(t *testing.T) {
	g := &fakeGate{sres: send.SendResult{
		Sent:     send.Sent{To: "+14155551234", ResolvedName: "Alex", Service: "iMessage", TextLength: 2, SentAt: "2026-11-30T09:00:05"},
		Delivery: send.Delivery{Status: send.DeliverySent, Rows: []send.RowStatus{{RowID: 5, Part: "text", IsSent: true}}, Note: "chat.db shows the message as sent"},
	}}
	cs := sendSession(t, g)
	res, out := call(t, cs, "send_message", map[string]any{"recipient": "+14155551234", "text": "hi", "send_nonce": " tok "})
	if res.IsError {
		t.Fatalf("error: %s", textOf(res))
	}
	if g.sends[0] != (send.SendRequest{To: "+14155551234", Text: "hi", Nonce: "tok"}) {
		t.Fatalf("gate got %+v", g.sends[0])
	}
	if out["sent"].(map[string]any)["sent_at"] != "2026-11-30T09:00:05" || out["delivery"].(map[string]any)["status"] != "sent" {
		t.Fatalf("structured = %v", out)
	}

	// A refusal from the gate is an isError result with its sentence.
	g.err = &send.Error{Code: send.CodeMissingNonce, Message: send.MsgMissingNonce}
	res, _ = call(t, cs, "send_message", map[string]any{"to": "+14155551234", "text": "hi", "send_nonce": ""})
	if !res.IsError || textOf(res) != send.MsgMissingNonce {
		t.Fatalf("refusal = %v %q", res.IsError, textOf(res))
	}

	// A failed delivery is an error that still carries what chat.db said.
	g.err = &send.Error{Code: send.CodeDeliveryFailed, Message: "Messages did not send the message (error 22)"}
	g.sres.Delivery = send.Delivery{Status: send.DeliveryFailed, ErrorCode: 22, Note: "Messages reports error 22 for the text: the message was not sent"}
	res, out = call(t, cs, "send_message", map[string]any{"recipient": "+14155551234", "text": "hi", "send_nonce": "tok"})
	if !res.IsError || out["delivery"].(map[string]any)["error_code"] != 22.0 {
		t.Fatalf("failed delivery = %v %v", res.IsError, out)
	}
}

func TestSendToolsWithoutGate(t *testing.T) {
	cs := sendSession(t, nil)
	for name, args := range map[string]map[string]any{
		"preview_message": {"recipient": "a@b.co", "text": "hi"},
		"send_message":    {"recipient": "a@b.co", "text": "hi", "send_nonce": "x"},
	} {
		res, _ := call(t, cs, name, args)
		if !res.IsError || !strings.Contains(textOf(res), "not available") {
			t.Errorf("%s without a gate: %v %q", name, res.IsError, textOf(res))
		}
	}
}
