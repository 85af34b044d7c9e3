package send

import "errors"

// Code classifies an [Error] for callers that map it to a wire format (the
// bridge's ok:false responses, MCP isError results) or test for it.
type Code string

// Error codes. The messages of the gate errors that the bridge protocol
// names (missing nonce, payload change, cancelled confirmation, group chat
// ids) are the protocol's exact strings.
const (
	CodeInvalidRecipient Code = "invalid_recipient"
	CodeGroupChat        Code = "group_chat_not_supported"
	CodeInvalidText      Code = "invalid_text"
	CodeInvalidService   Code = "invalid_service"
	CodeInvalidImage     Code = "invalid_image"
	CodeBlocked          Code = "blocked"
	CodePolicy           Code = "policy_unavailable"
	CodeMissingNonce     Code = "missing_nonce"
	CodeInvalidNonce     Code = "invalid_nonce"
	CodeNonceReplay      Code = "nonce_used"
	CodeNonceExpired     Code = "nonce_expired"
	CodePayloadMismatch  Code = "payload_mismatch"
	CodeRateLimited      Code = "rate_limited"
	CodeDuplicate        Code = "duplicate"
	CodeBusy             Code = "send_in_progress"
	CodeNoConfirmer      Code = "confirmer_unavailable"
	CodeConfirmFailed    Code = "confirmation_failed"
	CodeCancelled        Code = "cancelled"
	CodeNoSender         Code = "sender_unavailable"
	CodeSendFailed       Code = "send_failed"
	CodeDeliveryFailed   Code = "delivery_failed"
	CodeState            Code = "state_unavailable"
)

// Messages fixed by the bridge protocol, used verbatim (docs/bridge.md,
// "Wire format").
const (
	MsgMissingNonce    = "send gate: missing nonce; call send_preview first"
	MsgPayloadMismatch = "send payload differs from preview"
	MsgCancelled       = "send cancelled by user or timed out (60s dialog limit)"
	// MsgGroupChat starts with the protocol's "group chat IDs not
	// supported" so clients that match on it keep working.
	MsgGroupChat = "group chat IDs not supported: a message goes to one person; use an individual phone number or email address (contacts_lookup / lookup_contacts finds them)"
)

// Error is every refusal of the gate. Message is one sentence meant for the
// model and the person; it never contains the message text.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

func newErr(c Code, msg string) *Error { return &Error{Code: c, Message: msg} }

// CodeOf returns the Code of err when it is (or wraps) an *Error, else "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
