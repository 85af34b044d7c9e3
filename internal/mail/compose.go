package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	netmail "net/mail"
	"path/filepath"
	"strings"
	"time"
)

// Compose is a message the tools write (a draft, a reply draft).
type Compose struct {
	From       string
	To, Cc     []string
	Bcc        []string
	Subject    string
	Body       string
	InReplyTo  string
	References []string
	Date       time.Time
	// Attachments are sent as a multipart/mixed message.
	Attachments []Attached
	// OmitBcc leaves the Bcc header out (a message that is sent: its Bcc
	// recipients get it through the envelope only).
	OmitBcc bool
}

// Limits of what the tools write.
const (
	maxRecipients = 100
	maxSubject    = 1000
	maxBody       = 1 << 20
)

// ParseRecipients checks addresses written by a caller: each an RFC 5322
// address ("ana@example.org" or "Ana <ana@example.org>"), no line breaks.
func ParseRecipients(field string, in []string) ([]*netmail.Address, error) {
	var out []*netmail.Address
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if strings.ContainsAny(s, "\r\n") {
			return nil, fmt.Errorf("%s holds a line break", field)
		}
		a, err := netmail.ParseAddress(s)
		if err != nil || !strings.Contains(a.Address, "@") {
			return nil, fmt.Errorf("%s: %q is not an e-mail address such as ana@example.org", field, limitLabel(s))
		}
		a.Address = strings.ToLower(a.Address)
		out = append(out, a)
	}
	if len(out) > maxRecipients {
		return nil, fmt.Errorf("%s: at most %d addresses", field, maxRecipients)
	}
	return out, nil
}

// Build renders d as RFC 5322 bytes (CRLF, UTF-8 text/plain,
// quoted-printable), with a fresh Message-ID at from's domain. Header
// values holding a line break are refused (header injection).
func (d Compose) Build() ([]byte, string, error) {
	for _, v := range append([]string{d.From, d.Subject, d.InReplyTo}, d.References...) {
		if strings.ContainsAny(v, "\r\n") {
			return nil, "", errors.New("a header value holds a line break")
		}
	}
	if len(d.Subject) > maxSubject || len(d.Body) > maxBody {
		return nil, "", fmt.Errorf("the subject may hold %d bytes and the body %d KiB", maxSubject, maxBody>>10)
	}
	from, err := netmail.ParseAddress(d.From)
	if err != nil {
		return nil, "", fmt.Errorf("from %q is not an e-mail address", limitLabel(d.From))
	}
	lists := map[string][]string{"To": d.To, "Cc": d.Cc, "Bcc": d.Bcc}
	var b bytes.Buffer
	h := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	h("From", from.String())
	for _, k := range []string{"To", "Cc", "Bcc"} {
		addrs, err := ParseRecipients(strings.ToLower(k), lists[k])
		if err != nil {
			return nil, "", err
		}
		if len(addrs) == 0 || (k == "Bcc" && d.OmitBcc) {
			continue
		}
		s := make([]string, len(addrs))
		for i, a := range addrs {
			s[i] = a.String()
		}
		h(k, strings.Join(s, ", "))
	}
	h("Subject", mime.QEncoding.Encode("utf-8", d.Subject))
	h("Date", d.Date.Format(time.RFC1123Z))
	var rnd [12]byte
	_, _ = rand.Read(rnd[:])
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	id := hex.EncodeToString(rnd[:]) + "@" + domain
	h("Message-ID", "<"+id+">")
	if d.InReplyTo != "" {
		h("In-Reply-To", "<"+d.InReplyTo+">")
	}
	if len(d.References) > 0 {
		refs := make([]string, len(d.References))
		for i, r := range d.References {
			refs[i] = "<" + r + ">"
		}
		h("References", strings.Join(refs, " "))
	}
	h("MIME-Version", "1.0")
	var text bytes.Buffer
	qp := quotedprintable.NewWriter(&text)
	_, _ = qp.Write([]byte(strings.ReplaceAll(strings.ReplaceAll(d.Body, "\r\n", "\n"), "\n", "\r\n")))
	_ = qp.Close()
	if len(d.Attachments) == 0 {
		h("Content-Type", "text/plain; charset=utf-8")
		h("Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		b.Write(text.Bytes())
		b.WriteString("\r\n")
		return b.Bytes(), id, nil
	}
	boundary := "=_" + hex.EncodeToString(rnd[:8])
	h("Content-Type", `multipart/mixed; boundary="`+boundary+`"`)
	b.WriteString("\r\n")
	b.Write(attachParts(text.Bytes(), d.Attachments, boundary))
	return b.Bytes(), id, nil
}

// ReplySubject prefixes "Re: " unless the subject already has it.
func ReplySubject(s string) string {
	t := strings.TrimSpace(s)
	if len(t) >= 3 && strings.EqualFold(t[:3], "re:") {
		return t
	}
	return "Re: " + t
}

// mimeType is an attachment's declared type, else one guessed from its
// name, else application/octet-stream; parameters a caller smuggled in
// are dropped.
func mimeType(f Attached) string {
	t := f.ContentType
	if t == "" {
		t = mime.TypeByExtension(strings.ToLower(filepath.Ext(f.Name)))
	}
	if mt, _, err := mime.ParseMediaType(t); err == nil && strings.Count(mt, "/") == 1 {
		return mt
	}
	return "application/octet-stream"
}

// disposition renders Content-Disposition with the file name (RFC 2231
// for non-ASCII names), its path part removed.
func disposition(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if v := mime.FormatMediaType("attachment", map[string]string{"filename": name}); v != "" {
		return v
	}
	return "attachment"
}

// base64Lines encodes data in 76-character lines.
func base64Lines(data []byte) []byte {
	enc := base64.StdEncoding.EncodeToString(data)
	var b bytes.Buffer
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	b.WriteString(enc)
	return b.Bytes()
}
