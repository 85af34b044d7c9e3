package mail

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/tidings-mcp/tidings/internal/account"
)

// SMTPTimeout bounds one whole submission (connect, TLS, login, message).
const SMTPTimeout = 2 * time.Minute

// SMTPConfig is one account's SMTP half.
type SMTPConfig struct {
	Account string
	// URL follows the URL rule (smtps://, smtp+starttls://, smtp:// to
	// loopback only).
	URL      string
	Username string
	Auth     string
	Password func(ctx context.Context) (account.Secret, error)
	CAFile   string
}

// SMTP submits mail for one account with go-smtp's client.
type SMTP struct {
	cfg  SMTPConfig
	ep   account.Endpoint
	tlsc *tls.Config
}

// NewSMTP checks the URL; nothing is contacted until Submit.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	ep, err := account.ParseEndpoint(cfg.URL, account.SMTP)
	if err != nil {
		return nil, fmt.Errorf("mail account %q: smtp: %w", cfg.Account, err)
	}
	tlsc, err := ep.TLSConfig(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("mail account %q: %w", cfg.Account, err)
	}
	return &SMTP{cfg: cfg, ep: ep, tlsc: tlsc}, nil
}

// Submit sends msg from → rcpts and returns the server's reply to the
// message (its 250 line). An error means the message was not accepted.
func (s *SMTP) Submit(ctx context.Context, from string, rcpts []string, msg []byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, SMTPTimeout)
	defer cancel()
	conn, err := s.ep.Dialer(Timeout).DialContext(ctx, "tcp", s.ep.Address())
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", s.ep.Address(), err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	var c *smtp.Client
	switch s.ep.TLS {
	case account.TLSImplicit:
		tc := tls.Client(conn, s.tlsc)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return "", fmt.Errorf("TLS with %s: %w", s.ep.Address(), err)
		}
		c = smtp.NewClient(tc)
	case account.TLSStartTLS:
		c, err = smtp.NewClientStartTLS(conn, s.tlsc)
		if err != nil {
			_ = conn.Close()
			return "", fmt.Errorf("STARTTLS with %s (required by the smtp+starttls URL; nothing was sent in plain text): %w", s.ep.Address(), err)
		}
	default:
		c = smtp.NewClient(conn)
	}
	defer c.Close()
	if s.cfg.Username != "" {
		if s.cfg.Password == nil {
			return "", errors.New("no password source: set password_env or password_cmd")
		}
		sec, err := s.cfg.Password(ctx)
		if err != nil {
			return "", err
		}
		var a sasl.Client = sasl.NewPlainClient("", s.cfg.Username, sec.Reveal())
		if s.cfg.Auth == "xoauth2" {
			a = xoauth2{user: s.cfg.Username, token: sec.Reveal()}
		}
		if err := c.Auth(a); err != nil {
			return "", fmt.Errorf("login as %s: %w", s.cfg.Username, err)
		}
	}
	if err := c.Mail(from, nil); err != nil {
		return "", fmt.Errorf("MAIL FROM %s: %w", from, err)
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			return "", fmt.Errorf("RCPT TO %s (nothing was sent): %w", r, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return "", fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return "", fmt.Errorf("DATA: %w", err)
	}
	resp, err := w.CloseWithResponse()
	if err != nil {
		return "", fmt.Errorf("the server did not accept the message: %w", err)
	}
	_ = c.Quit()
	// CloseWithResponse succeeds only on a 250 reply.
	return strings.TrimSpace("250 " + resp.StatusText), nil
}

// Attached is a file attached to a composed message.
type Attached struct {
	Name        string
	ContentType string
	Data        []byte
}

// attachParts renders the multipart/mixed body of a message with text
// and attachments.
func attachParts(text []byte, files []Attached, boundary string) []byte {
	var b bytes.Buffer
	b.WriteString("--" + boundary + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
	b.Write(text)
	for _, f := range files {
		b.WriteString("\r\n--" + boundary + "\r\n")
		b.WriteString("Content-Type: " + mimeType(f) + "\r\n")
		b.WriteString("Content-Disposition: " + disposition(f.Name) + "\r\n")
		b.WriteString("Content-Transfer-Encoding: base64\r\n\r\n")
		b.Write(base64Lines(f.Data))
	}
	b.WriteString("\r\n--" + boundary + "--\r\n")
	return b.Bytes()
}
