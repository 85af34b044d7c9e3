//go:build unix

package bridge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// Client defaults.
const (
	DefaultTimeout = 15 * time.Second
	// MaxResponseSize caps what a client reads from one response file.
	MaxResponseSize = 64 << 20
	// pollFallback is the polling period without a file watcher; with
	// one, safetyPoll catches a lost event.
	pollFallback = 10 * time.Millisecond
	safetyPoll   = 250 * time.Millisecond
)

// DefaultSendTimeout is how long a client waits for a send's answer: the
// helper shows a native confirmation that waits up to 60 s for the user
// (seed: "cancelling or waiting 60 seconds aborts the send"), then hands
// the message to Messages (bounded at 30 s) and checks its delivery. A
// client that gave up after the usual 15 s would report a failure for a
// message the user then approves — and invite a second send.
const DefaultSendTimeout = 3 * time.Minute

// ErrTimeout is wrapped by a call that got no response in time.
var ErrTimeout = errors.New("bridge helper did not answer in time")

// RemoteError is an error response ("ok": false).
type RemoteError struct {
	ID             string
	Action         string
	Msg            string
	Code           string // 1.3 only
	BridgeRole     string
	AllowedActions []string
	// Raw is the whole error response (1.3 detail fields included).
	Raw json.RawMessage
}

func (e *RemoteError) Error() string { return e.Msg }

// Detail decodes the error response's detail fields into v.
func (e *RemoteError) Detail(v any) error { return json.Unmarshal(e.Raw, v) }

// Client sends requests through a bridge folder and waits for the answers.
// It is safe for concurrent use. The zero value is not usable; use
// NewClient.
type Client struct {
	dir string
	// Timeout bounds each call (default 15 s, protocol 1.2's polling budget).
	Timeout time.Duration
	// SendTimeout is the least a send call waits, whatever Timeout says
	// (default DefaultSendTimeout).
	SendTimeout time.Duration
	// Version is the protocol the client speaks: "1.3" (default) or "1.2",
	// which omits protocol_version from requests, exactly as a 1.2 client.
	Version string

	mu        sync.Mutex
	requests  *dir
	responses *dir
	watcher   *fsnotify.Watcher
	waiters   map[string]chan struct{}
	closed    bool
	status    *StatusResult
	exts      []string // the helper's 1.3 extension actions
	noWatcher bool     // tests: exercise the polling fallback
}

// NewClient returns a client for the bridge folder dir.
func NewClient(dir string) *Client {
	return &Client{dir: dir, Timeout: DefaultTimeout, SendTimeout: DefaultSendTimeout, Version: Version13, waiters: map[string]chan struct{}{}}
}

// Dir is the bridge folder.
func (c *Client) Dir() string { return c.dir }

// Close stops the client's file watcher and closes its folders.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.watcher != nil {
		c.watcher.Close()
		c.watcher = nil
	}
	for _, d := range []*dir{c.requests, c.responses} {
		if d != nil {
			d.close()
		}
	}
	c.requests, c.responses = nil, nil
	return nil
}

// open checks and opens the runtime folders (never creating them: the
// helper or the installer does) and starts the response watcher.
func (c *Client) open() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("bridge client is closed")
	}
	if c.requests != nil {
		return nil
	}
	abs, err := filepath.Abs(c.dir)
	if err != nil {
		return err
	}
	root, err := openDir(nil, abs, false)
	if err != nil {
		if isNotExist(err) {
			return fmt.Errorf("bridge folder %s does not exist: install and start the helper first (`tidings bridge install`, or `tidings helper --bridge-dir %s --watch`)", abs, abs)
		}
		return err
	}
	defer root.close()
	control, err := openDir(root, ControlDir, false)
	if err != nil {
		return fmt.Errorf("%w (has the helper run once in this folder?)", err)
	}
	defer control.close()
	req, err := openDir(control, RequestsDir, false)
	if err != nil {
		return err
	}
	resp, err := openDir(control, ResponsesDir, false)
	if err != nil {
		req.close()
		return err
	}
	c.requests, c.responses = req, resp
	if c.noWatcher {
		return nil
	}
	if w, err := fsnotify.NewWatcher(); err == nil {
		if err := w.Add(resp.path); err == nil {
			c.watcher = w
			go c.dispatch(w)
		} else {
			w.Close()
		}
	}
	return nil
}

// dispatch wakes the waiter of each response that appears.
func (c *Client) dispatch(w *fsnotify.Watcher) {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Rename) && !ev.Has(fsnotify.Write) {
				continue
			}
			c.mu.Lock()
			ch := c.waiters[filepath.Base(ev.Name)]
			c.mu.Unlock()
			if ch != nil {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
		}
	}
}

// newID returns a random 128-bit request id.
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// Call sends one request and returns its response. params may be nil
// (sent as {}), a map, a struct or json.RawMessage; it must encode to a
// JSON object. An "ok": false response is returned as a *RemoteError
// (together with the response). A call that gets no answer within Timeout
// withdraws its request (if the helper has not taken it yet) and returns an
// error wrapping ErrTimeout that names the likely cause.
func (c *Client) Call(ctx context.Context, action string, params any) (*Response, error) {
	return c.call(ctx, newID(), action, params)
}

func (c *Client) call(ctx context.Context, id, action string, params any) (*Response, error) {
	data, err := encodeRequest(id, action, params, c.Version)
	if err != nil {
		return nil, err
	}
	return c.send(ctx, id, action, data)
}

// send publishes a request body and waits for its response.
func (c *Client) send(ctx context.Context, id, action string, data []byte) (*Response, error) {
	if err := c.open(); err != nil {
		return nil, err
	}
	name := ResponseName(id)
	wake := make(chan struct{}, 1)
	c.mu.Lock()
	c.waiters[name] = wake
	watching := c.watcher != nil
	req, resp := c.requests, c.responses
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiters, name)
		c.mu.Unlock()
	}()
	if req == nil {
		return nil, errors.New("bridge client is closed")
	}
	// Publish: temp file + rename, so the helper never sees a partial file.
	if err := req.writeAtomic(RequestName(id), "."+RequestName(id)+".tmp", data); err != nil {
		return nil, fmt.Errorf("publish bridge request: %w", err)
	}

	timeout := c.timeout(action)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	period := safetyPoll
	if !watching {
		period = pollFallback
	}
	poll := time.NewTicker(period)
	defer poll.Stop()
	for {
		r, err := c.take(resp, id)
		if err == nil {
			return r, r.err(action)
		}
		if !isNotExist(err) {
			return nil, err
		}
		select {
		case <-wake:
		case <-poll.C:
		case <-ctx.Done():
			c.withdraw(req, id)
			return nil, ctx.Err()
		case <-deadline.C:
			if r, err := c.take(resp, id); err == nil {
				return r, r.err(action)
			}
			return nil, c.timeoutError(req, id, action, timeout)
		}
	}
}

// timeout is how long a call of action waits for its answer.
func (c *Client) timeout(action string) time.Duration {
	t := c.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	if action == ActionSend {
		st := c.SendTimeout
		if st <= 0 {
			st = DefaultSendTimeout
		}
		t = max(t, st)
	}
	return t
}

func (r *Response) err(action string) error {
	if r.OK {
		return nil
	}
	return &RemoteError{ID: r.ID, Action: action, Msg: r.Error, Code: r.ErrorCode, BridgeRole: r.BridgeRole, AllowedActions: r.AllowedActions, Raw: r.Raw}
}

// withdraw removes a request the helper has not taken yet.
func (c *Client) withdraw(req *dir, id string) bool {
	return req.remove(RequestName(id)) == nil
}

func (c *Client) timeoutError(req *dir, id, action string, timeout time.Duration) error {
	if c.withdraw(req, id) {
		return fmt.Errorf("%w: no answer to %s after %s, and the request was still queued in %s (now withdrawn): the helper is not running or cannot start. "+
			"Start it with `tidings bridge install` (or `tidings helper --bridge-dir %s --watch`); on macOS it also needs Full Disk Access "+
			"(System Settings → Privacy & Security → Full Disk Access → add the helper); see `tidings doctor`",
			ErrTimeout, action, timeout, req.path, filepath.Dir(filepath.Dir(req.path)))
	}
	warn := ""
	if action == ActionSend {
		warn = "; the message may still be sent if the confirmation is approved: read the conversation before sending again"
	}
	return fmt.Errorf("%w: the helper took the %s request %s but did not answer within %s; it may be busy, stuck or have crashed (without Full Disk Access it cannot open the messages database): see %s%s",
		ErrTimeout, action, id, timeout, filepath.Join(filepath.Dir(req.path), LogName), warn)
}

// take reads, removes and parses response-<id>.json. A missing file is
// reported as fs.ErrNotExist.
func (c *Client) take(resp *dir, id string) (*Response, error) {
	name := ResponseName(id)
	f, err := resp.open(name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := statFile(f)
	if err != nil {
		return nil, err
	}
	switch {
	case !fi.isRegular():
		return nil, fmt.Errorf("%w: response %s is %s", ErrUnsafe, name, typeName(fi))
	case fi.uid != euid:
		return nil, fmt.Errorf("%w: response %s is owned by uid %d, not by the current user", ErrUnsafe, name, fi.uid)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxResponseSize+1))
	if err != nil {
		return nil, fmt.Errorf("read bridge response: %w", err)
	}
	// Protocol 1.2 (docs/bridge.md): the client deletes the response right
	// after reading it.
	_ = resp.remove(name)
	if len(data) > MaxResponseSize {
		return nil, fmt.Errorf("bridge response %s is larger than %d bytes", id, MaxResponseSize)
	}
	r, err := ParseResponse(data)
	if err != nil {
		return nil, err
	}
	if r.ID != id {
		return nil, fmt.Errorf("bridge response %s carries id %s", id, excerpt(r.ID))
	}
	return r, nil
}

// ParseResponse decodes a response file.
func ParseResponse(data []byte) (*Response, error) {
	var r Response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("malformed bridge response: %w", err)
	}
	if !r.OK && r.Error == "" {
		return nil, errors.New("malformed bridge response: ok is false but error is empty")
	}
	r.Raw = data
	return &r, nil
}

// encodeRequest builds a request body and checks the 64 KiB limit.
func encodeRequest(id, action string, params any, version string) ([]byte, error) {
	var p json.RawMessage
	switch v := params.(type) {
	case nil:
		p = json.RawMessage("{}")
	case json.RawMessage:
		p = v
		if len(bytes.TrimSpace(p)) == 0 {
			p = json.RawMessage("{}")
		}
	default:
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encode %s params: %w", action, err)
		}
		p = b
	}
	if _, err := decodeObject(p); err != nil {
		return nil, fmt.Errorf("%s params must be a JSON object: %w", action, err)
	}
	req := struct {
		ID       string          `json:"id"`
		Action   string          `json:"action"`
		Params   json.RawMessage `json:"params"`
		Protocol string          `json:"protocol_version,omitempty"`
	}{ID: id, Action: action, Params: p}
	if version != "" && version != Version12 {
		req.Protocol = version
	}
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxRequestSize {
		return nil, fmt.Errorf("%s request is %d bytes; the bridge limit is %d (64 KiB)", action, len(data), MaxRequestSize)
	}
	return data, nil
}

// Connect calls status and checks the helper's protocol version: a major
// version other than 1 fails closed with upgrade guidance (docs/bridge.md,
// "Versions": clients call status before their first message operation). The result
// is cached; Connect again after an error.
func (c *Client) Connect(ctx context.Context) (*StatusResult, error) {
	c.mu.Lock()
	if c.status != nil {
		s := c.status
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	r, err := c.Call(ctx, ActionStatus, nil)
	if err != nil {
		return nil, fmt.Errorf("bridge status: %w", err)
	}
	var s StatusResult
	if err := r.Decode(&s); err != nil {
		return nil, err
	}
	if err := CheckVersion(s.ProtocolVersion); err != nil {
		return nil, err
	}
	var ext struct {
		Actions []string `json:"extension_actions"`
	}
	_ = r.Decode(&ext)
	c.mu.Lock()
	c.status, c.exts = &s, ext.Actions
	c.mu.Unlock()
	return &s, nil
}

// forget drops the cached status, so the next call asks the helper again
// (it may have been restarted, upgraded or given another role).
func (c *Client) forget() {
	c.mu.Lock()
	c.status, c.exts = nil, nil
	c.mu.Unlock()
}

// Offers reports whether the helper (as of the last Connect) serves the
// 1.3 extension action.
func (c *Client) Offers(action string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.exts, action)
}

// Do is Connect (once) followed by Call, decoding a successful answer into
// out (when non-nil). This is what a program should use.
func (c *Client) Do(ctx context.Context, action string, params, out any) error {
	if _, err := c.Connect(ctx); err != nil {
		return err
	}
	r, err := c.Call(ctx, action, params)
	if err != nil {
		return err
	}
	if out != nil {
		return r.Decode(out)
	}
	return nil
}
