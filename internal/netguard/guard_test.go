package netguard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/netguard"
	"github.com/tidings-mcp/tidings/internal/netguard/netguardtest"
)

// env is one SSRF test setup: two loopback servers A and B that count
// their connections, a table resolver and a recording dialer.
type env struct {
	a, b     *netguardtest.Server
	resolver *netguardtest.Resolver
	dialer   *netguardtest.Dialer
}

func newEnv(t *testing.T) *env {
	e := &env{}
	e.b = netguardtest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "B")
	}))
	e.a = netguardtest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, strings.ReplaceAll(to, "PORTB", e.b.Port()), http.StatusFound)
			return
		}
		fmt.Fprint(w, "A")
	}))
	e.resolver = netguardtest.NewResolver(map[string][]string{
		"localhost":     {"127.0.0.1", "::1"},
		"evil.test":     {"127.0.0.1"},
		"mapped.test":   {"::ffff:127.0.0.1"},
		"rebind.test":   {"93.184.215.14", "127.0.0.1"},
		"metadata.test": {"169.254.169.254"},
		"app.test":      {"127.0.0.1"},
		"public.test":   {"93.184.215.14"},
	})
	e.dialer = &netguardtest.Dialer{T: t, Public: map[netip.Addr]http.Handler{
		netip.MustParseAddr("93.184.215.14"): http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "public") }),
	}}
	return e
}

func (e *env) expand(s string) string {
	return strings.NewReplacer("PORTA", e.a.Port(), "PORTB", e.b.Port()).Replace(s)
}

func (e *env) get(t *testing.T, allow []string, url string) (string, error) {
	t.Helper()
	var expanded []string
	for _, a := range allow {
		expanded = append(expanded, e.expand(a))
	}
	g, err := netguard.New(netguard.Config{Resolver: e.resolver, Dialer: e.dialer, Allow: expanded})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.expand(url), nil)
	if err != nil {
		return "", err
	}
	if err := g.CheckURL(ctx, req.URL); err != nil {
		return "", err
	}
	resp, err := g.Client(10 * time.Second).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// The SSRF table of issue 14: every destination class is refused before
// any connection — the recording dialer is never asked and the loopback
// servers accept nothing — whatever spelling reaches it: by name, by
// address, IPv4-mapped IPv6, a name that resolves to loopback, every
// inet_aton spelling, a redirect, a non-http scheme.
func TestSSRFRefusedBeforeAnyConnection(t *testing.T) {
	for _, tc := range []struct {
		name, url string
		allow     []string
		want      string // substring of the refusal
		acceptsA  int64  // connections A may take (redirect cases)
	}{
		{"loopback by name", "http://localhost:PORTA/", nil, "loopback", 0},
		{"loopback by address", "http://127.0.0.1:PORTA/", nil, "loopback", 0},
		{"another loopback address", "http://127.0.0.2:PORTA/", nil, "loopback", 0},
		{"unspecified 0.0.0.0", "http://0.0.0.0:PORTA/", nil, "unspecified", 0},
		{"IPv6 loopback", "http://[::1]:PORTA/", nil, "loopback", 0},
		{"IPv6 unspecified", "http://[::]:PORTA/", nil, "unspecified", 0},
		{"IPv4-mapped IPv6", "http://[::ffff:127.0.0.1]:PORTA/", nil, "IPv4-mapped IPv6 of loopback", 0},
		{"IPv4-mapped IPv6, hex", "http://[::ffff:7f00:1]:PORTA/", nil, "IPv4-mapped IPv6 of loopback", 0},
		{"IPv4-compatible IPv6", "http://[::127.0.0.1]:PORTA/", nil, "IPv4-compatible IPv6 of loopback", 0},
		{"NAT64 of loopback", "http://[64:ff9b::127.0.0.1]:PORTA/", nil, "NAT64", 0},
		{"name resolving to loopback", "http://evil.test:PORTA/", nil, "loopback", 0},
		{"name resolving to mapped loopback", "http://mapped.test:PORTA/", nil, "IPv4-mapped IPv6 of loopback", 0},
		{"name with a public and a loopback address", "http://rebind.test:PORTA/", nil, "loopback", 0},
		{"cloud metadata by name", "http://metadata.test/", nil, "link-local", 0},
		{"cloud metadata by address", "http://169.254.169.254/latest/meta-data/", nil, "link-local", 0},
		{"decimal", "http://2130706433:PORTA/", nil, "loopback", 0},
		{"octal", "http://0177.0.0.1:PORTA/", nil, "loopback", 0},
		{"hex", "http://0x7f.1:PORTA/", nil, "loopback", 0},
		{"hex whole", "http://0x7f000001:PORTA/", nil, "loopback", 0},
		{"short form", "http://127.1:PORTA/", nil, "loopback", 0},
		{"trailing dot", "http://127.0.0.1.:PORTA/", nil, "loopback", 0},
		{"full-width digits (IDNA maps them)", "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11:PORTA/", nil, "loopback", 0},
		{"circled letters (IDNA maps them)", "http://\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3:PORTA/", nil, "loopback", 0},
		{"upper-case name", "http://LOCALHOST:PORTA/", nil, "loopback", 0},
		{"private", "http://10.0.0.1:PORTA/", nil, "private", 0},
		{"private 192.168", "http://192.168.0.1/", nil, "private", 0},
		{"CGNAT", "http://100.64.0.1/", nil, "CGNAT", 0},
		{"link-local IPv6", "http://[fe80::1]/", nil, "link-local", 0},
		{"unique local IPv6", "http://[fd00::1]/", nil, "unique local", 0},
		{"multicast", "http://224.0.0.1/", nil, "multicast", 0},
		{"broadcast", "http://255.255.255.255/", nil, "broadcast", 0},
		{"documentation", "http://192.0.2.1/", nil, "documentation", 0},
		{"file scheme", "file:///etc/passwd", nil, "only http and https", 0},
		{"gopher scheme", "gopher://127.0.0.1:PORTA/_GET", nil, "only http and https", 0},
		{"ftp scheme", "ftp://127.0.0.1:PORTA/", nil, "only http and https", 0},
		{"user info", "http://user:pw@127.0.0.1:PORTA/", nil, "user name or password", 0},
		{"not an address, not a name", "http://1.2.3.4.5:PORTA/", nil, "not a valid host", 0},
		{"redirect to loopback", "http://127.0.0.1:PORTA/?to=http://127.0.0.1:PORTB/", []string{"127.0.0.1:PORTA"}, "loopback", 1},
		{"redirect to loopback by name", "http://127.0.0.1:PORTA/?to=http://evil.test:PORTB/", []string{"127.0.0.1:PORTA"}, "loopback", 1},
		{"redirect to decimal loopback", "http://127.0.0.1:PORTA/?to=http://2130706433:PORTB/", []string{"127.0.0.1:PORTA"}, "loopback", 1},
		{"redirect to file", "http://127.0.0.1:PORTA/?to=file:///etc/passwd", []string{"127.0.0.1:PORTA"}, "only http and https", 1},
		{"allowed port, other loopback port", "http://127.0.0.1:PORTB/", []string{"127.0.0.1:PORTA"}, "loopback", 0},
		{"allowed IPv4, IPv6 loopback", "http://[::1]:PORTA/", []string{"127.0.0.1:PORTA"}, "loopback", 0},
		{"allowed name, other port", "http://app.test:PORTB/", []string{"app.test:PORTA"}, "loopback", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			body, err := e.get(t, tc.allow, tc.url)
			var re *netguard.RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("GET %s = %q, %v; want a refusal", tc.url, body, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("refusal %q does not name %q", err, tc.want)
			}
			if strings.Count(re.Error(), ". ") > 0 || strings.Contains(re.Error(), "\n") {
				t.Errorf("refusal is not one sentence: %q", re.Error())
			}
			if got := e.a.Accepts(); got != tc.acceptsA {
				t.Errorf("server A accepted %d connections, want %d", got, tc.acceptsA)
			}
			if got := e.b.Accepts(); got != 0 {
				t.Errorf("server B accepted %d connections, want 0", got)
			}
			wantDials := []string{}
			if tc.acceptsA > 0 {
				wantDials = []string{"127.0.0.1:" + e.a.Port()}
			}
			if got := e.dialer.Dialed(); !slices.Equal(append([]string{}, got...), wantDials) {
				t.Errorf("dialled %v, want %v", got, wantDials)
			}
			for _, n := range e.resolver.Asked() {
				if strings.Trim(n, "0123456789.x") == "" {
					t.Errorf("numeric host %q was handed to the resolver", n)
				}
			}
		})
	}
}

// web_allow_hosts admits exactly the listed destination: the allowed
// loopback port is fetched (by address, by a spelling of it, by a name
// resolving to it, by the entry's own name), and the other port stays
// unreached. A public name is dialled at the address that was checked,
// resolved once.
func TestAllowListAdmitsExactlyThatDestination(t *testing.T) {
	for _, tc := range []struct {
		name, url string
		allow     []string
		want      string
		lookups   []string
		dialed    string // "" = none
	}{
		{"allowed address", "http://127.0.0.1:PORTA/", []string{"127.0.0.1:PORTA"}, "A", nil, "127.0.0.1:PORTA"},
		{"allowed address, decimal spelling", "http://2130706433:PORTA/", []string{"127.0.0.1:PORTA"}, "A", nil, "127.0.0.1:PORTA"},
		{"name resolving to the allowed address", "http://evil.test:PORTA/", []string{"127.0.0.1:PORTA"}, "A", []string{"evil.test"}, "127.0.0.1:PORTA"},
		{"allowed name", "http://app.test:PORTA/", []string{"app.test:PORTA"}, "A", []string{"app.test"}, "127.0.0.1:PORTA"},
		{"allowed name's address", "http://127.0.0.1:PORTA/", []string{"app.test:PORTA"}, "A", []string{"app.test", "app.test"}, "127.0.0.1:PORTA"}, // the entry's name, by CheckURL and at dial
		{"public name, no allow list", "http://public.test/", nil, "public", []string{"public.test"}, "93.184.215.14:80"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			body, err := e.get(t, tc.allow, tc.url)
			if err != nil || body != tc.want {
				t.Fatalf("GET %s = %q, %v; want %q", tc.url, body, err, tc.want)
			}
			if got := e.b.Accepts(); got != 0 {
				t.Errorf("server B accepted %d connections", got)
			}
			if got, want := e.dialer.Dialed(), []string{e.expand(tc.dialed)}; !slices.Equal(got, want) {
				t.Errorf("dialled %v, want %v", got, want)
			}
			if got := e.resolver.Asked(); !slices.Equal(got, tc.lookups) {
				t.Errorf("resolver asked %v, want %v", got, tc.lookups)
			}
		})
	}
}

// A redirect chain longer than MaxRedirects stops with a sentence.
func TestRedirectsAreBounded(t *testing.T) {
	e := newEnv(t)
	hops := 0
	loop := netguardtest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops++
		http.Redirect(w, r, fmt.Sprintf("/hop%d", hops), http.StatusFound)
	}))
	_, err := e.get(t, []string{"127.0.0.1:" + loop.Port()}, "http://127.0.0.1:"+loop.Port()+"/")
	if err == nil || !strings.Contains(err.Error(), "stopped after 5 redirects") {
		t.Fatalf("err = %v", err)
	}
	if hops != netguard.MaxRedirects+1 {
		t.Errorf("server saw %d requests, want %d", hops, netguard.MaxRedirects+1)
	}
}

// A malformed web_allow_hosts entry is a configuration error naming it.
func TestAllowEntriesAreValidated(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "localhost:0", "localhost:http", "host:65536", "1.2.3.4.5:80", ":80"} {
		if _, err := netguard.New(netguard.Config{Allow: []string{s}}); err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("entry %q: err = %v, want an error naming it", s, err)
		}
	}
}

// The client never goes through a proxy: with HTTP_PROXY set, the guard
// would otherwise check (and the transport dial) the proxy's address
// instead of the destination's.
func TestClientUsesNoProxy(t *testing.T) {
	g, err := netguard.New(netguard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := g.Client(time.Second).Transport.(*http.Transport)
	if !ok || tr.Proxy != nil || tr.DialContext == nil || tr.DialTLSContext != nil {
		t.Errorf("transport = %+v: want no proxy and only the guarded DialContext", tr)
	}
}
