// Package web is the Web service of seed 002: one tool, web_fetch, that
// GETs an http(s) URL through the SSRF guard of internal/netguard and
// returns its readable text (docs/tools.md, "web_fetch";
// docs/security.md, "SSRF guard"). fetch.go and extract.go hold the
// backend and do not import the MCP SDK; tool.go is the tool.
package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/netguard"
	"github.com/tidings-mcp/tidings/internal/output"
	"golang.org/x/net/html/charset"
)

// MaxBytes is the most web_fetch reads of one response body (seed 002:
// "1 MB cap"); max_bytes can only lower it.
const MaxBytes = 1 << 20

// Timeout bounds one fetch, redirects included.
const Timeout = 30 * time.Second

// Page is a fetched page reduced to text. Text, Title, URL and
// ContentType are raw: the tool passes them through internal/output.
type Page struct {
	URL         string // the final URL, after redirects
	Status      int
	ContentType string // media type without parameters
	Title       string
	Text        string
	// Truncated: the body was longer than the byte limit and was cut.
	Truncated bool
}

// fetcher is the backend: a guarded client and a user agent.
type fetcher struct {
	guard     *netguard.Guard
	client    *http.Client
	userAgent string
}

// userError is a problem the caller can fix (a refused URL, an HTTP
// error status, a binary type): the tool returns its sentence.
type userError struct{ msg string }

func (e *userError) Error() string { return e.msg }

// Fetch GETs raw (http or https only) and reads at most maxBytes of the
// body. HTML is reduced to readable text (extract.go); other text is
// decoded from its charset and passed through; binary types are refused
// before the body is read.
func (f *fetcher) Fetch(ctx context.Context, raw string, maxBytes int) (*Page, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !u.IsAbs() {
		return nil, &userError{"url must be an absolute http or https URL"}
	}
	if err := f.guard.CheckURL(ctx, u); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &userError{"url must be an absolute http or https URL"}
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		if re, ok := errors.AsType[*netguard.RefusedError](err); ok {
			return nil, re
		}
		if timedOut(ctx, err) {
			return nil, &userError{fmt.Sprintf("fetching %s took longer than %s", output.Name(u.Redacted()), Timeout)}
		}
		return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL.Redacted()
	if resp.StatusCode >= 400 {
		return nil, &userError{fmt.Sprintf("%s answered HTTP %d %s", output.Name(final), resp.StatusCode, http.StatusText(resp.StatusCode))}
	}
	if resp.StatusCode >= 300 {
		return nil, &userError{fmt.Sprintf("%s answered HTTP %d without a redirect to follow", output.Name(final), resp.StatusCode)}
	}
	// A declared binary type is refused before its body is read; an
	// undeclared one is sniffed from the bytes read.
	ctype := resp.Header.Get("Content-Type")
	if ctype != "" {
		if err := refuseBinary(final, ctype); err != nil {
			return nil, err
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(maxBytes)+1))
	if err != nil {
		if timedOut(ctx, err) {
			return nil, &userError{fmt.Sprintf("fetching %s took longer than %s", output.Name(final), Timeout)}
		}
		return nil, fmt.Errorf("read %s: %w", final, err)
	}
	p := &Page{URL: final, Status: resp.StatusCode}
	if len(body) > maxBytes {
		body, p.Truncated = body[:maxBytes], true
	}
	if ctype == "" {
		ctype = http.DetectContentType(body)
		if err := refuseBinary(final, ctype); err != nil {
			return nil, err
		}
	}
	p.ContentType = mediaType(ctype)
	kind := kindOf(p.ContentType)
	enc, _, _ := charset.DetermineEncoding(body, ctype)
	decoded, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		decoded = body // undecodable bytes become U+FFFD at the output boundary
	}
	if kind == htmlKind {
		p.Title, p.Text = extract(decoded, resp.Request.URL)
	} else {
		p.Text = string(bytes.ToValidUTF8(decoded, []byte("\uFFFD")))
	}
	return p, nil
}

// timedOut: the fetch's own deadline passed (not a cancellation by the
// caller, which is reported as the error it is).
func timedOut(ctx context.Context, err error) bool {
	var ne net.Error
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// mediaType is the media type of a Content-Type value, lower case and
// without parameters; an unreadable one counts as binary.
func mediaType(ctype string) string {
	media, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return "application/octet-stream"
	}
	return media
}

func refuseBinary(final, ctype string) error {
	if media := mediaType(ctype); kindOf(media) == binaryKind {
		return &userError{fmt.Sprintf("%s is %s, not text: web_fetch returns only HTML and text", output.Name(final), output.Name(media))}
	}
	return nil
}

type kind int

const (
	binaryKind kind = iota
	htmlKind
	textKind
)

// kindOf sorts a media type: HTML, other text (text/*, JSON, XML,
// JavaScript and their +json/+xml variants), or binary.
func kindOf(media string) kind {
	switch {
	case media == "text/html" || media == "application/xhtml+xml":
		return htmlKind
	case strings.HasPrefix(media, "text/"),
		media == "application/json", media == "application/xml", media == "application/javascript",
		media == "application/ecmascript", media == "application/x-javascript", media == "application/x-ndjson",
		media == "application/yaml", media == "application/x-yaml", media == "application/toml",
		strings.HasSuffix(media, "+json"), strings.HasSuffix(media, "+xml"):
		return textKind
	}
	return binaryKind
}
