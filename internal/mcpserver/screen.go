package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Screening incoming messages (docs/interop.md, "Malformed messages").
//
// go-sdk v1.8.0 ends a stdio session on the first line it cannot decode
// (not JSON, truncated, NaN from a lax encoder, {} or []), without an
// answer, and its HTTP transports answer such bodies with plain text. The
// screen stands in front: a message that is not JSON is answered -32700,
// JSON that is not a JSON-RPC 2.0 request, notification or response -32600,
// both with id null, and the session goes on. A message that passes reaches
// go-sdk byte for byte as received (only the whitespace around a stdio line
// is dropped); the screen never re-encodes it.

const (
	codeParseError = jsonrpc.CodeParseError

	msgParseError   = "parse error: the message is not one complete JSON value (NaN, Infinity, truncated or trailing data are not JSON)"
	msgNotAMessage  = "invalid request: the message is not a JSON-RPC 2.0 request, notification or response object"
	msgBatchRefused = "invalid request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18; only a 2025-03-26 session may send one)"
	msgEmptyBatch   = "invalid request: the batch is empty"
	msgBatchDupID   = "invalid request: the batch uses one request id twice"
	msgBatchNotif   = "invalid request: a batch may hold requests with ids only (send notifications on their own line)"
)

// screenMessage decides whether one message (a stdio line without its line
// end, or an HTTP body) may go on to go-sdk. It returns code 0 when it may,
// or the JSON-RPC error code and one-sentence message to answer with id
// null. batchOK says whether a JSON array (a batch) is acceptable here.
//
// The decision matches go-sdk's own decoding exactly: an object passes only
// if jsonrpc.DecodeMessage (the function go-sdk calls) accepts it, a batch
// only if every element does, so nothing that passes can end a session.
// FuzzScreenMessage pins that agreement.
func screenMessage(msg []byte, batchOK bool) (code int, text string) {
	if !json.Valid(msg) {
		return codeParseError, msgParseError
	}
	switch firstByte(msg) {
	case '{':
		if _, err := jsonrpc.DecodeMessage(msg); err != nil {
			return codeInvalidRequest, msgNotAMessage
		}
		return 0, ""
	case '[':
		if !batchOK {
			return codeInvalidRequest, msgBatchRefused
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(msg, &elems); err != nil {
			return codeInvalidRequest, msgNotAMessage
		}
		if len(elems) == 0 {
			return codeInvalidRequest, msgEmptyBatch
		}
		ids := map[jsonrpc.ID]bool{}
		for _, e := range elems {
			if firstByte(e) != '{' {
				return codeInvalidRequest, msgNotAMessage
			}
			m, err := jsonrpc.DecodeMessage(e)
			if err != nil {
				return codeInvalidRequest, msgNotAMessage
			}
			if req, ok := m.(*jsonrpc.Request); ok {
				// go-sdk v1.8.0 waits for an answer to every request in a
				// batch, notifications included, so a batch with one would
				// never be answered (and two end the session).
				if !req.IsCall() {
					return codeInvalidRequest, msgBatchNotif
				}
				if ids[req.ID] {
					return codeInvalidRequest, msgBatchDupID
				}
				ids[req.ID] = true
			}
		}
		return 0, ""
	}
	return codeInvalidRequest, msgNotAMessage
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// rpcErrorLine is a JSON-RPC error response with id null, newline-ended.
func rpcErrorLine(code int, text string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, text}})
	return append(b, '\n')
}

// maxStdioLine bounds one stdio line. go-sdk's own cap (16 MiB) ends the
// session; this one answers -32600 and goes on.
const maxStdioLine = 16 << 20

// syncWriter serialises whole-message writes to stdout from go-sdk and the
// screen, so their lines never interleave (go-sdk writes one message per
// Write call).
type syncWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) Close() error { return s.w.Close() }

// screenReader is the reader go-sdk's stdio transport reads: it reads
// stdin a line at a time, answers a line that fails screenMessage itself,
// skips blank lines, and hands every other line on, trimmed of the
// whitespace around it and newline-ended.
type screenReader struct {
	in      *bufio.Reader
	closer  io.Closer
	out     io.Writer
	max     int
	batchOK func() bool

	buf     []byte
	pending []byte
	err     error       // sticky stdin error (io.EOF at the end)
	failed  atomic.Bool // a read error other than EOF ended stdin
}

func newScreenReader(in io.ReadCloser, out io.Writer, batchOK func() bool) *screenReader {
	return &screenReader{in: bufio.NewReaderSize(in, 64<<10), closer: in, out: out, max: maxStdioLine, batchOK: batchOK}
}

func (r *screenReader) Close() error { return r.closer.Close() }

func (r *screenReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		line, tooLong := r.readLine()
		if tooLong {
			if _, err := r.out.Write(rpcErrorLine(codeInvalidRequest, fmt.Sprintf("invalid request: the line exceeds %d bytes", r.max))); err != nil {
				return 0, err
			}
			continue
		}
		if len(line) == 0 {
			continue
		}
		if code, text := screenMessage(line, r.batchOK()); code != 0 {
			if _, err := r.out.Write(rpcErrorLine(code, text)); err != nil {
				return 0, err
			}
			continue
		}
		if q := quoteHugeMessage(line); q != nil {
			line = append(q, '\n')
		}
		r.pending = line
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// readLine reads the next line into r.buf and returns it trimmed and
// newline-ended (nil for a blank line), or tooLong after discarding a line
// longer than r.max. A read error is kept in r.err; a last line without a
// newline still counts.
func (r *screenReader) readLine() (line []byte, tooLong bool) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.in.ReadSlice('\n')
		if !tooLong {
			if len(r.buf)+len(chunk) > r.max+1 { // +1: the newline
				tooLong = true
				r.buf = r.buf[:0]
			} else {
				r.buf = append(r.buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			r.err = err
			if !errors.Is(err, io.EOF) {
				r.failed.Store(true)
			}
		}
		break
	}
	if tooLong {
		return nil, true
	}
	start := len(r.buf) - len(bytes.TrimLeft(r.buf, " \t\r\n"))
	end := len(bytes.TrimRight(r.buf, " \t\r\n"))
	if start >= end {
		return nil, false
	}
	if end < len(r.buf) {
		r.buf[end] = '\n'
	} else {
		r.buf = append(r.buf, '\n')
	}
	return r.buf[start : end+1], false
}
