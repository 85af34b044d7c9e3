// Package netguardtest holds the hermetic network doubles of the SSRF
// tests: a resolver that answers from a table and records every question,
// a dialer that records every dial and connects only to loopback (or to an
// in-memory handler for public-looking addresses), and loopback servers
// that count the connections they accept. No test using them sends a
// packet outside 127.0.0.0/8 and ::1 (docs/testing.md).
package netguardtest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
)

// Resolver answers names from a table and records every question. A name
// not in the table is "no such host": it never asks the real DNS.
type Resolver struct {
	mu    sync.Mutex
	Names map[string][]netip.Addr
	asked []string
}

// NewResolver builds a Resolver from name → addresses.
func NewResolver(names map[string][]string) *Resolver {
	r := &Resolver{Names: map[string][]netip.Addr{}}
	for n, as := range names {
		for _, a := range as {
			r.Names[n] = append(r.Names[n], netip.MustParseAddr(a))
		}
	}
	return r
}

// LookupNetIP implements netguard.Resolver.
func (r *Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, host)
	if as, ok := r.Names[host]; ok {
		return append([]netip.Addr(nil), as...), nil
	}
	return nil, &net.DNSError{Err: "no such host (test resolver)", Name: host, IsNotFound: true}
}

// Asked returns the names looked up so far.
func (r *Resolver) Asked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.asked...)
}

// Dialer records every address it is asked to dial. Loopback addresses
// are dialled for real; an address in Public is served in memory by its
// handler (no packet leaves); anything else fails the test.
type Dialer struct {
	T      testing.TB
	Public map[netip.Addr]http.Handler
	mu     sync.Mutex
	dialed []string
}

// DialContext implements netguard.Dialer.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.dialed = append(d.dialed, addr)
	d.mu.Unlock()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		d.T.Errorf("the guard dialled %q, which is not an IP:port (it must dial the address it checked)", addr)
		return nil, err
	}
	if ap.Addr().Unmap().IsLoopback() {
		var nd net.Dialer
		return nd.DialContext(ctx, network, addr)
	}
	if h, ok := d.Public[ap.Addr()]; ok {
		client, server := net.Pipe()
		l := &oneConn{c: server, done: make(chan struct{})}
		go (&http.Server{Handler: h}).Serve(l) //nolint:errcheck // ends with the pipe
		return client, nil
	}
	d.T.Errorf("the guard dialled %s, which is neither loopback nor an in-memory test address", addr)
	return nil, errors.New("netguardtest: refused to dial outside loopback")
}

// Dialed returns the addresses dialled so far.
func (d *Dialer) Dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.dialed...)
}

// oneConn is a listener that yields one connection, then blocks until
// closed.
type oneConn struct {
	c    net.Conn
	once sync.Once
	done chan struct{}
	used atomic.Bool
}

func (l *oneConn) Accept() (net.Conn, error) {
	if l.used.CompareAndSwap(false, true) {
		return l.c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *oneConn) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// Server is a loopback HTTP server that counts accepted connections.
type Server struct {
	*httptest.Server
	accepts atomic.Int64
}

// NewServer starts a loopback server with h; it closes with the test.
func NewServer(t testing.TB, h http.Handler) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.accepts.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// Accepts is the number of connections accepted so far.
func (s *Server) Accepts() int64 { return s.accepts.Load() }

// Port is the server's port as text.
func (s *Server) Port() string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}
