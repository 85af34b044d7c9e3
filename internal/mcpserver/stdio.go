package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves s over newline-delimited JSON-RPC on in/out until in
// reaches EOF or ctx ends. Only protocol messages are written to out; the
// caller must send logs elsewhere (stderr). Both eras are served: a request
// carrying MCP 2026-07-28 _meta is answered statelessly, an initialize
// starts a legacy session (go-sdk decides per request).
//
// A line that is not a JSON-RPC message is answered (-32700 or -32600, id
// null) by the screen in front of go-sdk (screen.go) and the session goes
// on; JSON-RPC batches are accepted only in a session that negotiated
// 2025-03-26, the one version that defines them.
func ServeStdio(ctx context.Context, s *mcp.Server, in io.ReadCloser, out io.WriteCloser) error {
	w := &syncWriter{w: out}
	g := &versionGuard{out: w}
	scr := newScreenReader(in, w, g.batchesAllowed)
	// MaxLineLength -1: the screen enforces maxStdioLine and answers; go-sdk's
	// own cap would end the session.
	g.inner = &mcp.IOTransport{Reader: scr, Writer: w, MaxLineLength: -1}
	t := g
	ss, err := s.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("stdio session: %w", err)
	}
	waitc := make(chan error, 1)
	go func() { waitc <- ss.Wait() }()
	select {
	case err := <-waitc:
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
			return nil
		}
		return fmt.Errorf("stdio session: %w", err)
	case <-ctx.Done():
		// SIGINT/SIGTERM. go-sdk's Close waits for in-flight handlers, and
		// does not cancel them, so a hung handler would hang shutdown: give
		// them a grace period, then return anyway (the process exits).
		go ss.Close()
		select {
		case <-waitc:
		case <-time.After(shutdownGrace):
		}
		return nil
	}
}

// shutdownGrace bounds how long a cancelled stdio session waits for
// in-flight calls.
const shutdownGrace = 3 * time.Second

// versionGuard answers requests whose _meta names a protocol version this
// server does not implement with -32022 and the supported list, before
// go-sdk sees them. go-sdk treats any _meta version below 2026-07-28 (for
// example the spec's own "1900-01-01" probe) as a legacy request and
// answers -32601 or "not initialized", which a dual-era client would read
// as "legacy server".
//
// It also remembers the protocol version the legacy session negotiated
// (for the screen's batch rule), answers messages go-sdk decodes but
// refuses (a batch reusing an id still in flight) instead of letting the
// session end, and gives a real JSON-RPC code to the errors go-sdk sends
// with code 0 (a legacy request before initialize).
type versionGuard struct {
	inner      mcp.Transport
	out        io.Writer              // stdout, shared with go-sdk
	negotiated atomic.Pointer[string] // protocol version of the legacy session
}

// batchesAllowed reports whether the session negotiated 2025-03-26, the
// only MCP version whose transport defines JSON-RPC batches (2025-06-18
// removed them; 2024-11-05 and 2026-07-28 have none).
func (g *versionGuard) batchesAllowed() bool {
	v := g.negotiated.Load()
	return v != nil && *v == "2025-03-26"
}

func (g *versionGuard) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := g.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &versionGuardConn{Connection: c, guard: g, pending: map[jsonrpc.ID]string{}, idle: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

// versionGuardConn also drains: when stdin ends, Read reports EOF only once
// every request already read has been answered (or drainTimeout passed), so
// `printf '…' | tidings serve` gets its answers instead of a session torn
// down under in-flight calls.
type versionGuardConn struct {
	mcp.Connection
	guard   *versionGuard
	mu      sync.Mutex
	pending map[jsonrpc.ID]string // request id → method
	idle    chan struct{}         // signalled when pending becomes empty
	closed  chan struct{}         // closed by Close: shutting down, do not wait
	once    sync.Once
}

// Close stops any drain in progress: a shutdown (SIGINT/SIGTERM) must not
// wait for calls whose answers can no longer be written.
func (c *versionGuardConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

const drainTimeout = 30 * time.Second

func (c *versionGuardConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, isResp := msg.(*jsonrpc.Response)
	var method string
	if isResp {
		c.mu.Lock()
		method = c.pending[resp.ID]
		c.mu.Unlock()
		if method == "initialize" && resp.Error == nil {
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if json.Unmarshal(resp.Result, &r) == nil && r.ProtocolVersion != "" {
				c.guard.negotiated.Store(&r.ProtocolVersion)
			}
		}
		if e := codedError(resp.Error, method); e != resp.Error {
			msg = &jsonrpc.Response{ID: resp.ID, Result: resp.Result, Error: e}
		}
	}
	err := c.Connection.Write(ctx, msg)
	if isResp {
		c.mu.Lock()
		delete(c.pending, resp.ID)
		if len(c.pending) == 0 {
			select {
			case c.idle <- struct{}{}:
			default:
			}
		}
		c.mu.Unlock()
	}
	return err
}

func (c *versionGuardConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		var refused *jsonrpc.Error
		if err != nil && errors.As(err, &refused) && ctx.Err() == nil {
			// go-sdk decoded the line but refused it as a message (its
			// reader is still alive): answer, and read on.
			if _, werr := c.guard.out.Write(rpcErrorLine(codeInvalidRequest, msgNotAMessage)); werr != nil {
				return nil, werr
			}
			continue
		}
		if err != nil {
			c.drain(ctx)
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			return msg, nil
		}
		v, ok := metaVersion(req.Params)
		if !ok || slices.Contains(mcp.SupportedProtocolVersions(), v) {
			if req.Method != "subscriptions/listen" { // a listen ends only when the client leaves
				c.mu.Lock()
				c.pending[req.ID] = req.Method
				c.mu.Unlock()
			}
			return msg, nil
		}
		data, _ := json.Marshal(map[string]any{"supported": mcp.SupportedProtocolVersions(), "requested": v})
		resp := &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{
			Code: codeUnsupportedVersion, Message: fmt.Sprintf("unsupported protocol version %q", v), Data: data,
		}}
		if err := c.Connection.Write(ctx, resp); err != nil {
			return nil, err
		}
	}
}

// codedError returns err unchanged when it carries a JSON-RPC code, and
// otherwise a coded copy: go-sdk sends plain Go errors with code 0, which
// is no JSON-RPC code at all. The one it sends in normal use, a legacy
// request before initialize, becomes -32600 with a sentence naming the fix;
// any other becomes -32603 with go-sdk's text.
func codedError(err error, method string) error {
	var coded *jsonrpc.Error
	if err == nil || errors.As(err, &coded) {
		return err
	}
	if strings.Contains(err.Error(), "invalid during session initialization") {
		return &jsonrpc.Error{Code: codeInvalidRequest, Message: fmt.Sprintf(
			"invalid request: %q needs an initialized session: send initialize (and notifications/initialized) first, or send a 2026-07-28 request with its _meta protocol version", method)}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// drain waits until every read request has its response written.
func (c *versionGuardConn) drain(ctx context.Context) {
	deadline := time.After(drainTimeout)
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.idle:
		case <-deadline:
			return
		case <-c.closed:
			return
		case <-ctx.Done():
			return
		}
	}
}

// metaVersion extracts params._meta["io.modelcontextprotocol/protocolVersion"].
func metaVersion(params json.RawMessage) (string, bool) {
	if len(params) == 0 {
		return "", false
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return "", false
	}
	raw, ok := p.Meta[metaVersionKey]
	if !ok {
		return "", false
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}
