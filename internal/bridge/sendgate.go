//go:build unix

package bridge

import (
	"context"
	"errors"
	"fmt"

	"github.com/tidings-mcp/tidings/internal/send"
)

// SendGate serves send_preview and send through internal/send's gate, the one
// send path (nonce bound to to/text/service, TTL, single use, policy, native
// confirmation, delivery verification). Its refusals carry the exact sentences
// of protocol 1.2 (docs/bridge.md); 1.3 answers add the gate's full preview
// ("gate") and the verified delivery ("delivery").
type SendGate struct{ Gate *send.Gate }

// SendPreview implements Backend.SendPreview.
func (g SendGate) SendPreview(ctx context.Context, p SendPreviewParams) (SendPreviewResult, error) {
	r, err := g.Gate.Preview(ctx, send.PreviewRequest{To: p.To, Text: p.Text, Service: p.Service})
	if err != nil {
		return SendPreviewResult{}, sendErr(err, nil)
	}
	return SendPreviewResult{
		Preview: PreviewInfo{To: r.Preview.To, ResolvedName: r.Preview.ResolvedName, Service: r.Preview.Service,
			Text: r.Preview.Text, TextLength: r.Preview.TextLength, Blocked: r.Preview.Blocked},
		SendNonce:           r.SendNonce,
		SendNonceTTLSeconds: r.SendNonceTTLSeconds,
		Extra:               map[string]any{"gate": r},
	}, nil
}

// Send implements Backend.Send.
func (g SendGate) Send(ctx context.Context, p SendParams) (SendResult, error) {
	r, err := g.Gate.Send(ctx, send.SendRequest{To: p.To, Text: p.Text, Service: p.Service, Nonce: p.Nonce})
	if err != nil {
		var detail map[string]any
		if send.CodeOf(err) == send.CodeDeliveryFailed {
			detail = map[string]any{"sent": r.Sent, "delivery": r.Delivery}
		}
		return SendResult{}, sendErr(err, detail)
	}
	return SendResult{
		Sent:  SentInfo{To: r.Sent.To, ResolvedName: r.Sent.ResolvedName, Service: r.Sent.Service, TextLength: r.Sent.TextLength, SentAt: r.Sent.SentAt},
		Extra: map[string]any{"delivery": r.Delivery},
	}, nil
}

// sendError carries a gate refusal's code (and a failed send's report)
// to the 1.3 error response; its message is the gate's sentence.
type sendError struct {
	err    error
	detail map[string]any
}

func sendErr(err error, detail map[string]any) error { return &sendError{err: err, detail: detail} }

func (e *sendError) Error() string                { return e.err.Error() }
func (e *sendError) Unwrap() error                { return e.err }
func (e *sendError) BridgeDetail() map[string]any { return e.detail }
func (e *sendError) BridgeCode() string           { return string(send.CodeOf(e.err)) }

// RemoteSend is the send gate of a `tidings serve --bridge` process: the
// MCP send tools call it and it forwards to the helper's gate. Image sends
// are refused over the bridge (the helper never reads a file a bridge
// client names).
type RemoteSend struct{ C *Client }

// Preview forwards preview_message to send_preview.
func (r RemoteSend) Preview(ctx context.Context, req send.PreviewRequest) (send.PreviewResult, error) {
	if req.ImagePath != "" {
		return send.PreviewResult{}, &send.Error{Code: send.CodeInvalidImage,
			Message: "image sends are not available over the bridge: the helper never reads a file named by a bridge client; send text only"}
	}
	if _, err := r.C.Connect(ctx); err != nil {
		return send.PreviewResult{}, err
	}
	resp, err := r.C.Call(ctx, ActionSendPreview, map[string]any{"to": req.To, "text": req.Text, "service": req.Service})
	if err != nil {
		return send.PreviewResult{}, remoteSendErr(err)
	}
	var out struct {
		Gate *send.PreviewResult `json:"gate"`
	}
	if err := resp.Decode(&out); err != nil || out.Gate == nil {
		return send.PreviewResult{}, fmt.Errorf("send_preview: the helper's answer lacks the 1.3 preview (upgrade the helper): %w", ErrUnavailable)
	}
	return *out.Gate, nil
}

// Send forwards send_message to send. A send that was handed over but
// failed returns its report together with the delivery_failed error, as
// the gate does in-process.
func (r RemoteSend) Send(ctx context.Context, req send.SendRequest) (send.SendResult, error) {
	if req.ImagePath != "" {
		return send.SendResult{}, &send.Error{Code: send.CodeInvalidImage,
			Message: "image sends are not available over the bridge: the helper never reads a file named by a bridge client; send text only"}
	}
	if _, err := r.C.Connect(ctx); err != nil {
		return send.SendResult{}, err
	}
	resp, err := r.C.Call(ctx, ActionSend, map[string]any{"to": req.To, "text": req.Text,
		"service": req.Service, "send_nonce": req.Nonce})
	if err != nil {
		var re *RemoteError
		if errors.As(err, &re) && re.Code == string(send.CodeDeliveryFailed) {
			var res send.SendResult
			if re.Detail(&res) == nil {
				return res, remoteSendErr(err)
			}
		}
		return send.SendResult{}, remoteSendErr(err)
	}
	var res send.SendResult
	if err := resp.Decode(&res); err != nil {
		return send.SendResult{}, err
	}
	return res, nil
}

// remoteSendErr turns a gate refusal from the helper back into the
// *send.Error it was, so callers see the same code and sentence.
func remoteSendErr(err error) error {
	var re *RemoteError
	if errors.As(err, &re) && re.Code != "" && isSendCode(re.Code) {
		return &send.Error{Code: send.Code(re.Code), Message: re.Msg}
	}
	return err
}

func isSendCode(c string) bool {
	switch c {
	case CodeInvalidRequest, CodeInvalidParams, CodeUnknownAction, CodeNotPermitted, CodeRoleInvalid,
		CodeDuplicateID, CodeVersion, CodeUnavailable, CodeNotFound, CodeInternal, CodeOutsideWindow:
		return false
	}
	return true
}
