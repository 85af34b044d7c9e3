package mailindex

import (
	"github.com/tidings-mcp/tidings/internal/mail"
)

// BodyFunc turns a message's RFC 822 bytes into its text (HTML converted
// when there is no plain part) and its attachment names. It is the one
// seam between the sync and the MIME reader (Options.Body); MIMEBody is
// the default.
type BodyFunc func(raw []byte) (text string, attachments []string, err error)

// MIMEBody reads a message with the service's own MIME reader
// (mail.Parse: depth, part and header limits, every charset, RFC 2047,
// format=flowed, HTML to text), so what mail_search finds is what
// mail_get_email shows. A message read only in part still yields what
// was read; the error is only for input that is not a message at all.
func MIMEBody(raw []byte) (string, []string, error) {
	p, err := mail.Parse(raw)
	if err != nil {
		return "", nil, err
	}
	var names []string
	for _, a := range p.Attachments {
		if a.Name != "" {
			names = append(names, a.Name)
		}
	}
	return p.Text, names, nil
}
