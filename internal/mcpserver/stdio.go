package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves s over newline-delimited JSON-RPC on in/out until in
// reaches EOF or ctx ends. Only protocol messages are written to out; the
// caller must send logs elsewhere (stderr). Both eras are served: a request
// carrying MCP 2026-07-28 _meta is answered statelessly, an initialize
// starts a legacy session (go-sdk decides per request).
func ServeStdio(ctx context.Context, s *mcp.Server, in io.ReadCloser, out io.WriteCloser) error {
	t := &versionGuard{inner: &mcp.IOTransport{Reader: in, Writer: out}}
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
type versionGuard struct{ inner mcp.Transport }

func (g *versionGuard) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := g.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &versionGuardConn{Connection: c, pending: map[jsonrpc.ID]bool{}, idle: make(chan struct{}, 1), closed: make(chan struct{})}, nil
}

// versionGuardConn also drains: when stdin ends, Read reports EOF only once
// every request already read has been answered (or drainTimeout passed), so
// `printf '…' | tidings serve` gets its answers instead of a session torn
// down under in-flight calls.
type versionGuardConn struct {
	mcp.Connection
	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	idle    chan struct{} // signalled when pending becomes empty
	closed  chan struct{} // closed by Close: shutting down, do not wait
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
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
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
				c.pending[req.ID] = true
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
