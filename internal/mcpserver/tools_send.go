package mcpserver

import (
	"context"
	"errors"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/send"
)

// SendService is what the send tools need; internal/send's *Gate
// implements it. Deps.Send nil means this process cannot send, and both
// tools say so.
type SendService interface {
	Preview(ctx context.Context, r send.PreviewRequest) (send.PreviewResult, error)
	Send(ctx context.Context, r send.SendRequest) (send.SendResult, error)
}

// The send tools' arguments. The canonical recipient field is `recipient`
// (docs/security.md, "MCP tools"); `to`, the bridge protocol's name, is accepted
// as an alias. Exactly one of them must be given (both are accepted when
// they are identical). Neither is marked required in the schema, because a
// top-level anyOf is refused by some clients; the handler enforces it.

// PreviewMessageInput is preview_message's argument object.
type PreviewMessageInput struct {
	Recipient string `json:"recipient,omitempty" jsonschema:"required (or to): a phone number (+14155551234 is safest) or e-mail address"`
	To        string `json:"to,omitempty" jsonschema:"alias of recipient"`
	Text      string `json:"text" jsonschema:"the exact text, 1 to 4000 characters"`
	Service   string `json:"service,omitempty" jsonschema:"iMessage (the default) or SMS"`
	ImagePath string `json:"image_path,omitempty" jsonschema:"absolute path of an image inside file_dirs, sent after the text"`
}

// SendMessageInput is send_message's argument object: the previewed
// values, repeated exactly, and the nonce.
type SendMessageInput struct {
	Recipient string `json:"recipient,omitempty" jsonschema:"required (or to): as given to preview_message"`
	To        string `json:"to,omitempty" jsonschema:"alias of recipient"`
	Text      string `json:"text" jsonschema:"as given to preview_message"`
	Service   string `json:"service,omitempty" jsonschema:"as given to preview_message"`
	ImagePath string `json:"image_path,omitempty" jsonschema:"as given to preview_message"`
	SendNonce string `json:"send_nonce" jsonschema:"from preview_message"`
}

// PreviewMessageOutput is preview_message's result: the bridge protocol's
// send_preview response body plus the next step in words.
type PreviewMessageOutput struct {
	Preview             send.Preview `json:"preview"`
	SendNonce           string       `json:"send_nonce,omitempty" jsonschema:"pass to send_message; absent when the recipient is blocked"`
	SendNonceTTLSeconds int          `json:"send_nonce_ttl_seconds,omitempty"`
	NextStep            string       `json:"next_step"`
}

// SendMessageOutput is send_message's result: the protocol's sent object
// and what chat.db says about delivery.
type SendMessageOutput struct {
	Sent     send.Sent     `json:"sent"`
	Delivery send.Delivery `json:"delivery"`
}

const (
	nextStepApprove = "Show the user the recipient (resolved_name and address), the service and the full text, and ask for their approval in this conversation. Only if they approve, call send_message with the same recipient, text, service and image_path and this send_nonce within 60 seconds; a system dialog then asks the user once more, and only their click there sends."
	nextStepBlocked = "Do not send: the user's read policy blocks this recipient. Do not ask the user to approve this message and do not retry with another spelling of the address."
	noSendService   = "sending is not available in this process: the send gate was not set up (tidings serve sets it up when sending is enabled; see get_status)"
)

// sendSchema infers a send tool's input schema like Define does and
// restricts service to its two values.
func sendSchema[In any]() *jsonschema.Schema {
	s, err := jsonschema.ForType(reflect.TypeFor[In](), &jsonschema.ForOptions{TypeSchemas: coerce.TypeSchemas()})
	if err != nil {
		panic("send tool input schema: " + err.Error())
	}
	s.Properties["service"].Enum = []any{send.ServiceIMessage, send.ServiceSMS}
	return s
}

// recipientOf returns the one recipient of a call.
func recipientOf(recipient, to string) (string, error) {
	switch {
	case recipient == "" && to == "":
		return "", errors.New("recipient is required: give the person's phone number or email address as recipient")
	case recipient != "" && to != "" && recipient != to:
		return "", errors.New("recipient and to are two names for one field and differ here: give only recipient")
	case recipient != "":
		return recipient, nil
	}
	return to, nil
}

var previewMessage = Define(Tool{
	Name:         "preview_message",
	Title:        "Preview a message before sending",
	Description:  "Check a message without sending it: the recipient (one person's phone number or e-mail address; no groups), the text (1 to 4000 characters), the contact name and the read policy. Returns a send_nonce for send_message (60 seconds, one attempt); if preview.blocked is true there is none: stop. Writes only a nonce file and an audit entry.",
	Toolset:      ToolsetSend,
	ReadOnly:     No,   // writes a nonce file and an audit line
	Destructive:  No,   // changes nothing that existed
	Idempotent:   No,   // every call mints a new single-use nonce
	OpenWorld:    No,   // contacts nobody
	SendGate:     true, // quarantined with send_message
	Instructions: "To send a message: call preview_message, show the user the recipient, service and full text, wait for their explicit approval in the conversation, then call send_message with the same values and the send_nonce within 60 seconds; the user must also approve a system dialog, and a model cannot answer it.",
	InputSchema:  sendSchema[PreviewMessageInput](),
}, func(d *Deps) mcp.ToolHandlerFor[PreviewMessageInput, PreviewMessageOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in PreviewMessageInput) (*mcp.CallToolResult, PreviewMessageOutput, error) {
		if d.Send == nil {
			return nil, PreviewMessageOutput{}, errors.New(noSendService)
		}
		to, err := recipientOf(in.Recipient, in.To)
		if err != nil {
			return nil, PreviewMessageOutput{}, err
		}
		res, err := d.Send.Preview(ctx, send.PreviewRequest{To: to, Text: in.Text, Service: in.Service, ImagePath: in.ImagePath})
		if err != nil {
			return nil, PreviewMessageOutput{}, err
		}
		out := PreviewMessageOutput{Preview: res.Preview, SendNonce: res.SendNonce, SendNonceTTLSeconds: res.SendNonceTTLSeconds, NextStep: nextStepApprove}
		if res.Preview.Blocked {
			out.NextStep = nextStepBlocked
		}
		return nil, out, nil
	}
})

var sendMessage = Define(Tool{
	Name:        "send_message",
	Title:       "Send a message (after preview and approval)",
	Description: "Send a message the user approved: the send_nonce from preview_message with the same recipient, text, service and image_path. The user confirms in a system dialog (60 seconds). The message database is then read back: delivery.status is sent, failed (Apple's error code), unconfirmed or cannot_verify; an image counts as sent only when the database shows it.",
	Toolset:     ToolsetSend,
	ReadOnly:    No,
	Destructive: Yes, // a sent message cannot be unsent
	Idempotent:  No,  // each call sends (or is refused as a replay)
	OpenWorld:   Yes, // reaches another person
	SendGate:    true,
	InputSchema: sendSchema[SendMessageInput](),
}, func(d *Deps) mcp.ToolHandlerFor[SendMessageInput, SendMessageOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in SendMessageInput) (*mcp.CallToolResult, SendMessageOutput, error) {
		if d.Send == nil {
			return nil, SendMessageOutput{}, errors.New(noSendService)
		}
		to, err := recipientOf(in.Recipient, in.To)
		if err != nil {
			return nil, SendMessageOutput{}, err
		}
		res, err := d.Send.Send(ctx, send.SendRequest{To: to, Text: in.Text, Service: in.Service, ImagePath: in.ImagePath, Nonce: strings.TrimSpace(in.SendNonce)})
		if err != nil && send.CodeOf(err) == send.CodeDeliveryFailed {
			// Handed over but failed: the result carries the details.
			return &mcp.CallToolResult{IsError: true}, SendMessageOutput{Sent: res.Sent, Delivery: res.Delivery}, nil
		}
		if err != nil {
			return nil, SendMessageOutput{}, err
		}
		return nil, SendMessageOutput{Sent: res.Sent, Delivery: res.Delivery}, nil
	}
})
