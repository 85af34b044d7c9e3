package account

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestURLRuleAllowsTLSEverywhereAndPlainOnlyToLoopback pins the URL rule
// (docs/configuration.md "Accounts"): implicit TLS and STARTTLS schemes to
// any host with their default ports; plain imap/smtp/http only to
// 127.0.0.0/8, ::1 (also IPv4-mapped) and the name localhost, decided
// without resolving; names that resolve to loopback, other spellings of
// 127.0.0.1 and private addresses are refused in plain text; bad ports,
// paths on IMAP/SMTP, other protocols' schemes and user info are refused,
// and no error quotes a password put in the URL.
func TestURLRuleAllowsTLSEverywhereAndPlainOnlyToLoopback(t *testing.T) {
	tests := []struct {
		raw     string
		want    Protocol
		mode    TLSMode
		addr    string
		path    string
		wantErr string
	}{
		// Implicit TLS and default ports.
		{raw: "imaps://mail.example.org", want: IMAP, mode: TLSImplicit, addr: "mail.example.org:993"},
		{raw: "smtps://mail.example.org", want: SMTP, mode: TLSImplicit, addr: "mail.example.org:465"},
		{raw: "https://dav.example.org/cal/", want: HTTP, mode: TLSImplicit, addr: "dav.example.org:443", path: "/cal/"},
		{raw: "HTTPS://dav.example.org/x?y=1", want: HTTP, mode: TLSImplicit, addr: "dav.example.org:443", path: "/x?y=1"},
		// STARTTLS required.
		{raw: "imap+starttls://mail.example.org", want: IMAP, mode: TLSStartTLS, addr: "mail.example.org:143"},
		{raw: "smtp+starttls://mail.example.org", want: SMTP, mode: TLSStartTLS, addr: "mail.example.org:587"},
		{raw: "smtp+starttls://mail.example.org:2525/", want: SMTP, mode: TLSStartTLS, addr: "mail.example.org:2525"},
		// Plain to loopback: v4, the whole /8, v6, mapped v6, the name.
		{raw: "imap://127.0.0.1:1143", want: IMAP, mode: TLSNone, addr: "127.0.0.1:1143"},
		{raw: "smtp://127.8.9.10", want: SMTP, mode: TLSNone, addr: "127.8.9.10:25"},
		{raw: "http://[::1]:5232/", want: HTTP, mode: TLSNone, addr: "[::1]:5232", path: "/"},
		{raw: "http://[::ffff:127.0.0.1]:5232", want: HTTP, mode: TLSNone, addr: "[::ffff:127.0.0.1]:5232"},
		{raw: "imap://localhost:1143", want: IMAP, mode: TLSNone, addr: "localhost:1143"},
		{raw: "http://LocalHost./dav", want: HTTP, mode: TLSNone, addr: "LocalHost.:80", path: "/dav"},
		// Plain elsewhere is refused, whatever the name might resolve to.
		{raw: "imap://mail.example.org", want: IMAP, wantErr: "only to a loopback host"},
		{raw: "smtp://10.0.0.5", want: SMTP, wantErr: "only to a loopback host"},
		{raw: "http://[fe80::1]/", want: HTTP, wantErr: "only to a loopback host"},
		{raw: "http://localhost.example.org/", want: HTTP, wantErr: "only to a loopback host"},
		{raw: "http://127.0.0.1.nip.io/", want: HTTP, wantErr: "only to a loopback host"},
		{raw: "http://2130706433/", want: HTTP, wantErr: "only to a loopback host"},
		{raw: "http://0x7f.1/", want: HTTP, wantErr: "only to a loopback host"},
		{raw: "http://0.0.0.0:80/", want: HTTP, wantErr: "only to a loopback host"},
		{raw: "http://[::]/", want: HTTP, wantErr: "only to a loopback host"},
		{raw: "http://[::1%25lo]/", want: HTTP, wantErr: "zone"},
		// Bad ports.
		{raw: "imaps://mail.example.org:0", want: IMAP, wantErr: "1 to 65535"},
		{raw: "imaps://mail.example.org:65536", want: IMAP, wantErr: "1 to 65535"},
		{raw: "imaps://mail.example.org:", want: IMAP, wantErr: "1 to 65535"},
		{raw: "imaps://mail.example.org:imap", want: IMAP, wantErr: "not valid"},
		{raw: "imaps://mail.example.org:-1", want: IMAP, wantErr: "not valid"},
		// Wrong shapes.
		{raw: "", want: IMAP, wantErr: "empty"},
		{raw: "mail.example.org:993", want: IMAP, wantErr: "no scheme"},
		{raw: "https://mail.example.org", want: IMAP, wantErr: "imaps://, imap+starttls://"},
		{raw: "imaps://mail.example.org", want: SMTP, wantErr: "smtps://"},
		{raw: "ftp://files.example.org", want: HTTP, wantErr: "not allowed"},
		{raw: "http+starttls://x", want: HTTP, wantErr: "not allowed"},
		{raw: "imaps://mail.example.org/INBOX", want: IMAP, wantErr: "no path"},
		{raw: "https://dav.example.org/#frag", want: HTTP, wantErr: "fragment"},
		{raw: "https:///cal", want: HTTP, wantErr: "no host"},
		// Passwords never in URLs.
		{raw: "imaps://me:hunter2@mail.example.org", want: IMAP, wantErr: "must not hold a user name or password"},
		{raw: "https://me@dav.example.org/", want: HTTP, wantErr: "must not hold a user name or password"},
		{raw: "imaps://me:hunter2@mail.example.org:bad", want: IMAP, wantErr: "must not hold a user name or password"},
		{raw: "smtp://me:hunter2@127.0.0.1", want: SMTP, wantErr: "must not hold a user name or password"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			e, err := ParseEndpoint(tt.raw, tt.want)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("error quotes the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Protocol != tt.want || e.TLS != tt.mode || e.Address() != tt.addr || e.Path != tt.path {
				t.Errorf("got %+v (address %s), want %s %v %s path %q", e, e.Address(), tt.want, tt.mode, tt.addr, tt.path)
			}
		})
	}
}

// TestURLRoundTrips: Endpoint.URL is the scheme, explicit port and path a
// client uses, and parses back to the same endpoint.
func TestURLRoundTrips(t *testing.T) {
	for _, raw := range []string{"imaps://m.example.org", "smtp+starttls://m.example.org", "http://[::1]:5232/dav/?a=b", "imap://localhost"} {
		p := Protocol(strings.SplitN(strings.SplitN(raw, "+", 2)[0], ":", 2)[0])
		p = Protocol(strings.TrimSuffix(string(p), "s"))
		e, err := ParseEndpoint(raw, p)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseEndpoint(e.URL(), p)
		if err != nil || back != e {
			t.Errorf("%s → %s → %+v, %v", raw, e.URL(), back, err)
		}
	}
}

// TestStartTLSMustBeOffered: on a +starttls endpoint a server that does
// not offer STARTTLS is refused; the other modes never ask.
func TestStartTLSMustBeOffered(t *testing.T) {
	st, _ := ParseEndpoint("imap+starttls://m.example.org", IMAP)
	if err := st.CheckStartTLS(false); !errors.Is(err, ErrStartTLSNotOffered) {
		t.Errorf("STARTTLS not offered: err = %v", err)
	}
	if err := st.CheckStartTLS(true); err != nil {
		t.Errorf("STARTTLS offered: %v", err)
	}
	imp, _ := ParseEndpoint("imaps://m.example.org", IMAP)
	if err := imp.CheckStartTLS(false); err != nil {
		t.Errorf("implicit TLS: %v", err)
	}
}

// TestPlainDialerReachesOnlyLoopback: a plain endpoint's dialer refuses a
// non-loopback address before connecting (a "localhost" that the hosts
// file points elsewhere), and connects to a loopback listener.
func TestPlainDialerReachesOnlyLoopback(t *testing.T) {
	for _, addr := range []string{"10.1.2.3:143", "[fe80::1]:143", "0.0.0.0:143", "192.168.1.1:80"} {
		if err := requireLoopback("tcp", addr, nil); err == nil {
			t.Errorf("%s accepted for plain text", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:143", "[::1]:143", "[::ffff:127.0.0.2]:143"} {
		if err := requireLoopback("tcp", addr, nil); err != nil {
			t.Errorf("%s refused: %v", addr, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	e, err := ParseEndpoint("imap://"+ln.Addr().String(), IMAP)
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Dialer(5*time.Second).Dial("tcp", e.Address())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	tlsE, _ := ParseEndpoint("imaps://m.example.org", IMAP)
	if tlsE.Dialer(time.Second).Control != nil {
		t.Error("a TLS endpoint's dialer is restricted to loopback")
	}
}

// TestCAFileReplacesSystemRoots: without ca_file the system roots are
// used; with it, only its certificates are trusted; a missing, relative,
// empty or non-PEM file is an error naming ca_file; plain endpoints get no
// TLS configuration.
func TestCAFileReplacesSystemRoots(t *testing.T) {
	e, _ := ParseEndpoint("https://dav.example.org", HTTP)
	c, err := e.TLSConfig("")
	if err != nil || c.RootCAs != nil || c.ServerName != "dav.example.org" || c.MinVersion != tls.VersionTLS12 {
		t.Fatalf("no ca_file: %+v, %v", c, err)
	}

	dir := t.TempDir()
	pemPath := filepath.Join(dir, "ca.pem")
	caPEM := testCAPEM(t)
	if err := os.WriteFile(pemPath, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = e.TLSConfig(pemPath)
	if err != nil {
		t.Fatal(err)
	}
	want := x509.NewCertPool()
	want.AppendCertsFromPEM(caPEM)
	if c.RootCAs == nil || !c.RootCAs.Equal(want) {
		t.Error("ca_file pool is not exactly the file's certificates")
	}

	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("not a certificate"), 0o600)
	for _, p := range []string{junk, filepath.Join(dir, "missing.pem"), "relative/ca.pem"} {
		if _, err := e.TLSConfig(p); err == nil || !strings.Contains(err.Error(), "ca_file") {
			t.Errorf("ca_file %s: err = %v", p, err)
		}
	}
	plain, _ := ParseEndpoint("http://127.0.0.1:5232", HTTP)
	if c, err := plain.TLSConfig(pemPath); c != nil || err != nil {
		t.Errorf("plain endpoint TLS config = %v, %v", c, err)
	}
}

// testCAPEM makes a self-signed CA certificate; it is only put in a pool,
// never used to connect anywhere, so its validity dates do not matter.
func testCAPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tidings test CA"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<32, 0), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
