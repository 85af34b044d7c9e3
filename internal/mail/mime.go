package mail

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/emersion/go-message/textproto"
	"golang.org/x/net/html"
)

// The safe MIME reader's ceilings (docs/security.md "Mail"). A message's
// shape is chosen by its sender, so nesting, part count and header size
// are bounded and a part past a bound is counted as unparsed rather than
// read; the walk is a recursion bounded by MaxDepth, over streams, so no
// level holds a copy of the message.
const (
	// MaxDepth bounds multipart nesting: the deepest real shape
	// (signed > mixed > related > alternative > html) is 5.
	MaxDepth = 32
	// MaxParts bounds the parts walked.
	MaxParts = 1000
	// MaxHeaderBytes bounds the message's header block.
	MaxHeaderBytes = 256 << 10
	// MaxText bounds the text body returned (after decoding).
	MaxText = 1 << 20
)

// Parsed is what the reader makes of one message.
type Parsed struct {
	// Header holds the envelope fields (no UID, flags or size).
	Header Summary
	// References lists the References header's message IDs.
	References []string
	// Text is the message's readable body: the text/plain alternative,
	// else the HTML one turned into text; inline text parts of a mixed
	// message are joined. Third-party text: wrap it before output.
	Text string
	// FromHTML is true when Text was made from HTML.
	FromHTML bool
	// TextTruncated is true when Text was cut at MaxText.
	TextTruncated bool
	// Attachments lists the non-body parts in document order.
	Attachments []Attachment
	// Complete is false when part of the message could not be read (a
	// limit was reached, a boundary never appears, an encoding is
	// broken); Problems says what, one short sentence each.
	Complete bool
	Problems []string
	// Parts and Depth measure the structure walked.
	Parts int
	Depth int
}

// Attachment is one non-body part.
type Attachment struct {
	// PartID is the part's IMAP section number ("2", "1.2"): the
	// attachment's identity (file names repeat, or are missing).
	PartID string
	// Name is the decoded file name (third-party text; may be empty or
	// hold path separators: never use it as a path as it is).
	Name        string
	ContentType string
	// Size is the decoded size in bytes.
	Size int64
	// Inline is true for a part shown inside the body (an image of an
	// HTML message) rather than attached.
	Inline    bool
	ContentID string
}

// Parse reads an RFC 822 message. It never panics and reads raw once;
// malformed input yields what could be read with Complete false. The
// error is non-nil only for input that is not a message at all (empty).
func Parse(raw []byte) (*Parsed, error) {
	p, _, err := parse(raw, "")
	return p, err
}

// ErrNoPart is returned by Extract for a part ID the message lacks.
var ErrNoPart = errors.New("the message has no such attachment part")

// MaxExtract bounds the bytes Extract returns.
const MaxExtract = 64 << 20

// Extract returns the decoded bytes of one part (by PartID, as Parse
// lists it) and its description.
func Extract(raw []byte, partID string) (Attachment, []byte, error) {
	p, data, err := parse(raw, partID)
	if err != nil {
		return Attachment{}, nil, err
	}
	for _, a := range p.Attachments {
		if a.PartID == partID {
			if int64(len(data)) != a.Size {
				return a, nil, fmt.Errorf("attachment part %s could not be read whole", partID)
			}
			return a, data, nil
		}
	}
	return Attachment{}, nil, ErrNoPart
}

// walker holds one parse's state.
type walker struct {
	p       *Parsed
	extract string
	data    []byte
	texts   []textPart
	altSeq  int
}

// textPart is one inline text leaf; alt groups the alternatives of one
// multipart/alternative (0 = not an alternative).
type textPart struct {
	alt  int
	html bool
	text string
}

func parse(raw []byte, extract string) (*Parsed, []byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil, errors.New("the message is empty")
	}
	w := &walker{p: &Parsed{Complete: true}, extract: extract}
	head := headerBlock(raw)
	body := raw[len(head):]
	if len(head) > MaxHeaderBytes {
		w.problem(fmt.Sprintf("the header block is larger than %d KiB; the rest was not read", MaxHeaderBytes>>10))
		head, body = head[:MaxHeaderBytes], nil
	}
	// Skip the blank line ending the header block.
	if bytes.HasPrefix(body, []byte("\r\n")) {
		body = body[2:]
	} else if bytes.HasPrefix(body, []byte("\n")) {
		body = body[1:]
	}
	h, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(append(bytes.TrimRight(head, "\r\n"), "\r\n\r\n"...))))
	if err != nil {
		w.problem("the header block is malformed; fields after the bad line were not read")
	}
	w.p.Header = SummaryFromHeader(head)
	for _, r := range strings.Fields(h.Get("References")) {
		if id := strings.Trim(r, "<>"); id != "" && len(w.p.References) < 100 {
			w.p.References = append(w.p.References, id)
		}
	}
	w.entity(h, bytes.NewReader(body), "", 0, 0, "")
	w.finish()
	return w.p, w.data, nil
}

func (w *walker) problem(s string) {
	w.p.Complete = false
	for _, x := range w.p.Problems {
		if x == s {
			return
		}
	}
	if len(w.p.Problems) < 10 {
		w.p.Problems = append(w.p.Problems, s)
	}
}

// partID numbers a child: the top level is "1" when it is a leaf;
// children of a multipart are numbered within it.
func childID(parent string, n int) string {
	if parent == "" {
		return strconv.Itoa(n)
	}
	return parent + "." + strconv.Itoa(n)
}

// entity walks one entity. id is its section number ("" for the
// top-level multipart); alt is the alternative group it belongs to;
// parentType is the enclosing multipart's subtype.
func (w *walker) entity(h textproto.Header, body io.Reader, id string, depth, alt int, parentType string) {
	w.p.Parts++
	if depth > w.p.Depth {
		w.p.Depth = depth
	}
	mt, params := contentType(h)
	if strings.HasPrefix(mt, "multipart/") {
		boundary := params["boundary"]
		if boundary == "" || depth >= MaxDepth || w.p.Parts >= MaxParts {
			if depth >= MaxDepth {
				w.problem(fmt.Sprintf("parts nested deeper than %d levels were not read", MaxDepth))
			} else if w.p.Parts >= MaxParts {
				w.problem(fmt.Sprintf("the message has more than %d parts; the rest were not read", MaxParts))
			} else {
				w.problem("a multipart part has no boundary and was not read")
			}
			_, _ = io.Copy(io.Discard, body)
			return
		}
		group := 0
		if mt == "multipart/alternative" {
			w.altSeq++
			group = w.altSeq
		}
		mr := textproto.NewMultipartReader(body, boundary)
		n := 0
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				if n == 0 {
					w.problem("a multipart boundary never appears, so its content was not read")
				} else {
					w.problem("a multipart part is cut short or malformed")
				}
				break
			}
			n++
			if w.p.Parts >= MaxParts {
				w.problem(fmt.Sprintf("the message has more than %d parts; the rest were not read", MaxParts))
				break
			}
			w.entity(part.Header, part, childID(id, n), depth+1, group, strings.TrimPrefix(mt, "multipart/"))
		}
		return
	}
	if id == "" {
		id = "1"
	}
	w.leaf(h, mt, params, body, id, alt, parentType)
}

// contentType parses Content-Type leniently: a missing or broken one is
// text/plain (RFC 2045 §5.2).
func contentType(h textproto.Header) (string, map[string]string) {
	v := h.Get("Content-Type")
	if v == "" {
		return "text/plain", map[string]string{}
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil {
		// Keep the type when only a parameter is broken.
		t := strings.ToLower(strings.TrimSpace(strings.Split(v, ";")[0]))
		if strings.Count(t, "/") == 1 {
			mt = t
		} else {
			mt = "text/plain"
		}
		params = map[string]string{}
		if i := strings.Index(strings.ToLower(v), "boundary="); i >= 0 {
			params["boundary"] = strings.Trim(strings.Fields(strings.Split(v[i+9:], ";")[0] + " ")[0], `"`)
		}
		if i := strings.Index(strings.ToLower(v), "charset="); i >= 0 {
			params["charset"] = strings.Trim(strings.Fields(strings.Split(v[i+8:], ";")[0] + " ")[0], `"`)
		}
	}
	return strings.ToLower(mt), params
}

// leaf handles one non-multipart part.
func (w *walker) leaf(h textproto.Header, mt string, params map[string]string, body io.Reader, id string, alt int, parentType string) {
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := dparams["filename"]
	if name == "" {
		name = params["name"]
	}
	name = decodeHeader(name)
	dec := transferDecoder(h.Get("Content-Transfer-Encoding"), body)
	isText := (mt == "text/plain" || mt == "text/html") && disp != "attachment" && name == ""
	if isText {
		limited := &io.LimitedReader{R: dec, N: MaxText + 1}
		data, err := io.ReadAll(limited)
		if err != nil {
			w.problem("a text part's transfer encoding is broken; what decoded is shown")
		}
		if len(data) > MaxText {
			data = data[:MaxText]
			w.p.TextTruncated = true
			_, _ = io.Copy(io.Discard, dec)
		}
		text, ok := decodeCharset(data, params["charset"])
		if !ok {
			w.problem("a text part's charset is unknown; it was read as UTF-8")
		}
		if mt == "text/html" {
			text = HTMLToText(text)
		} else if strings.EqualFold(params["format"], "flowed") {
			text = unflow(text, strings.EqualFold(params["delsp"], "yes"))
		}
		w.texts = append(w.texts, textPart{alt: alt, html: mt == "text/html", text: text})
		return
	}
	a := Attachment{PartID: id, Name: name, ContentType: mt, ContentID: strings.Trim(h.Get("Content-Id"), "<> ")}
	a.Inline = disp == "inline" || (disp == "" && parentType == "related")
	var n int64
	var err error
	if id == w.extract {
		var buf bytes.Buffer
		n, err = io.Copy(&buf, io.LimitReader(dec, MaxExtract+1))
		w.data = buf.Bytes()
		if n > MaxExtract {
			w.data = nil
			w.problem(fmt.Sprintf("the attachment is larger than %d MiB", MaxExtract>>20))
		}
	} else {
		n, err = io.Copy(io.Discard, dec)
	}
	if err != nil {
		w.problem("an attachment's transfer encoding is broken")
	}
	a.Size = n
	w.p.Attachments = append(w.p.Attachments, a)
}

// transferDecoder undoes Content-Transfer-Encoding; unknown encodings
// pass through (RFC 2045 §6.4 says treat them as opaque).
func transferDecoder(enc string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(enc)) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, &base64Filter{r: r})
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	}
	return r
}

// base64Filter drops what is not base64 (line breaks, spaces, junk) and
// stops at padding, so sloppy encoders still decode.
type base64Filter struct {
	r    io.Reader
	done bool
}

func (f *base64Filter) Read(p []byte) (int, error) {
	for {
		if f.done {
			return 0, io.EOF
		}
		n, err := f.r.Read(p)
		j := 0
		for _, c := range p[:n] {
			switch {
			case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/', c == '=':
				p[j] = c
				j++
			}
		}
		if err != nil {
			if err == io.EOF {
				// Pad a short final quantum so what arrived decodes.
				if rem := j % 4; rem != 0 && j+4-rem <= len(p) {
					for ; rem < 4; rem++ {
						p[j] = '='
						j++
					}
				}
				f.done = true
				if j > 0 {
					return j, nil
				}
			}
			return j, err
		}
		if j > 0 {
			return j, nil
		}
	}
}

// decodeCharset turns data in charset into UTF-8; ok is false when the
// charset is unknown (data is then read as UTF-8, invalid bytes
// replaced).
func decodeCharset(data []byte, charset string) (string, bool) {
	ok := true
	if charset != "" {
		e, err := charsetEncoding(charset)
		if err != nil {
			ok = false
		} else if out, err := e.NewDecoder().Bytes(data); err == nil {
			data = out
		}
	}
	return strings.ToValidUTF8(string(data), "\uFFFD"), ok
}

// unflow joins RFC 3676 format=flowed lines: a line ending in a space
// continues on the next line of the same quote depth; a leading space is
// stuffing; "-- " (the signature separator) never flows.
func unflow(s string, delsp bool) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var b strings.Builder
	open, openDepth := false, 0
	for _, l := range lines {
		depth := 0
		for strings.HasPrefix(l, ">") {
			depth++
			l = l[1:]
		}
		l = strings.TrimPrefix(l, " ")
		if open && depth != openDepth {
			b.WriteString("\n")
			open = false
		}
		if !open && depth > 0 {
			b.WriteString(strings.Repeat(">", depth) + " ")
		}
		flowed := strings.HasSuffix(l, " ") && l != "-- "
		if flowed && delsp {
			l = l[:len(l)-1]
		}
		b.WriteString(l)
		if flowed {
			open, openDepth = true, depth
		} else {
			b.WriteString("\n")
			open = false
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// finish picks the body: per alternative group the plain part if it has
// text, else the HTML one; other inline texts in document order.
func (w *walker) finish() {
	var out []string
	seen := map[int]bool{}
	for _, t := range w.texts {
		if t.alt == 0 {
			out = append(out, t.text)
			w.p.FromHTML = w.p.FromHTML || t.html
			continue
		}
		if seen[t.alt] {
			continue
		}
		seen[t.alt] = true
		best := t
		for _, o := range w.texts {
			if o.alt == t.alt && !o.html && strings.TrimSpace(o.text) != "" {
				best = o
				break
			}
		}
		out = append(out, best.text)
		w.p.FromHTML = w.p.FromHTML || best.html
	}
	text := strings.TrimSpace(strings.Join(out, "\n\n"))
	if len(text) > MaxText {
		text = text[:MaxText]
		for !utf8.ValidString(text) {
			text = text[:len(text)-1]
		}
		w.p.TextTruncated = true
	}
	w.p.Text = text
}

// HTMLToText renders HTML as plain text with x/net/html's tokenizer:
// block elements break lines, list items get bullets, images their alt
// text; script, style and head are dropped; entities are decoded. A
// tokenizer rather than a tree: it is linear in the input and needs no
// memory for nesting a sender chose.
func HTMLToText(s string) string {
	z := html.NewTokenizer(strings.NewReader(s))
	z.SetMaxBuf(MaxText)
	var b strings.Builder
	skip := 0
	pre := 0
	nl := func() {
		b.WriteString("\n")
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return tidyText(b.String())
		case html.TextToken:
			if skip > 0 {
				continue
			}
			t := string(z.Text())
			if pre == 0 {
				t = strings.Join(strings.FieldsFunc(t, func(r rune) bool { return r < 0x80 && isSpaceByte(byte(r)) }), " ")
				if t != "" && len(z.Raw()) > 0 && isSpaceByte(z.Raw()[0]) {
					t = " " + t
				}
				if raw := z.Raw(); t != "" && len(raw) > 0 && isSpaceByte(raw[len(raw)-1]) {
					t += " "
				}
			}
			b.WriteString(t)
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			switch tag {
			case "script", "style", "head", "title", "noscript", "template":
				if tt == html.StartTagToken {
					skip++
				} else if tt == html.EndTagToken && skip > 0 {
					skip--
				}
				continue
			case "body":
				skip = 0 // an unclosed <head> ends here
			case "pre":
				if tt == html.StartTagToken {
					pre++
				} else if tt == html.EndTagToken && pre > 0 {
					pre--
				}
				nl()
			case "br", "p", "div", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "blockquote", "hr", "section", "article", "header", "footer":
				nl()
			case "li":
				if tt == html.StartTagToken {
					b.WriteString("\n• ")
				}
			case "td", "th":
				if tt == html.EndTagToken {
					b.WriteString(" ")
				}
			case "img":
				for hasAttr && skip == 0 {
					k, v, more := z.TagAttr()
					if string(k) == "alt" && strings.TrimSpace(string(v)) != "" {
						b.WriteString("[" + strings.TrimSpace(string(v)) + "]")
					}
					hasAttr = more
				}
			}
		}
	}
}

func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// tidyText trims each line and keeps at most one empty line in a row.
func tidyText(s string) string {
	var out []string
	empty := 0
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			empty++
			if empty > 1 || len(out) == 0 {
				continue
			}
		} else {
			empty = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
