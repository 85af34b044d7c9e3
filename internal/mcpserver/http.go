package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Protocol constants used by the HTTP front.
const (
	firstModernVersion = "2026-07-28"
	headerVersion      = "Mcp-Protocol-Version"
	headerName         = "Mcp-Name"
	headerSession      = "Mcp-Session-Id"
	metaVersionKey     = "io.modelcontextprotocol/protocolVersion"

	codeHeaderMismatch     = -32020
	codeUnsupportedVersion = -32022
	codeInvalidRequest     = -32600

	// DefaultMaxBodyBytes caps one request body. Tool arguments are small;
	// 1 MiB leaves room while bounding memory per request.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultBodyReadTimeout bounds reading one request body (1 MiB at most):
	// slow partial bodies must not hold connections open.
	DefaultBodyReadTimeout = 10 * time.Second
)

// nullID is the JSON-RPC id of an error about a message whose id could not
// be read.
var nullID = json.RawMessage("null")

// HTTPOptions configures NewHTTPHandler.
type HTTPOptions struct {
	// Token, when non-empty, is required on every request as
	// "Authorization: Bearer TOKEN". Without a token the handler accepts
	// only loopback Host headers.
	Token string
	// AllowedOrigins lists Origin values (scheme://host[:port]) accepted in
	// addition to the request's own origin. Empty by default: no CORS.
	AllowedOrigins []string
	// MaxBodyBytes caps request bodies; 0 = DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// SessionTimeout closes idle legacy sessions; 0 = one hour.
	SessionTimeout time.Duration
	// BodyReadTimeout bounds reading one request body, from the end of the
	// headers; 0 = DefaultBodyReadTimeout. A client that sends a body more
	// slowly is answered 408 and its connection closed. Response streams
	// (SSE) are not affected: the deadline is lifted once the body is read.
	BodyReadTimeout time.Duration
	Logger          *slog.Logger
}

// NewHTTPHandler serves one go-sdk server on:
//
//   - POST /mcp: MCP 2026-07-28 stateless requests (recognised by an
//     MCP-Protocol-Version header or a _meta protocol version of
//     2026-07-28 or later) go to a Stateless go-sdk handler; everything else
//     (initialize, requests of a legacy session, GET/DELETE with a session)
//     goes to a stateful handler. Both share s.
//   - GET /sse (+ POST /sse?sessionid=…): the 2024-11-05 HTTP+SSE transport.
//
// In front of both it closes the gaps go-sdk v1.8.0 leaves (see
// docs/interop.md): Origin validation (403) on every route, a loopback-only
// Host check unless a bearer token is configured, the token itself
// (constant-time), body caps, base64 Mcp-Name decoding, JSON -32022 for any
// unsupported MCP-Protocol-Version, X-Accel-Buffering: no, 405 for
// session-less GET/DELETE on /mcp, and cancellation when a modern response
// stream closes.
func NewHTTPHandler(s *mcp.Server, o HTTPOptions) http.Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = time.Hour
	}
	if o.BodyReadTimeout <= 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	get := func(*http.Request) *mcp.Server { return s }
	sdkLog := sdkLogger(o.Logger)
	// go-sdk's own DNS-rebinding check (loopback listener + non-loopback
	// Host → 403) duplicates guard's Host check when there is no token; with
	// a token, any Host may reach a bind on all interfaces, so turn it off.
	sdkHostCheckOff := o.Token != ""
	f := &front{
		opts: o,
		modern: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Stateless:                    true,
			JSONResponse:                 false,
			PropagateRequestCancellation: true,
			DisableLocalhostProtection:   sdkHostCheckOff,
			MaxRequestBodyBytes:          o.MaxBodyBytes,
			Logger:                       sdkLog,
		}),
		legacy: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			SessionTimeout:             o.SessionTimeout,
			DisableLocalhostProtection: sdkHostCheckOff,
			MaxRequestBodyBytes:        o.MaxBodyBytes,
			Logger:                     sdkLog,
		}),
		sse: mcp.NewSSEHandler(get, &mcp.SSEOptions{MaxRequestBodyBytes: o.MaxBodyBytes, DisableLocalhostProtection: sdkHostCheckOff}),
	}
	if o.Token != "" {
		sum := sha256.Sum256([]byte(o.Token))
		f.tokenSum = sum[:]
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", f.serveMCP)
	mux.HandleFunc("/sse", f.serveSSE)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if !f.guard(w, r) {
			return
		}
		writeRPCError(w, http.StatusNotFound, nil, codeInvalidRequest, "not found: the MCP endpoint is POST /mcp (legacy SSE: GET /sse)", nil)
	})
	return mux
}

type front struct {
	opts     HTTPOptions
	tokenSum []byte
	modern   http.Handler
	legacy   http.Handler
	sse      http.Handler
}

// guard applies the checks every route shares. It writes the rejection and
// returns false when the request must not proceed.
func (f *front) guard(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("X-Accel-Buffering", "no")
	if origin := r.Header.Get("Origin"); origin != "" && !f.originAllowed(origin, r.Host) {
		f.opts.Logger.Warn("rejected request: Origin not allowed", "origin", origin, "host", r.Host, "path", r.URL.Path)
		writeRPCError(w, http.StatusForbidden, nil, codeInvalidRequest, fmt.Sprintf("forbidden: Origin %q is not allowed", origin), nil)
		return false
	}
	if f.tokenSum == nil && !isLoopbackHost(r.Host) {
		writeRPCError(w, http.StatusForbidden, nil, codeInvalidRequest, fmt.Sprintf("forbidden: Host %q is not a loopback name", r.Host), nil)
		return false
	}
	if f.tokenSum != nil {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], f.tokenSum) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tidings"`)
			writeRPCError(w, http.StatusUnauthorized, nil, codeInvalidRequest, "unauthorized: a valid bearer token is required", nil)
			return false
		}
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, f.opts.MaxBodyBytes)
	}
	return true
}

// originAllowed accepts the request's own origin (an http or https Origin
// whose host:port equals the Host header) and configured origins. Browsers
// send Origin on cross-site requests, so anything else is another site.
func (f *front) originAllowed(origin, host string) bool {
	if slices.Contains(f.opts.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// isLoopbackHost reports whether a Host header names this machine:
// localhost or a loopback IP, with or without a port.
func isLoopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (f *front) serveSSE(w http.ResponseWriter, r *http.Request) {
	if !f.guard(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		f.sse.ServeHTTP(w, r) // GET: the long-lived event stream
		return
	}
	// A message for a session: go-sdk answers an undecodable one with plain
	// text; screen it first (the SSE transport has no batches).
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	if _, ok := screenBody(w, r, body, false); !ok {
		return
	}
	serveJSONErrors(f.sse, w, r)
}

// readBody reads a request body (already capped by guard) within
// BodyReadTimeout, answering and returning false when it cannot, and
// leaves r.Body re-readable for go-sdk.
func (f *front) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	rc := http.NewResponseController(w)
	// The deadline covers the body only: lifted before go-sdk writes a
	// response, which may be a long-lived stream.
	_ = rc.SetReadDeadline(time.Now().Add(f.opts.BodyReadTimeout))
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// The deadline stays: net/http would otherwise wait for the rest of
		// a stalled body before closing the connection.
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), nil)
		case errors.As(err, &ne) && ne.Timeout():
			w.Header().Set("Connection", "close")
			writeRPCError(w, http.StatusRequestTimeout, nil, codeInvalidRequest, fmt.Sprintf("request body not received within %s", f.opts.BodyReadTimeout), nil)
		default:
			writeRPCError(w, http.StatusBadRequest, nil, codeInvalidRequest, "cannot read request body", nil)
		}
		return nil, false
	}
	_ = rc.SetReadDeadline(time.Time{})
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return body, true
}

// peek is the part of a JSON-RPC request the dispatcher reads.
type peek struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
}

func (f *front) serveMCP(w http.ResponseWriter, r *http.Request) {
	if !f.guard(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		// A legacy session's GET stream or DELETE goes to the stateful
		// handler; MCP 2026-07-28 has no GET or DELETE, and without a session
		// neither means anything, so: 405.
		if (r.Method == http.MethodGet || r.Method == http.MethodDelete) && r.Header.Get(headerSession) != "" &&
			r.Header.Get(headerVersion) < firstModernVersion {
			f.legacy.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Allow", "POST")
		writeRPCError(w, http.StatusMethodNotAllowed, nil, codeInvalidRequest, "method not allowed: use POST", nil)
		return
	}
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	headerV := r.Header.Get(headerVersion)
	// Batches exist only inside a 2025-03-26 session (go-sdk refuses them in
	// later sessions, with an error this front turns into JSON-RPC).
	batchOK := r.Header.Get(headerSession) != "" && headerV < firstModernVersion
	if body, ok = screenBody(w, r, body, batchOK); !ok {
		return
	}

	var p peek
	_ = json.Unmarshal(body, &p) // a malformed body is the SDK's to reject
	id := p.ID
	if len(id) == 0 || string(id) == "null" {
		id = nil
	}
	var metaVersion string
	if raw, ok := p.Params.Meta[metaVersionKey]; ok {
		_ = json.Unmarshal(raw, &metaVersion)
	}
	if headerV != "" && metaVersion != "" && headerV != metaVersion && (headerV >= firstModernVersion || metaVersion >= firstModernVersion) {
		// Header and body disagree: the request is malformed whichever
		// version is real (-32020 before any version judgement).
		writeRPCError(w, http.StatusBadRequest, id, codeHeaderMismatch,
			fmt.Sprintf("header mismatch: MCP-Protocol-Version %q differs from _meta protocol version %q", headerV, metaVersion), nil)
		return
	}
	for _, v := range []string{headerV, metaVersion} {
		if v != "" && !slices.Contains(mcp.SupportedProtocolVersions(), v) {
			writeRPCError(w, http.StatusBadRequest, id, codeUnsupportedVersion, fmt.Sprintf("unsupported protocol version %q", v),
				map[string]any{"supported": mcp.SupportedProtocolVersions(), "requested": v})
			return
		}
	}
	if v := r.Header.Get(headerName); v != "" {
		decoded, ok := decodeHeaderValue(v)
		if !ok {
			writeRPCError(w, http.StatusBadRequest, id, codeHeaderMismatch, "header mismatch: Mcp-Name has invalid base64 encoding", nil)
			return
		}
		r.Header.Set(headerName, decoded)
	}
	if headerV >= firstModernVersion || metaVersion >= firstModernVersion {
		serveJSONErrors(f.modern, w, r)
		return
	}
	if r.Header.Get(headerSession) == "" && id != nil && !sessionless[p.Method] {
		// go-sdk would open a session for it and answer "invalid during
		// session initialization" with code 0, which is no JSON-RPC code.
		writeRPCError(w, http.StatusBadRequest, id, codeInvalidRequest, fmt.Sprintf(
			"invalid request: %q needs a session: send initialize first and repeat the Mcp-Session-Id it returns, or send a 2026-07-28 request (MCP-Protocol-Version header or _meta protocol version)", p.Method), nil)
		return
	}
	serveJSONErrors(f.legacy, w, r)
}

// sessionless are the legacy requests go-sdk serves before initialize.
var sessionless = map[string]bool{"initialize": true, "ping": true, "server/discover": true}

// serveJSONErrors runs h (a go-sdk handler) and turns a plain-text error
// response it writes (http.Error: unknown session, wrong Content-Type or
// Accept, refused batch) into a JSON-RPC error with the same status and
// text, so every answer on the MCP routes is JSON-RPC. Anything else,
// including event streams, passes through unbuffered.
func serveJSONErrors(h http.Handler, w http.ResponseWriter, r *http.Request) {
	jw := &jsonErrorWriter{ResponseWriter: w}
	h.ServeHTTP(jw, r)
	jw.finish()
}

type jsonErrorWriter struct {
	http.ResponseWriter
	wrote  bool          // headers went through
	text   *bytes.Buffer // the captured plain-text error, once one starts
	status int
}

func (j *jsonErrorWriter) WriteHeader(code int) {
	if !j.wrote && j.text == nil && code >= 400 && strings.HasPrefix(j.Header().Get("Content-Type"), "text/plain") {
		j.text, j.status = new(bytes.Buffer), code
		return
	}
	j.wrote = true
	j.ResponseWriter.WriteHeader(code)
}

func (j *jsonErrorWriter) Write(b []byte) (int, error) {
	if j.text != nil {
		return j.text.Write(b)
	}
	j.wrote = true
	return j.ResponseWriter.Write(b)
}

func (j *jsonErrorWriter) Flush() {
	if j.text != nil {
		return
	}
	j.wrote = true
	if fl, ok := j.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (j *jsonErrorWriter) Unwrap() http.ResponseWriter { return j.ResponseWriter }

func (j *jsonErrorWriter) finish() {
	if j.text == nil {
		return
	}
	code := codeInvalidRequest
	if j.status >= 500 {
		code = jsonrpc.CodeInternalError
	}
	j.Header().Del("X-Content-Type-Options")
	writeRPCError(j.ResponseWriter, j.status, nullID, code, strings.TrimSpace(j.text.String()), nil)
}

// decodeHeaderValue undoes the =?base64?…?= encoding that MCP 2026-07-28
// uses for header values that are not safe ASCII.
func decodeHeaderValue(v string) (string, bool) {
	enc, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, true
	}
	enc, ok = strings.CutSuffix(enc, "?=")
	if !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// writeRPCError writes a JSON-RPC error response. id may be nil (the
// request could not be read, or the error is not about one request), in
// which case the member is omitted, as MCP 2026-07-28 allows, or nullID
// for a message that was read but whose id could not be.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string, data any) {
	type rpcErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Error   rpcErr          `json:"error"`
	}{"2.0", id, rpcErr{code, msg, data}}
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// ListenOptions configures ListenAndServe.
type ListenOptions struct {
	HTTPOptions
	// Addr is host:port; a bare ":port" or non-loopback host needs Token.
	Addr string
	// MaxConns caps concurrent connections (SSE streams included);
	// 0 = DefaultMaxConns. Further clients wait in the kernel's accept queue
	// until one closes.
	MaxConns int
	// Ready, if set, receives the bound address once listening.
	Ready func(addr net.Addr)
}

// ErrTokenRequired is returned when a non-loopback bind has no token.
var ErrTokenRequired = errors.New("binding a non-loopback address requires a bearer token: set TIDINGS_HTTP_TOKEN or --http-token-file (a file with mode 0600)")

// MinTokenLength is the shortest bearer token accepted, from any source.
const MinTokenLength = 16

// ErrTokenTooShort is returned for a bearer token shorter than
// MinTokenLength visible characters (white space, controls and invisible
// format characters not counted).
var ErrTokenTooShort = fmt.Errorf("the bearer token is shorter than %d characters: set TIDINGS_HTTP_TOKEN or the --http-token-file file to a long random value (for example the output of: openssl rand -hex 32)", MinTokenLength)

// visibleTokenRune reports a character that shows and carries entropy: a
// letter, digit, punctuation or symbol — not white space, controls, format
// or combining marks, variation selectors, private-use or unassigned code
// points, invalid bytes (U+FFFD), nor the blank-looking fillers (Hangul
// fillers, braille blank).
func visibleTokenRune(r rune) bool {
	switch r {
	case utf8.RuneError, '\u115f', '\u1160', '\u3164', '\uffa0', '\u2800':
		return false
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
}

// CheckToken applies the one strength rule to a bearer token, whether it
// came from TIDINGS_HTTP_TOKEN or a token file: at least MinTokenLength
// characters besides surrounding whitespace.
func CheckToken(token string) error {
	// Characters a person could have typed or a generator produced:
	// white space, controls and invisible format characters (zero-width
	// space, joiners, BOM) count for nothing, and a character is one
	// whatever its byte length.
	n := 0
	for _, r := range token {
		if visibleTokenRune(r) {
			n++
		}
	}
	if n < MinTokenLength {
		return ErrTokenTooShort
	}
	return nil
}

// DefaultMaxConns caps concurrent HTTP connections: far more than the few
// clients a personal server has, few enough that a flood of idle or slow
// connections cannot exhaust file descriptors.
const DefaultMaxConns = 128

// ListenAndServe serves NewHTTPHandler on Addr until ctx ends, then shuts
// down gracefully (in-flight requests get five seconds). It refuses a
// non-loopback bind without a token and a token that fails CheckToken, and
// bounds the connection count (MaxConns), header reading (10 s) and body
// reading (BodyReadTimeout).
func ListenAndServe(ctx context.Context, s *mcp.Server, o ListenOptions) error {
	if !isLoopbackBind(o.Addr) && o.Token == "" {
		return ErrTokenRequired
	}
	if o.Token != "" {
		if err := CheckToken(o.Token); err != nil {
			return err
		}
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	inner, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	ln := newLimitListener(inner, o.MaxConns)
	srv := &http.Server{
		Handler:           NewHTTPHandler(s, o.HTTPOptions),
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		srv.Close()
	}
	return nil
}

// isLoopbackBind reports whether addr binds only the loopback interface.
// An empty host (":7740") binds every interface.
func isLoopbackBind(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	return isLoopbackHost(host)
}

// ReadTokenFile reads a bearer token from a file that only its owner can
// read or write (mode 0600 or stricter); anything looser is refused, since
// the token guards every message the server can reach.
func ReadTokenFile(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("token file %s: not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("token file %s: mode %04o lets others read it; run: chmod 600 %s", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if err := CheckToken(tok); err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	return tok, nil
}

// limitListener accepts at most cap(sem) connections at a time; Accept
// waits for a slot (the kernel queues further clients meanwhile).
type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	full      func() // test hook: Accept found every slot taken
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	default:
		if l.full != nil {
			l.full()
		}
		select {
		case l.sem <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn frees its slot on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// screenBody answers a body that is not one JSON-RPC message (see
// screenMessage) and reports false; otherwise it returns the body the SDK
// will read, with tool arguments above 2^53 kept as written
// (quoteHugeMessage), and r.Body set to it.
func screenBody(w http.ResponseWriter, r *http.Request, body []byte, batchOK bool) ([]byte, bool) {
	if code, text := screenMessage(body, batchOK); code != 0 {
		writeRPCError(w, http.StatusBadRequest, nullID, code, text, nil)
		return nil, false
	}
	if q := quoteHugeMessage(body); q != nil {
		body = q
		r.Body = io.NopCloser(bytes.NewReader(q))
		r.ContentLength = int64(len(q))
	}
	return body, true
}
