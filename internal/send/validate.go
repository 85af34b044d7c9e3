package send

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// Services a message can go out on. The zero value of a request means
// ServiceIMessage, as in the bridge protocol.
const (
	ServiceIMessage = "iMessage"
	ServiceSMS      = "SMS"
)

// MaxTextChars is the longest text the gate accepts, in characters (Unicode
// code points, as the protocol counts them).
const MaxTextChars = 4000

// maxRecipientLen bounds a recipient before any parsing (the longest email
// address RFC 5321 allows).
const maxRecipientLen = 320

// canonService returns "iMessage" or "SMS" for the accepted spellings: empty
// (the protocol's default), and either name in any letter case.
func canonService(s string) (string, error) {
	switch {
	case s == "":
		return ServiceIMessage, nil
	case strings.EqualFold(s, ServiceIMessage):
		return ServiceIMessage, nil
	case strings.EqualFold(s, ServiceSMS):
		return ServiceSMS, nil
	}
	return "", newErr(CodeInvalidService, fmt.Sprintf("service %q is not supported: use \"iMessage\" or \"SMS\" (or omit it for iMessage)", clip(s, 40)))
}

// checkText enforces the protocol's text rules — 1 to 4000 characters, no
// C0 control characters other than \n, \r and \t — and two more that keep
// the confirmation honest: no DEL/C1 controls, and no invisible or
// formatting characters (bidi overrides, tag characters, zero-width
// characters, stray variation selectors; see sanitize.Forbidden). A person
// approves what the dialog shows; a character the dialog cannot show could
// carry something they never saw.
func checkText(text string) error {
	if !utf8.ValidString(text) {
		return newErr(CodeInvalidText, "text is not valid UTF-8")
	}
	n := utf8.RuneCountInString(text)
	switch {
	case n == 0:
		return newErr(CodeInvalidText, "text is empty: a message needs 1 to 4000 characters")
	case n > MaxTextChars:
		return newErr(CodeInvalidText, fmt.Sprintf("text is %d characters long: the limit is %d", n, MaxTextChars))
	case strings.TrimSpace(text) == "":
		return newErr(CodeInvalidText, "text is only whitespace: write the message to send")
	}
	pos := 0
	for _, r := range text {
		pos++
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r >= 0x7f && r < 0xa0 {
			return newErr(CodeInvalidText, fmt.Sprintf("text contains the control character U+%04X at character %d: only newline, carriage return and tab are allowed", r, pos))
		}
	}
	if r, bad := sanitize.Forbidden(strings.ReplaceAll(text, "\r", "")); bad {
		return newErr(CodeInvalidText, fmt.Sprintf("text contains the invisible or formatting character U+%04X, which the confirmation dialog cannot show: remove it and preview again", r))
	}
	return nil
}

// recipient is a validated send target.
type recipient struct {
	// Raw is the recipient exactly as the caller wrote it; the nonce is
	// bound to it so a send must repeat it unchanged.
	Raw string
	// Address is what Messages is given: E.164 for a phone number, digits
	// for a short code, the lower-cased address for an email.
	Address string
	Kind    contacts.Kind
}

// parseRecipient validates a recipient: a phone number in any format
// (normalised with region for numbers without a country code), an SMS short
// code, or an email address. Group chat ids ("chat123…", guids with ";+;")
// are refused with the protocol's guidance.
func parseRecipient(to, region string) (recipient, error) {
	t := strings.TrimSpace(to)
	if t == "" {
		return recipient{}, newErr(CodeInvalidRecipient, "recipient is required: a phone number or an email address")
	}
	if len(t) > maxRecipientLen || !utf8.ValidString(t) {
		return recipient{}, newErr(CodeInvalidRecipient, "recipient is not a phone number or an email address")
	}
	lower := strings.ToLower(t)
	if strings.Contains(t, ";") {
		if strings.Contains(t, ";+;") {
			return recipient{}, newErr(CodeGroupChat, MsgGroupChat)
		}
		return recipient{}, newErr(CodeInvalidRecipient, fmt.Sprintf("recipient %q looks like a conversation id: use the person's phone number or email address", clip(sanitize.Field(t), 60)))
	}
	if strings.Contains(t, "@") {
		addr, err := checkEmail(lower)
		if err != nil {
			return recipient{}, err
		}
		return recipient{Raw: to, Address: addr, Kind: contacts.KindEmail}, nil
	}
	if strings.HasPrefix(lower, "chat") {
		return recipient{}, newErr(CodeGroupChat, MsgGroupChat)
	}
	key, kind := contacts.Normalize(t, region)
	switch {
	case kind == contacts.KindPhone && strings.HasPrefix(key, "+"):
		return recipient{Raw: to, Address: key, Kind: kind}, nil
	case kind == contacts.KindPhone:
		return recipient{}, newErr(CodeInvalidRecipient, fmt.Sprintf("cannot tell which country the number %q belongs to: write it with its country code (for example +44 20 7946 0000) or set TIDINGS_REGION", clip(sanitize.Field(t), 40)))
	case kind == contacts.KindShortCode:
		return recipient{Raw: to, Address: key, Kind: kind}, nil
	}
	return recipient{}, newErr(CodeInvalidRecipient, fmt.Sprintf("recipient %q is neither a phone number nor an email address", clip(sanitize.Field(t), 60)))
}

// checkEmail validates a lower-cased email address: one '@', a local part,
// a dotted domain, no spaces, controls or invisible characters.
func checkEmail(addr string) (string, error) {
	addr = strings.TrimPrefix(addr, "mailto:")
	bad := newErr(CodeInvalidRecipient, fmt.Sprintf("recipient %q is not a valid email address", clip(sanitize.Field(addr), 60)))
	at := strings.IndexByte(addr, '@')
	if at <= 0 || strings.Count(addr, "@") != 1 || len(addr) > 254 {
		return "", bad
	}
	domain := addr[at+1:]
	if !strings.Contains(domain, ".") || strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return "", bad
	}
	if strings.ContainsFunc(addr, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == '"' || r == '<' || r == '>'
	}) {
		return "", bad
	}
	if _, forbidden := sanitize.Forbidden(addr); forbidden {
		return "", bad
	}
	return addr, nil
}

// nearKey is the text form the duplicate guard compares: case-folded, with
// every run of white space collapsed to one space and the ends trimmed, so
// "See you at 3" and "see you at 3 " count as the same message.
func nearKey(text string) string {
	return strings.Join(strings.Fields(strings.ToLower(text)), " ")
}

// clip shortens s to at most n runes for quoting in an error sentence.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
