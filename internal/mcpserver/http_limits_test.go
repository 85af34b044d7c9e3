package mcpserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTokenStrengthOneRule: a bearer token shorter than 16 characters is
// refused whatever its source, the same rule ReadTokenFile applies, before
// anything listens.
func TestTokenStrengthOneRule(t *testing.T) {
	s := testServer(t).SDK
	// Characters, not bytes: six euro signs are 18 bytes, and invisible
	// characters (zero-width space, joiners, BOM) count for nothing.
	for _, tok := range []string{"x", "123456789012345", strings.Repeat(" ", 20), " short-token-12 \t",
		"€€€€€€", strings.Repeat("\u200b", 16), "abc" + strings.Repeat("\u200d\ufeff", 10), strings.Repeat("\x00", 16),
		// Combining marks, variation selectors, fillers, private use,
		// unassigned and invalid bytes show nothing either.
		"ab" + strings.Repeat("\ufe0f", 14), "a" + strings.Repeat("\u0301", 15), "ab" + strings.Repeat("\U000e0100", 14),
		"ab" + strings.Repeat("\u20dd", 14), strings.Repeat("\u3164", 16), strings.Repeat("\u2800", 16),
		strings.Repeat("\ue000", 16), strings.Repeat("\u0378", 16), strings.Repeat("\xff", 16)} {
		for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
			// A cancelled context: a token wrongly accepted serves nothing
			// and returns at once instead of hanging the test.
			done, cancel := context.WithCancel(context.Background())
			cancel()
			err := ListenAndServe(done, s, ListenOptions{Addr: addr, HTTPOptions: HTTPOptions{Token: tok}})
			if !errors.Is(err, ErrTokenTooShort) {
				t.Errorf("token %q on %s: err = %v, want ErrTokenTooShort", tok, addr, err)
			}
		}
		p := filepath.Join(t.TempDir(), "token")
		os.WriteFile(p, []byte(tok), 0o600)
		if _, err := ReadTokenFile(p); !errors.Is(err, ErrTokenTooShort) {
			t.Errorf("token file %q: err = %v, want ErrTokenTooShort", tok, err)
		}
	}
	if msg := ErrTokenTooShort.Error(); strings.Count(msg, ". ") > 0 || !strings.Contains(msg, "16") {
		t.Errorf("not one sentence naming the rule: %q", msg)
	}
	// 16 characters serve.
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- ListenAndServe(ctx, s, ListenOptions{Addr: "127.0.0.1:0", HTTPOptions: HTTPOptions{Token: "0123456789abcdef"},
			Ready: func(a net.Addr) { ready <- a }})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("16-character token refused: %v", err)
	}
	cancel()
	<-done
}

// TestHTTPSlowBodyCutOff: a client that sends headers and part of a body,
// then stalls, is answered 408 and disconnected once BodyReadTimeout has
// passed, instead of holding the connection open.
func TestHTTPSlowBodyCutOff(t *testing.T) {
	base := startHTTP(t, HTTPOptions{BodyReadTimeout: 100 * time.Millisecond})
	for _, path := range []string{"/mcp", "/sse?sessionid=x"} {
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", path)
		c.SetReadDeadline(time.Now().Add(30 * time.Second)) // the bounded wait: far above the 100 ms deadline
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: no answer to a stalled body: %v", path, err)
		}
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("%s: status %d, want 408", path, resp.StatusCode)
		}
		io.Copy(io.Discard, resp.Body)
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("%s: connection not closed after the 408: %v", path, err)
		}
		c.Close()
	}
}

// TestHTTPBodyDeadlineSparesStreams: the body deadline does not cut a
// long-lived SSE stream: after it has passed, the stream still delivers.
func TestHTTPBodyDeadlineSparesStreams(t *testing.T) {
	base := startHTTP(t, HTTPOptions{BodyReadTimeout: 50 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/sse", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	next := func() string {
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				return v
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return ""
	}
	endpoint := next()
	time.Sleep(200 * time.Millisecond) // let the body deadline pass (not a threshold: any wait above it will do)
	if r := do(t, base, rpc{path: endpoint, body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`}); r.status != 202 {
		t.Fatalf("initialize: %d %s", r.status, r.raw)
	}
	if msg := next(); !strings.Contains(msg, `"id":1`) {
		t.Fatalf("stream after the deadline: %s", msg)
	}
}

// TestListenerConnectionCap: the listener holds at most MaxConns
// connections; the next is accepted only once one closes.
func TestListenerConnectionCap(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{}, 1)
	ln := newLimitListener(inner, 2)
	ln.full = func() { waiting <- struct{}{} }
	defer ln.Close()
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	for range 2 {
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	third := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			third <- c
		}
	}()
	<-waiting // Accept found both slots taken
	select {
	case <-third:
		t.Fatal("a third connection was accepted while two were held")
	default:
	}
	held[0].Close()
	held[0].Close() // closing twice frees one slot, not two
	c := <-third
	c.Close()
	held[1].Close()
	// Close ends a waiting Accept.
	ln2 := newLimitListener(mustListen(t), 1)
	go func() { c, _ := net.Dial("tcp", ln2.Addr().String()); _ = c }()
	if c, err := ln2.Accept(); err == nil {
		defer c.Close()
	}
	errc := make(chan error, 1)
	go func() { _, err := ln2.Accept(); errc <- err }()
	ln2.Close()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v", err)
	}
}

func mustListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
