package mailindex

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"regexp"
	"strings"
	"unicode/utf8"
)

// BodyFunc turns a message's RFC 822 bytes into its text (HTML converted
// when there is no plain part) and its attachment names. It is the one
// seam between the sync and the MIME reader: the service plugs its own
// safe parser in (Options.Body); DefaultBody is the minimal fallback.
type BodyFunc func(raw []byte) (text string, attachments []string, err error)

// Limits of DefaultBody: nesting depth and part count (a hostile message
// cannot make it walk forever).
const (
	maxDepth = 8
	maxParts = 200
)

var wordDecoder = &mime.WordDecoder{CharsetReader: charsetReader}

// charsetReader reads ISO-8859-1 / Windows-1252 as Latin-1 and refuses
// other non-UTF-8 charsets (the service's parser handles them all).
func charsetReader(charset string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "latin1", "windows-1252", "cp1252":
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		return strings.NewReader(latin1(b)), nil
	}
	return nil, errors.New("unsupported charset " + charset)
}

func latin1(b []byte) string {
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	return string(rs)
}

// DefaultBody is a minimal MIME reader on net/mail and mime: text/plain
// parts (quoted-printable or base64, UTF-8 or Latin-1) joined, else
// text/html with its tags stripped; attachment names from
// Content-Disposition or Content-Type's name. Anything it cannot read is
// skipped, never fatal: a sync still stores the envelope.
func DefaultBody(raw []byte) (string, []string, error) {
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return "", nil, err
	}
	w := &walker{}
	w.part(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Header.Get("Content-Disposition"), msg.Body, 0)
	text := strings.Join(w.plain, "\n")
	if strings.TrimSpace(text) == "" {
		text = strings.Join(w.html, "\n")
	}
	return text, w.files, nil
}

type walker struct {
	plain, html, files []string
	parts              int
}

func (w *walker) part(ctype, cte, disp string, body io.Reader, depth int) {
	w.parts++
	if w.parts > maxParts || depth > maxDepth {
		return
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil || ctype == "" {
		mt, params = "text/plain", map[string]string{}
	}
	if strings.HasPrefix(mt, "multipart/") {
		r := multipart.NewReader(body, params["boundary"])
		for {
			p, err := r.NextRawPart()
			if err != nil {
				return
			}
			w.part(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p, depth+1)
		}
	}
	name := ""
	if d, dp, err := mime.ParseMediaType(disp); err == nil {
		name = dp["filename"]
		if name == "" && d == "attachment" {
			name = params["name"]
			if name == "" {
				name = "attachment"
			}
		}
	}
	if name == "" {
		name = params["name"]
	}
	if name != "" {
		if dec, err := wordDecoder.DecodeHeader(name); err == nil {
			name = dec
		}
		w.files = append(w.files, name)
		return
	}
	if mt != "text/plain" && mt != "text/html" {
		return
	}
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, &stripSpace{r: body})
	}
	b, err := io.ReadAll(io.LimitReader(body, 4<<20))
	if err != nil && len(b) == 0 {
		return
	}
	s := string(b)
	if cs := strings.ToLower(params["charset"]); !utf8.ValidString(s) || cs == "iso-8859-1" || cs == "windows-1252" {
		if cs == "" || cs == "iso-8859-1" || cs == "windows-1252" || cs == "us-ascii" {
			s = latin1(b)
		}
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if mt == "text/html" {
		w.html = append(w.html, htmlText(s))
	} else {
		w.plain = append(w.plain, s)
	}
}

// stripSpace drops the line breaks base64 bodies carry.
type stripSpace struct{ r io.Reader }

func (s *stripSpace) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	j := 0
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
			p[j] = c
			j++
		}
	}
	if j == 0 && n > 0 && err == nil {
		return s.Read(p)
	}
	return j, err
}

var (
	htmlDrop = regexp.MustCompile(`(?is)<(script|style|head)\b.*?</(script|style|head)\s*>`)
	htmlTag  = regexp.MustCompile(`(?s)<[^>]*>`)
	htmlBr   = regexp.MustCompile(`(?i)<(br|/p|/div|/tr|/li|/h[1-6])\b[^>]*>`)
	htmlEnt  = strings.NewReplacer("&nbsp;", " ", "&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&#39;", "'")
)

// htmlText is a crude HTML-to-text for the index (the service's parser
// does better): scripts and styles dropped, block ends as line breaks,
// tags removed, common entities decoded.
func htmlText(s string) string {
	s = htmlDrop.ReplaceAllString(s, " ")
	s = htmlBr.ReplaceAllString(s, "\n")
	s = htmlTag.ReplaceAllString(s, " ")
	return htmlEnt.Replace(s)
}
