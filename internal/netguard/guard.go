package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Resolver looks a DNS name up; *net.Resolver satisfies it. Tests inject
// one that answers from a table and never sends a query.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens a connection to an IP:port; *net.Dialer satisfies it. The
// guard only ever passes it an address it has checked.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Config configures a Guard.
type Config struct {
	// Resolver answers DNS names; nil is net.DefaultResolver.
	Resolver Resolver
	// Dialer dials checked addresses; nil is a net.Dialer with a 10 s
	// timeout.
	Dialer Dialer
	// Allow are "host:port" destinations admitted even though their
	// address is in a refused class (the profile's web_allow_hosts). An
	// entry admits a dial whose port is its port and whose IP is the
	// entry's IP (or one its name resolves to at dial time), or whose URL
	// host is the entry's host.
	Allow []string
}

// MaxRedirects is how many redirects a Client follows; each is checked
// again by scheme and, at dial time, by address.
const MaxRedirects = 5

// Guard checks destinations and dials only the addresses it checked.
type Guard struct {
	resolver Resolver
	dialer   Dialer
	allow    []allowEntry
}

type allowEntry struct {
	raw  string
	host Host
	port uint16
}

// New validates c.Allow and returns a Guard. A malformed allow entry is an
// error naming it.
func New(c Config) (*Guard, error) {
	g := &Guard{resolver: c.Resolver, dialer: c.Dialer}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	if g.dialer == nil {
		g.dialer = &net.Dialer{Timeout: 10 * time.Second}
	}
	for _, s := range c.Allow {
		h, p, err := net.SplitHostPort(s)
		if err != nil {
			return nil, fmt.Errorf("web_allow_hosts entry %q is not host:port", s)
		}
		port, err := parsePort(p)
		if err != nil {
			return nil, fmt.Errorf("web_allow_hosts entry %q: %w", s, err)
		}
		host, err := ParseHost(h)
		if err != nil {
			return nil, fmt.Errorf("web_allow_hosts entry %q: %w", s, err)
		}
		g.allow = append(g.allow, allowEntry{raw: s, host: host, port: port})
	}
	return g, nil
}

func parsePort(p string) (uint16, error) {
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 || strings.TrimLeft(p, "0123456789") != "" {
		return 0, fmt.Errorf("port %q must be a number from 1 to 65535", p)
	}
	return uint16(n), nil
}

// RefusedError is a destination the guard will not connect to. Its
// message is one sentence naming the destination and its class.
type RefusedError struct {
	// Dest is what was asked for (host:port or a URL).
	Dest string
	// Addr is the refused address, when the refusal is about one.
	Addr netip.Addr
	// Class names the reason: an address class ("loopback"), "scheme",
	// "host" or "redirects".
	Class string
	msg   string
}

func (e *RefusedError) Error() string { return e.msg }

func refusedAddr(dest string, a netip.Addr, class string) *RefusedError {
	return &RefusedError{Dest: dest, Addr: a, Class: class, msg: fmt.Sprintf(
		"refused to connect to %s: %s is a %s address, which is fetched only when the profile's web_allow_hosts lists it", dest, a, class)}
}

// CheckURL is the check that needs no network: the scheme is http or
// https, there is a host, no user name or password, and the host is a
// valid name or address (every spelling of an IP read as that IP, whose
// class is then checked unless an allow entry names it). The dial-time
// check is still the one that decides; this one refuses early and with a
// sentence that names the URL's problem.
func (g *Guard) CheckURL(ctx context.Context, u *url.URL) error {
	switch u.Scheme {
	case "http", "https":
	default:
		return &RefusedError{Dest: u.Redacted(), Class: "scheme", msg: fmt.Sprintf(
			"refused to fetch a %q URL: only http and https URLs are fetched", u.Scheme)}
	}
	if u.User != nil {
		return &RefusedError{Dest: u.Redacted(), Class: "host", msg: "refused to fetch a URL with a user name or password in it"}
	}
	if u.Hostname() == "" {
		return &RefusedError{Dest: u.Redacted(), Class: "host", msg: "refused to fetch a URL without a host"}
	}
	h, err := ParseHost(u.Hostname())
	if err != nil {
		return &RefusedError{Dest: u.Redacted(), Class: "host", msg: fmt.Sprintf("refused to fetch %s: the host is %v", u.Redacted(), err)}
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	p, err := parsePort(port)
	if err != nil {
		return &RefusedError{Dest: u.Redacted(), Class: "host", msg: fmt.Sprintf("refused to fetch %s: %v", u.Redacted(), err)}
	}
	if h.IsIP() {
		if c := Class(h.Addr); c != "" && !g.admits(ctx, h, h.Addr, p) {
			return refusedAddr(net.JoinHostPort(h.Addr.String(), port), h.Addr, c)
		}
	}
	return nil
}

// admitsLiteral: an allow entry with this host (as written, after
// parsing) and port.
func (g *Guard) admitsLiteral(h Host, port uint16) bool {
	for _, e := range g.allow {
		if e.port != port {
			continue
		}
		if h.IsIP() && e.host.IsIP() && e.host.Addr.Unmap() == h.Addr.Unmap() {
			return true
		}
		if !h.IsIP() && !e.host.IsIP() && e.host.Name == h.Name {
			return true
		}
	}
	return false
}

// admits: the dialled ip:port matches an allow entry's address (an entry
// name is resolved now, with the same resolver), or the URL host is an
// entry's host.
func (g *Guard) admits(ctx context.Context, h Host, ip netip.Addr, port uint16) bool {
	if g.admitsLiteral(h, port) {
		return true
	}
	for _, e := range g.allow {
		if e.port != port {
			continue
		}
		if e.host.IsIP() {
			if e.host.Addr.Unmap() == ip.Unmap() {
				return true
			}
			continue
		}
		addrs, err := g.resolver.LookupNetIP(ctx, "ip", e.host.Name)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if a.Unmap() == ip.Unmap() {
				return true
			}
		}
	}
	return false
}

// DialContext is the guarded dial: parse the host (IP spellings become
// IPs, never lookups), resolve a name with the guard's resolver, refuse
// if ANY address is in a refused class and not admitted by the allow
// list, then dial the checked IPs in order — never the name, so nothing
// re-resolves between check and connection.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, &RefusedError{Dest: addr, Class: "network", msg: fmt.Sprintf("refused to connect to %s over %q: only TCP is used", addr, network)}
	}
	hs, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("guarded dial %q: %w", addr, err)
	}
	port, err := parsePort(ps)
	if err != nil {
		return nil, &RefusedError{Dest: addr, Class: "host", msg: fmt.Sprintf("refused to connect to %s: %v", addr, err)}
	}
	h, err := ParseHost(hs)
	if err != nil {
		return nil, &RefusedError{Dest: addr, Class: "host", msg: fmt.Sprintf("refused to connect to %s: %v", addr, err)}
	}
	var ips []netip.Addr
	if h.IsIP() {
		ips = []netip.Addr{h.Addr}
	} else {
		ips, err = g.resolver.LookupNetIP(ctx, "ip", h.Name)
		if err != nil {
			return nil, fmt.Errorf("could not resolve %s: %w", h.Name, err)
		}
		if len(ips) == 0 {
			return nil, fmt.Errorf("could not resolve %s: no address", h.Name)
		}
	}
	for _, ip := range ips {
		if c := Class(ip); c != "" && !g.admits(ctx, h, ip, port) {
			return nil, refusedAddr(addr, ip.WithZone(""), c)
		}
	}
	var errs []error
	for _, ip := range ips {
		conn, err := g.dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(ip.Unmap().WithZone(""), port).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("connect to %s: %w", addr, errors.Join(errs...))
}

// Client returns an HTTP client that dials only through the guard, uses
// no proxy (a proxy from the environment would make the guard check the
// proxy's address instead of the destination), follows at most
// MaxRedirects redirects (each re-checked by CheckURL, and at dial time),
// and gives up after timeout.
func (g *Guard) Client(timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return &RefusedError{Dest: req.URL.Redacted(), Class: "redirects", msg: fmt.Sprintf(
					"stopped after %d redirects (at most %d are followed)", MaxRedirects, MaxRedirects)}
			}
			return g.CheckURL(req.Context(), req.URL)
		},
	}
}
