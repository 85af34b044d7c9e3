package web

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/netguard"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/policy/redact"
)

// New builds the Web service: opt-in (toolset "web"), one tool,
// web_fetch, whose every connection goes through the SSRF guard with the
// profile's web_allow_hosts (docs/security.md, "SSRF guard"). A malformed
// allow entry stops the server with a sentence naming it.
func New(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	return newService(env, netguard.Config{})
}

// newService is New with the guard's resolver and dialer given (tests
// inject ones that never leave loopback).
func newService(env *mcpserver.ServiceEnv, gc netguard.Config) (mcpserver.Service, error) {
	if env != nil && env.Profile != nil {
		gc.Allow = env.Profile.WebAllowHosts
	}
	g, err := netguard.New(gc)
	if err != nil {
		return mcpserver.Service{}, fmt.Errorf("web: %w", err)
	}
	f := &fetcher{guard: g, client: g.Client(Timeout), userAgent: "Tidings web_fetch (+https://github.com/tidings-mcp/tidings)"}
	allowed := len(gc.Allow)
	return mcpserver.Service{
		Name:    "web",
		Tools:   []mcpserver.Tool{fetchTool(f)},
		Default: false,
		Status: func(context.Context) mcpserver.ServiceStatus {
			return mcpserver.ServiceStatus{State: "ready", Detail: fmt.Sprintf(
				"SSRF guard on: loopback, private and link-local destinations refused; %d web_allow_hosts entries", allowed)}
		},
		Checks: func(context.Context) []mcpserver.CheckResult {
			return []mcpserver.CheckResult{{Name: "web_fetch SSRF guard", Status: "ok",
				Detail: fmt.Sprintf("%d web_allow_hosts entries", allowed)}}
		},
	}, nil
}

type fetchIn struct {
	URL      string        `json:"url" jsonschema:"http or https URL"`
	MaxBytes coerce.Number `json:"max_bytes,omitzero" jsonschema:"bytes of the body to read, 1-1048576 (default and cap 1048576)"`
	Cursor   string        `json:"cursor,omitempty" jsonschema:"next_cursor of the previous call, with the same url and max_bytes"`
}

type fetchOut struct {
	URL         string `json:"url"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Title       string `json:"title,omitempty"`
	Text        string `json:"text"`
	Truncated   bool   `json:"truncated"`
	NextCursor  string `json:"next_cursor,omitempty"`
	Note        string `json:"note,omitempty"`
}

// body is the output boundary of page text: every redaction class, then
// sanitization (output.Boundary.Body); tool.go wraps each part.
var body = output.New(redact.Default())

// maxTitle bounds the title (a page can put anything in <title>).
const maxTitle = 300

func fetchTool(f *fetcher) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name:  "web_fetch",
		Title: "Fetch a web page",
		Description: "GET an http(s) URL and return its readable text: HTML reduced to the main text, other text as is, " +
			"at most 1 MB read; binary types are refused. Loopback, private and link-local addresses are refused " +
			"unless the profile's web_allow_hosts lists them. Long text comes in parts: call again with next_cursor.",
		Toolset:  mcpserver.ToolsetWeb,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.Yes,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[fetchIn, fetchOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in fetchIn) (*mcp.CallToolResult, fetchOut, error) {
			max, err := coerce.Int(in.MaxBytes, coerce.IntSpec{Name: "max_bytes", Default: MaxBytes, Min: 1, Max: MaxBytes, Clamp: true})
			if err != nil {
				return nil, fetchOut{}, err
			}
			var off int
			var sum uint64
			if in.Cursor != "" {
				if off, sum, err = parseCursor(in.Cursor); err != nil {
					return nil, fetchOut{}, err
				}
			}
			p, err := f.Fetch(ctx, in.URL, max)
			if err != nil {
				return nil, fetchOut{}, toolError(err)
			}
			text := body.Body(p.Text, nil)
			if in.Cursor != "" && (textSum(text) != sum || off > len(text)) {
				return nil, fetchOut{}, errors.New("the page changed since next_cursor was given (or the cursor belongs to another url or max_bytes): call web_fetch again without cursor")
			}
			out := fetchOut{
				URL:         output.Name(p.URL),
				Status:      p.Status,
				ContentType: output.Name(p.ContentType),
				Title:       output.Name(clip(p.Title, maxTitle)),
				Truncated:   p.Truncated,
			}
			end, err := fitPart(out, text, off)
			if err != nil {
				return nil, fetchOut{}, err
			}
			out.Text = output.Wrapped(text[off:end])
			switch {
			case end < len(text):
				out.NextCursor = makeCursor(end, textSum(text))
				out.Note = fmt.Sprintf("text bytes %d-%d of %d; pass next_cursor to continue", off, end, len(text))
			case off > 0:
				out.Note = fmt.Sprintf("text bytes %d-%d of %d: the last part", off, end, len(text))
			}
			if p.Truncated {
				out.Note = joinNote(out.Note, fmt.Sprintf("the body is longer than %d bytes and was cut there", max))
			}
			return nil, out, nil
		}
	})
}

// toolError keeps a refusal's or a user error's sentence and gives other
// failures (the network, the server) one sentence too.
func toolError(err error) error {
	var re *netguard.RefusedError
	var ue *userError
	if errors.As(err, &re) || errors.As(err, &ue) {
		return err
	}
	return fmt.Errorf("web_fetch failed: %w", err)
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// fitPart returns the end of the part of text starting at off whose
// result stays under mcpserver.MaxResultBytes once wrapped and encoded as
// JSON (escaping can grow a byte tenfold: "\n" is "&#10;", then
// "\u0026#10;"), found by binary search over the part's length and then
// moved back to a line or word break near the end. At least one rune is
// always returned, so paging always advances.
func fitPart(out fetchOut, text string, off int) (int, error) {
	out.NextCursor = makeCursor(len(text), 0)
	out.Note = "text bytes 0000000-0000000 of 0000000; pass next_cursor to continue; the body is longer than 0000000 bytes and was cut there"
	size := func(end int) (int, error) {
		out.Text = output.Wrapped(text[off:end])
		b, err := json.Marshal(out)
		return len(b), err
	}
	if n, err := size(len(text)); err != nil || n <= mcpserver.MaxResultBytes {
		return len(text), err
	}
	lo, hi := off, min(len(text), off+mcpserver.MaxResultBytes) // size(lo) fits, size(hi+1) may not
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		n, err := size(mid)
		if err != nil {
			return 0, err
		}
		if n <= mcpserver.MaxResultBytes {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	end := lo
	for end > off && !utf8.RuneStart(text[end]) {
		end--
	}
	// Prefer a line, then a word break in the last eighth of the part.
	floor := end - (end-off)/8
	for _, sep := range []byte{'\n', ' '} {
		for i := end - 1; i > floor; i-- {
			if text[i] == sep {
				return i + 1, nil
			}
		}
	}
	if end == off { // one rune that does not fit alone: send it anyway
		_, n := utf8.DecodeRuneInString(text[off:])
		end = off + n
	}
	return end, nil
}

// A cursor is the offset of the next part and a checksum of the whole
// text, so a page that changed between calls (or a cursor used with
// another url or max_bytes) is detected instead of paged wrongly. It is
// opaque to the caller.
func makeCursor(off int, sum uint64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(off))
	binary.BigEndian.PutUint64(b[8:], sum)
	return "w1." + base64.RawURLEncoding.EncodeToString(b[:])
}

func parseCursor(s string) (int, uint64, error) {
	bad := errors.New("cursor is not a next_cursor web_fetch gave: leave it out to fetch from the start")
	if len(s) < 3 || s[:3] != "w1." {
		return 0, 0, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s[3:])
	if err != nil || len(b) != 16 {
		return 0, 0, bad
	}
	off := binary.BigEndian.Uint64(b[:8])
	if off > MaxBytes*8 {
		return 0, 0, bad
	}
	return int(off), binary.BigEndian.Uint64(b[8:]), nil
}

func textSum(s string) uint64 {
	h := sha256.Sum256([]byte(s))
	return binary.BigEndian.Uint64(h[:8])
}
