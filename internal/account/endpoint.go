// Package account is the machinery every account-backed service (mail,
// calendar, contacts) shares: the URL rule that decides how a server is
// reached, the TLS configuration for an optional private CA, and the
// password sources (password_env, password_cmd) with a Secret type that
// never prints. It imports neither the MCP SDK nor internal/config, so the
// config package can validate with it and services can dial with it
// (docs/configuration.md "Accounts", docs/security.md "Accounts and secrets").
package account

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Protocol is what a URL speaks.
type Protocol string

// The protocols of the URL rule.
const (
	IMAP Protocol = "imap"
	SMTP Protocol = "smtp"
	HTTP Protocol = "http" // CalDAV, CardDAV, ICS URLs
)

// TLSMode is how a client must secure the connection to an Endpoint.
type TLSMode int

const (
	// TLSImplicit: TLS from the first byte (imaps://, smtps://, https://).
	TLSImplicit TLSMode = iota + 1
	// TLSStartTLS: connect in plain text, then STARTTLS is required; a
	// server that does not offer it is refused (CheckStartTLS), never
	// talked to in plain text.
	TLSStartTLS
	// TLSNone: plain text, allowed only to a loopback host (a local test
	// server); dial with Endpoint.Dialer so the connected address is
	// checked too.
	TLSNone
)

func (m TLSMode) String() string {
	switch m {
	case TLSImplicit:
		return "tls"
	case TLSStartTLS:
		return "starttls"
	case TLSNone:
		return "plain"
	}
	return "unknown"
}

// scheme is one accepted URL scheme.
type scheme struct {
	proto Protocol
	mode  TLSMode
	port  int
}

var schemes = map[string]scheme{
	"imaps":         {IMAP, TLSImplicit, 993},
	"imap+starttls": {IMAP, TLSStartTLS, 143},
	"imap":          {IMAP, TLSNone, 143},
	"smtps":         {SMTP, TLSImplicit, 465},
	"smtp+starttls": {SMTP, TLSStartTLS, 587},
	"smtp":          {SMTP, TLSNone, 25},
	"https":         {HTTP, TLSImplicit, 443},
	"http":          {HTTP, TLSNone, 80},
}

// schemeNames lists the schemes of one protocol, for error messages.
func schemeNames(p Protocol) string {
	switch p {
	case IMAP:
		return "imaps://, imap+starttls:// or imap:// (loopback only)"
	case SMTP:
		return "smtps://, smtp+starttls:// or smtp:// (loopback only)"
	}
	return "https:// or http:// (loopback only)"
}

// Endpoint is a validated server address.
type Endpoint struct {
	Protocol Protocol
	TLS      TLSMode
	// Host is a DNS name or an IP address (no brackets, no port).
	Host string
	Port int
	// Path is the path and query of an HTTP endpoint ("" for IMAP/SMTP).
	Path string
}

// Address is host:port for net.Dial.
func (e Endpoint) Address() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// URL returns the endpoint as a URL with its scheme and explicit port; for
// HTTP endpoints this is what a WebDAV or ICS client requests.
func (e Endpoint) URL() string {
	s := string(e.Protocol)
	switch e.TLS {
	case TLSImplicit:
		s += "s"
	case TLSStartTLS:
		s += "+starttls"
	}
	return s + "://" + e.Address() + e.Path
}

// ParseEndpoint applies the URL rule (docs/configuration.md "Accounts"):
//
//   - imaps://, smtps://, https:// use implicit TLS;
//   - imap+starttls://, smtp+starttls:// require STARTTLS;
//   - imap://, smtp://, http:// are plain text and allowed only when the host
//     is loopback: an IP in 127.0.0.0/8, ::1 (IPv4-mapped included) or the
//     name "localhost". No other name counts and nothing is resolved here
//     (a name that resolves to loopback is still refused: the check must not
//     depend on DNS); Endpoint.Dialer checks the address actually connected.
//
// A user name or password in the URL is refused (passwords never sit in
// URLs, which end up in logs and process lists), as is a port outside
// 1–65535. want limits the protocol (mail's imap key takes IMAP only). The
// error never quotes raw, which could hold a password.
func ParseEndpoint(raw string, want Protocol) (Endpoint, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return Endpoint{}, errors.New("URL is empty")
	}
	i := strings.Index(s, "://")
	if i <= 0 {
		return Endpoint{}, fmt.Errorf("URL has no scheme: want %s", schemeNames(want))
	}
	name := strings.ToLower(s[:i])
	sc, ok := schemes[name]
	if !ok || sc.proto != want {
		return Endpoint{}, fmt.Errorf("scheme %q is not allowed here: want %s", limit(name), schemeNames(want))
	}
	// Userinfo is looked for before url.Parse, whose errors quote the URL.
	authority := s[i+3:]
	if j := strings.IndexAny(authority, "/?#"); j >= 0 {
		authority = authority[:j]
	}
	if strings.Contains(authority, "@") {
		return Endpoint{}, errors.New("URL must not hold a user name or password: put the user name in username and the password in password_env or password_cmd")
	}
	u, err := url.Parse(s)
	if err != nil {
		return Endpoint{}, errors.New("URL is not valid (check the host and port)")
	}
	host := u.Hostname()
	if host == "" {
		return Endpoint{}, errors.New("URL has no host")
	}
	if strings.Contains(host, "%") {
		return Endpoint{}, errors.New("URL host must not carry an IPv6 zone")
	}
	port := sc.port
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Endpoint{}, fmt.Errorf("port %q is not a number from 1 to 65535", limit(p))
		}
		port = n
	}
	e := Endpoint{Protocol: sc.proto, TLS: sc.mode, Host: host, Port: port}
	switch sc.proto {
	case HTTP:
		if u.Fragment != "" {
			return Endpoint{}, errors.New("URL must not have a #fragment")
		}
		e.Path = u.EscapedPath()
		if u.RawQuery != "" {
			e.Path += "?" + u.RawQuery
		}
	default:
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return Endpoint{}, fmt.Errorf("a %s URL is a host and port only, with no path", sc.proto)
		}
	}
	if sc.mode == TLSNone && !IsLoopbackHost(host) {
		return Endpoint{}, fmt.Errorf("plain %s:// is allowed only to a loopback host (127.0.0.1, ::1, localhost); use %s",
			name, secureAlternative(sc.proto))
	}
	return e, nil
}

func secureAlternative(p Protocol) string {
	switch p {
	case IMAP:
		return "imaps:// or imap+starttls://"
	case SMTP:
		return "smtps:// or smtp+starttls://"
	}
	return "https://"
}

// limit keeps quoted input short in an error.
func limit(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// IsLoopbackHost reports whether host (no port, no brackets) is loopback
// without resolving it: an IP address in 127.0.0.0/8 or ::1 (an IPv4-mapped
// form included), or the name "localhost" in any case, with or without a
// trailing dot. Other spellings of an address (2130706433, 127.1, 0x7f.1)
// are names, not addresses, so they are not loopback.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Zone() == "" && a.Unmap().IsLoopback()
}

// Dialer returns a net.Dialer for the endpoint. For a plain endpoint its
// Control refuses any connection whose address is not loopback, so a
// "localhost" that /etc/hosts points elsewhere still sends nothing in
// plain text off the machine.
func (e Endpoint) Dialer(timeout time.Duration) *net.Dialer {
	d := &net.Dialer{Timeout: timeout}
	if e.TLS == TLSNone {
		d.Control = requireLoopback
	}
	return d
}

// requireLoopback is a net.Dialer Control: it runs before connect and
// refuses a non-loopback address.
func requireLoopback(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("plain-text connection to %s refused: only loopback addresses may be reached without TLS", address)
	}
	return nil
}

// ErrStartTLSNotOffered is returned by CheckStartTLS: the server did not
// offer STARTTLS on a +starttls URL, so nothing more is sent.
var ErrStartTLSNotOffered = errors.New("the server does not offer STARTTLS, which its +starttls URL requires; nothing was sent in plain text")

// CheckStartTLS is what a client calls after reading the server's
// capabilities on a TLSStartTLS endpoint: nil when STARTTLS is offered (or
// the endpoint is not STARTTLS), ErrStartTLSNotOffered otherwise.
func (e Endpoint) CheckStartTLS(offered bool) error {
	if e.TLS == TLSStartTLS && !offered {
		return ErrStartTLSNotOffered
	}
	return nil
}

// maxCAFile bounds what TLSConfig reads from ca_file.
const maxCAFile = 1 << 20

// TLSConfig returns the TLS configuration for the endpoint: nil for a
// plain endpoint; otherwise TLS 1.2 or later, verifying the server's name.
// With caFile (an absolute path to PEM certificates) those certificates
// are the only roots trusted for this account, instead of the system's:
// ca_file exists for a server with a private CA, and trusting every public
// CA as well would let any of them vouch for that server (the same choice
// as curl's --cacert). Put the system bundle in the file to trust both.
func (e Endpoint) TLSConfig(caFile string) (*tls.Config, error) {
	if e.TLS == TLSNone {
		return nil, nil
	}
	c := &tls.Config{ServerName: e.Host, MinVersion: tls.VersionTLS12}
	if caFile == "" {
		return c, nil
	}
	pool, err := LoadCAFile(caFile)
	if err != nil {
		return nil, err
	}
	c.RootCAs = pool
	return c, nil
}

// LoadCAFile reads a PEM file of CA certificates (at most 1 MiB).
func LoadCAFile(path string) (*x509.CertPool, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("ca_file %q must be an absolute path", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ca_file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCAFile+1))
	if err != nil {
		return nil, fmt.Errorf("ca_file %s: %w", path, err)
	}
	if len(data) > maxCAFile {
		return nil, fmt.Errorf("ca_file %s is larger than 1 MiB", path)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("ca_file %s holds no PEM certificate", path)
	}
	return pool, nil
}
