package android

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// Errors returned by Reader.Next (wrapped with the byte offset).
var (
	// ErrTruncated means the file ended before </smses>: every complete
	// record was returned, the rest of the export is missing.
	ErrTruncated = errors.New("export is truncated (file ends before </smses>)")
	// ErrNotExport means the file is not an SMS Backup & Restore message
	// export (another root element, a call-log backup, another encoding).
	ErrNotExport = errors.New("not an SMS Backup & Restore message export")
)

// Options bound what a Reader keeps. Zero fields take the defaults.
type Options struct {
	// MaxText is the most bytes kept of one text value (an SMS body, an
	// MMS text part, a subject); longer values are cut on a rune boundary
	// and counted in Stats.Truncated. Default 1 MiB.
	MaxText int
	// MaxRecordText bounds the text kept for one record across all its
	// parts (default 4 MiB), so a hostile MMS with thousands of large text
	// parts cannot grow memory.
	MaxRecordText int
	// MaxParts is the most <part> and the most <addr> children kept per
	// MMS (default 256); the rest are counted in MMS.DroppedParts/Addrs.
	MaxParts int
	// MetaOnly skips bodies and parts, keeping addresses, dates,
	// directions and contact names: the fast pass that finds the owner's
	// numbers and contact names.
	MetaOnly bool

	// bufSize overrides the read buffer size (tests use tiny buffers to
	// exercise every refill boundary).
	bufSize int
}

func (o Options) withDefaults() Options {
	if o.MaxText <= 0 {
		o.MaxText = 1 << 20
	}
	if o.MaxRecordText <= 0 {
		o.MaxRecordText = 4 << 20
	}
	if o.MaxRecordText < o.MaxText {
		o.MaxRecordText = o.MaxText
	}
	if o.MaxParts <= 0 {
		o.MaxParts = 256
	}
	return o
}

// Stats counts what a Reader saw. Reasons and Ignored have a small fixed
// set of keys, so hostile input cannot grow them.
type Stats struct {
	SMS int `json:"sms"`
	MMS int `json:"mms"`
	// RCS counts the MMS records recognised as RCS (included in MMS).
	RCS int `json:"rcs,omitempty"`
	// Skipped counts malformed records that were not returned; Reasons
	// breaks it down ("bad date", "malformed tag", "truncated", …).
	Skipped int            `json:"skipped"`
	Reasons map[string]int `json:"reasons,omitempty"`
	// Truncated counts text values cut at Options.MaxText or
	// MaxRecordText, and MMS children dropped beyond MaxParts.
	Truncated int `json:"truncated_values,omitempty"`
	// Ignored counts constructs skipped on purpose: "doctype" (never
	// interpreted), "element" (unknown elements), "text" (stray text).
	Ignored map[string]int `json:"ignored,omitempty"`
	// Incomplete is true when the file ended before </smses>.
	Incomplete bool `json:"incomplete,omitempty"`
	// Bytes is how far the reader got in the file.
	Bytes int64 `json:"bytes"`
}

// Skip reasons (Stats.Reasons keys).
const (
	ReasonMalformed   = "malformed tag"
	ReasonUnclosed    = "unclosed element"
	ReasonBadDate     = "bad date"
	ReasonNoAddress   = "no address"
	ReasonBadType     = "unknown type"
	ReasonLongAddress = "oversized attribute"
	ReasonTruncated   = "truncated"
)

const (
	bufSize    = 64 << 10
	maxName    = 256  // longest element or attribute name accepted
	maxShort   = 4096 // longest address, name or id kept
	maxPI      = 1024 // bytes of an <?xml …?> declaration examined
	secondsMax = 1e11 // a date below this is in seconds (year 5138), else ms
)

// internal errors
var errEOF = errors.New("unexpected end of file")

// syntaxError rejects one record. resync is set when it was raised in the
// middle of markup, so input must be skipped to the next record.
type syntaxError struct {
	reason string
	msg    string
	resync bool
}

func (e *syntaxError) Error() string { return e.msg }

func malformed(format string, args ...any) error {
	return &syntaxError{reason: ReasonMalformed, msg: fmt.Sprintf(format, args...), resync: true}
}

// errLongAddress is raised mid-tag for an address beyond maxShort bytes.
var errLongAddress = &syntaxError{reason: ReasonLongAddress, msg: "address too long", resync: true}

// Reader streams the records of one export. It is not safe for concurrent
// use. Memory stays bounded by Options whatever the file size.
type Reader struct {
	opts Options
	src  io.Reader
	buf  []byte
	r, w int
	base int64 // file offset of buf[0]
	rerr error

	state      int
	header     Header
	pending    string // start tag name consumed while resynchronising
	pendingOff int64
	stats      Stats
	fatal      error

	val     []byte            // scratch for attribute values
	name    []byte            // scratch for names
	recText int               // text bytes kept for the current record
	strs    map[string]string // interned short values (bounded)
}

const (
	stProlog = iota
	stRoot
	stDone
)

// NewReader returns a Reader over an export. A nil opts uses the defaults.
func NewReader(src io.Reader, opts *Options) *Reader {
	var o Options
	if opts != nil {
		o = *opts
	}
	size := bufSize
	if o.bufSize > 0 {
		size = max(o.bufSize, 8)
	}
	return &Reader{opts: o.withDefaults(), src: src, buf: make([]byte, size),
		stats: Stats{Reasons: map[string]int{}, Ignored: map[string]int{}}, strs: map[string]string{}}
}

// Header returns the root element's attributes (valid once Next has
// returned a record or io.EOF).
func (r *Reader) Header() Header { return r.header }

// Stats returns the counts so far.
func (r *Reader) Stats() Stats {
	s := r.stats
	s.Bytes = r.offset()
	return s
}

func (r *Reader) offset() int64 { return r.base + int64(r.r) }

// --- buffer ---------------------------------------------------------------

// fill makes more input available; it reports false at the end of input
// or on a read error (kept in rerr).
func (r *Reader) fill() bool {
	if r.rerr != nil {
		return false
	}
	if r.r > 0 {
		copy(r.buf, r.buf[r.r:r.w])
		r.base += int64(r.r)
		r.w -= r.r
		r.r = 0
	}
	for tries := 0; r.w < len(r.buf); tries++ {
		n, err := r.src.Read(r.buf[r.w:])
		r.w += n
		if err != nil {
			r.rerr = err
			return n > 0
		}
		if n > 0 {
			return true
		}
		if tries > 100 {
			r.rerr = io.ErrNoProgress
			return false
		}
	}
	return true
}

// eofErr is the error for "no more input": errEOF at a clean end of file,
// else the read error.
func (r *Reader) eofErr() error {
	if r.rerr == nil || r.rerr == io.EOF {
		return errEOF
	}
	return fmt.Errorf("read export: %w", r.rerr)
}

func (r *Reader) peekByte() (byte, error) {
	if r.r >= r.w && !r.fill() {
		return 0, r.eofErr()
	}
	return r.buf[r.r], nil
}

func (r *Reader) readByte() (byte, error) {
	if r.r >= r.w && !r.fill() {
		return 0, r.eofErr()
	}
	b := r.buf[r.r]
	r.r++
	return b, nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func (r *Reader) skipSpace() error {
	for {
		for r.r < r.w {
			if !isSpace(r.buf[r.r]) {
				return nil
			}
			r.r++
		}
		if !r.fill() {
			return r.eofErr()
		}
	}
}

// skipPast consumes input up to and including the next c.
func (r *Reader) skipPast(c byte) error {
	for {
		if i := bytes.IndexByte(r.buf[r.r:r.w], c); i >= 0 {
			r.r += i + 1
			return nil
		}
		r.r = r.w
		if !r.fill() {
			return r.eofErr()
		}
	}
}

// skipPastSeq consumes input up to and including the next occurrence of
// seq (at most 8 bytes).
func (r *Reader) skipPastSeq(seq string) error {
	var win [8]byte
	n := len(seq)
	last := seq[n-1]
	for {
		// Fast-forward to the next candidate final byte, keeping the window.
		i := bytes.IndexByte(r.buf[r.r:r.w], last)
		if i < 0 {
			for _, b := range r.buf[r.r:r.w] {
				copy(win[:n-1], win[1:n])
				win[n-1] = b
			}
			r.r = r.w
			if !r.fill() {
				return r.eofErr()
			}
			continue
		}
		for _, b := range r.buf[r.r : r.r+i+1] {
			copy(win[:n-1], win[1:n])
			win[n-1] = b
		}
		r.r += i + 1
		if string(win[:n]) == seq {
			return nil
		}
	}
}

// skipText consumes character data up to and including the next '<'. Non-
// space text is counted as ignored when count is set.
func (r *Reader) skipText(count bool) error {
	stray := false
	for {
		chunk := r.buf[r.r:r.w]
		i := bytes.IndexByte(chunk, '<')
		end := len(chunk)
		if i >= 0 {
			end = i
		}
		if count && !stray {
			for _, b := range chunk[:end] {
				if !isSpace(b) {
					stray = true
					break
				}
			}
		}
		if i >= 0 {
			r.r += i + 1
			if stray {
				r.stats.Ignored["text"]++
			}
			return nil
		}
		r.r = r.w
		if !r.fill() {
			return r.eofErr()
		}
	}
}

// nameByte marks the bytes an element or attribute name may hold (a
// lenient superset of XML's NameChar: any byte but markup and space).
var nameByte = func() (t [256]bool) {
	for i := range t {
		t[i] = true
	}
	for _, b := range []byte(" \t\n\r/>=<\"'?!&") {
		t[b] = false
	}
	return t
}()

// readName reads an element or attribute name. The result is valid until
// the next read.
func (r *Reader) readName() ([]byte, error) {
	// Fast path: the name ends inside the buffered window. It is copied:
	// the caller reads on (and may refill the buffer) before using it.
	win := r.buf[r.r:r.w]
	for i, b := range win {
		if !nameByte[b] {
			if i == 0 {
				return nil, malformed("expected a name, found %q", b)
			}
			if i > maxName {
				break
			}
			r.r += i
			r.name = append(r.name[:0], win[:i]...)
			return r.name, nil
		}
	}
	r.name = r.name[:0]
	for {
		for r.r < r.w {
			b := r.buf[r.r]
			if !nameByte[b] {
				if len(r.name) == 0 {
					return nil, malformed("expected a name, found %q", b)
				}
				return r.name, nil
			}
			if len(r.name) >= maxName {
				return nil, malformed("name longer than %d bytes", maxName)
			}
			r.name = append(r.name, b)
			r.r++
		}
		if !r.fill() {
			return nil, r.eofErr()
		}
	}
}

// nextAttr advances to the next attribute of the current start tag. It
// returns its name (valid until the next call) and the opening quote; the
// caller must consume the value. end is true when the tag closed, with
// selfClose telling "/>" from ">".
func (r *Reader) nextAttr() (name []byte, q byte, end, selfClose bool, err error) {
	if err := r.skipSpace(); err != nil {
		return nil, 0, false, false, err
	}
	b := r.buf[r.r]
	switch b {
	case '>':
		r.r++
		return nil, 0, true, false, nil
	case '/':
		r.r++
		c, err := r.readByte()
		if err != nil {
			return nil, 0, false, false, err
		}
		if c != '>' {
			return nil, 0, false, false, malformed("expected '>' after '/', found %q", c)
		}
		return nil, 0, true, true, nil
	}
	name, err = r.readName()
	if err != nil {
		return nil, 0, false, false, err
	}
	if err := r.skipSpace(); err != nil {
		return nil, 0, false, false, err
	}
	if c, _ := r.readByte(); c != '=' {
		return nil, 0, false, false, malformed("attribute %q without a value", name)
	}
	if err := r.skipSpace(); err != nil {
		return nil, 0, false, false, err
	}
	q, err = r.readByte()
	if err != nil {
		return nil, 0, false, false, err
	}
	if q != '"' && q != '\'' {
		return nil, 0, false, false, malformed("attribute %q value not quoted", name)
	}
	return name, q, false, false, nil
}

// skipAttrs consumes the rest of a start tag.
func (r *Reader) skipAttrs() (selfClose bool, err error) {
	for {
		_, q, end, sc, err := r.nextAttr()
		if err != nil || end {
			return sc, err
		}
		if err := r.skipPast(q); err != nil {
			return false, err
		}
	}
}

// skipElement consumes an unwanted element whose name was read: the rest
// of its start tag and, unless it is self-closing, its content.
func (r *Reader) skipElement() error {
	sc, err := r.skipAttrs()
	if err != nil {
		return err
	}
	return r.endElement(sc)
}

// endElement consumes the content of an element whose start tag was just
// read, unless the tag was self-closing.
func (r *Reader) endElement(selfClose bool) error {
	if selfClose {
		return nil
	}
	return r.skipSubtree()
}

// --- markup that is not an element ------------------------------------------

// skipBang consumes a construct starting with "<!" (the '<' is consumed,
// '!' is next): comment, CDATA section, DOCTYPE or other declaration.
func (r *Reader) skipBang() error {
	r.r++ // '!'
	b, err := r.peekByte()
	if err != nil {
		return err
	}
	switch b {
	case '-':
		return r.skipPastSeq("-->")
	case '[':
		return r.skipPastSeq("]]>")
	case 'D', 'd':
		name, err := r.readName()
		if err != nil {
			return err
		}
		if strings.EqualFold(string(name), "DOCTYPE") {
			r.stats.Ignored["doctype"]++
			return r.skipDoctype()
		}
		return r.skipPast('>')
	default:
		return r.skipPast('>')
	}
}

// skipDoctype consumes a DOCTYPE declaration including an internal subset.
// Nothing in it is interpreted: entities it declares are never expanded.
func (r *Reader) skipDoctype() error {
	depth := 0
	for {
		b, err := r.readByte()
		if err != nil {
			return err
		}
		switch b {
		case '"', '\'':
			if err := r.skipPast(b); err != nil {
				return err
			}
		case '[':
			depth++
		case ']':
			if depth > 0 {
				depth--
			}
		case '<':
			c, err := r.peekByte()
			if err != nil {
				return err
			}
			switch c {
			case '!':
				r.r++
				c2, err := r.peekByte()
				if err != nil {
					return err
				}
				if c2 == '-' {
					if err := r.skipPastSeq("-->"); err != nil {
						return err
					}
				}
			case '?':
				if err := r.skipPastSeq("?>"); err != nil {
					return err
				}
			}
		case '>':
			if depth == 0 {
				return nil
			}
		}
	}
}

// skipPI consumes a processing instruction ('<' consumed, '?' next). The
// XML declaration's encoding must be UTF-8 (or ASCII).
func (r *Reader) skipPI() error {
	r.r++ // '?'
	var decl []byte
	var win [2]byte
	for {
		b, err := r.readByte()
		if err != nil {
			return err
		}
		if len(decl) < maxPI {
			decl = append(decl, b)
		}
		win[0], win[1] = win[1], b
		if win == [2]byte{'?', '>'} {
			break
		}
	}
	if r.state == stProlog && bytes.HasPrefix(decl, []byte("xml")) && len(decl) > 3 && isSpace(decl[3]) {
		if enc := declEncoding(string(decl)); enc != "" {
			switch strings.ToLower(enc) {
			case "utf-8", "utf8", "us-ascii", "ascii":
			default:
				return fmt.Errorf("%w: encoding %q (exports are UTF-8)", ErrNotExport, enc)
			}
		}
	}
	return nil
}

// declEncoding extracts encoding="…" from an XML declaration body.
func declEncoding(decl string) string {
	i := strings.Index(decl, "encoding")
	if i < 0 {
		return ""
	}
	s := strings.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
	if !strings.HasPrefix(s, "=") {
		return ""
	}
	s = strings.TrimLeft(s[1:], " \t\r\n")
	if s == "" || (s[0] != '"' && s[0] != '\'') {
		return ""
	}
	if j := strings.IndexByte(s[1:], s[0]); j >= 0 {
		return s[1 : 1+j]
	}
	return ""
}

// skipSubtree consumes the content of an element whose start tag was read
// (and was not self-closing), through its end tag. It keeps a depth
// counter, not a stack, so deeply nested junk costs no memory.
func (r *Reader) skipSubtree() error {
	depth := 1
	for {
		if err := r.skipText(false); err != nil {
			return err
		}
		b, err := r.peekByte()
		if err != nil {
			return err
		}
		switch b {
		case '!':
			if err := r.skipBang(); err != nil {
				return err
			}
		case '?':
			if err := r.skipPI(); err != nil {
				return err
			}
		case '/':
			if err := r.skipPast('>'); err != nil {
				return err
			}
			if depth--; depth == 0 {
				return nil
			}
		default:
			if _, err := r.readName(); err != nil {
				return err
			}
			sc, err := r.skipAttrs()
			if err != nil {
				return err
			}
			if !sc {
				depth++
			}
		}
	}
}

// --- records -----------------------------------------------------------------

// Next returns the next record: *SMS or *MMS. It returns io.EOF after
// </smses>, and an error wrapping ErrTruncated when the input ends before
// it (every complete record has been returned by then). Malformed records
// are skipped and counted in Stats, never returned as errors. Other errors
// (ErrNotExport, read errors) are fatal and repeat on later calls.
func (r *Reader) Next() (Record, error) {
	if r.fatal != nil {
		return nil, r.fatal
	}
	rec, err := r.next()
	if err != nil && err != io.EOF {
		if errors.Is(err, errEOF) {
			r.stats.Incomplete = true
			where := "before <smses>"
			if r.state == stRoot {
				where = "inside <smses>"
			}
			err = fmt.Errorf("%w: input ends at byte %d %s", ErrTruncated, r.offset(), where)
		}
		r.fatal = err
	}
	return rec, err
}

func (r *Reader) next() (Record, error) {
	for {
		if r.state == stDone {
			return nil, io.EOF
		}
		var name string
		var off int64
		if r.pending != "" {
			name, off, r.pending = r.pending, r.pendingOff, ""
		} else {
			if r.state == stProlog && r.offset() == 0 {
				if err := r.checkBOM(); err != nil {
					return nil, err
				}
			}
			if err := r.skipText(r.state == stRoot); err != nil {
				return nil, err
			}
			off = r.offset() - 1
			b, err := r.peekByte()
			if err != nil {
				return nil, err
			}
			switch b {
			case '?':
				if err := r.skipPI(); err != nil {
					return nil, err
				}
				continue
			case '!':
				if err := r.skipBang(); err != nil {
					return nil, err
				}
				continue
			case '/':
				r.r++
				n, err := r.readName()
				if err != nil {
					if errors.Is(err, errEOF) {
						return nil, err
					}
					n = nil
				}
				isRoot := string(n) == "smses"
				if err := r.skipPast('>'); err != nil {
					return nil, err
				}
				if isRoot && r.state == stRoot {
					r.state = stDone
					return nil, io.EOF
				}
				continue
			}
			n, err := r.readName()
			if err != nil {
				if errors.Is(err, errEOF) {
					return nil, err
				}
				if r.state == stProlog {
					return nil, fmt.Errorf("%w: %v", ErrNotExport, err)
				}
				r.stats.Ignored["text"]++
				continue
			}
			name = string(n)
		}
		switch r.state {
		case stProlog:
			if err := r.root(name); err != nil {
				return nil, err
			}
			continue
		}
		var rec Record
		var err error
		switch name {
		case "sms":
			rec, err = r.parseSMS(off)
		case "mms":
			rec, err = r.parseMMS(off)
		default:
			r.stats.Ignored["element"]++
			err = r.skipElement()
		}
		if err != nil {
			var se *syntaxError
			if !errors.As(err, &se) {
				if errors.Is(err, errEOF) && (name == "sms" || name == "mms") {
					r.skip(ReasonTruncated)
				}
				return nil, err
			}
			if name == "sms" || name == "mms" {
				r.skip(se.reason)
			}
			if se.resync {
				if err := r.resync(); err != nil {
					return nil, err
				}
			}
			continue
		}
		if rec == nil {
			continue
		}
		if m, ok := rec.(*MMS); ok {
			r.stats.MMS++
			if m.RCS {
				r.stats.RCS++
			}
		} else {
			r.stats.SMS++
		}
		return rec, nil
	}
}

func (r *Reader) skip(reason string) {
	r.stats.Skipped++
	r.stats.Reasons[reason]++
}

// checkBOM skips a UTF-8 byte order mark and refuses UTF-16 files.
func (r *Reader) checkBOM() error {
	for r.w-r.r < 3 && r.fill() {
	}
	head := r.buf[r.r:r.w]
	switch {
	case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
		r.r += 3
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}), bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		return fmt.Errorf("%w: UTF-16 file (exports are UTF-8)", ErrNotExport)
	}
	return nil
}

// root handles the first element: it must be <smses>.
func (r *Reader) root(name string) error {
	if name != "smses" {
		if name == "calls" {
			return fmt.Errorf("%w: this is a call-log backup (<calls>), not messages", ErrNotExport)
		}
		return fmt.Errorf("%w: root element <%s>, want <smses>", ErrNotExport, truncName(name))
	}
	r.header.Count = -1
	for {
		name, q, end, sc, err := r.nextAttr()
		if err != nil {
			var se *syntaxError
			if errors.As(err, &se) {
				return fmt.Errorf("%w: malformed <smses> tag: %v", ErrNotExport, err)
			}
			return err
		}
		if end {
			r.state = stRoot
			if sc {
				r.state = stDone
			}
			return nil
		}
		switch string(name) {
		case "count":
			if v, st, err := r.intVal(q); err != nil {
				return err
			} else if st == numOK {
				r.header.Count = int(v)
			}
		case "backup_set":
			r.header.BackupSet, err = r.short(q)
		case "backup_date":
			err = r.optDate(q, &r.header.BackupDate)
		case "type":
			r.header.Type, err = r.short(q)
		default:
			err = r.skipPast(q)
		}
		if err != nil {
			return err
		}
	}
}

// truncName quotes an element name read from the file in an error: its
// control characters, bidi overrides and invalid bytes escaped and at most
// 40 characters kept (docs/security.md, "Errors that quote input").
func truncName(s string) string { return sanitize.Quote(s, 40) }

// resync skips input after a malformed record until the next <sms or
// <mms start tag (left pending), or </smses>.
func (r *Reader) resync() error {
	for {
		if err := r.skipText(false); err != nil {
			return err
		}
		off := r.offset() - 1
		b, err := r.peekByte()
		if err != nil {
			return err
		}
		closing := false
		if b == '/' {
			closing = true
			r.r++
		}
		n, err := r.readName()
		if err != nil {
			if errors.Is(err, errEOF) {
				return err
			}
			continue
		}
		switch {
		case closing && string(n) == "smses":
			if err := r.skipPast('>'); err != nil {
				return err
			}
			r.state = stDone
			return nil
		case closing && string(n) == "mms":
			return r.skipPast('>')
		case !closing && (string(n) == "sms" || string(n) == "mms"):
			r.pending, r.pendingOff = string(n), off
			return nil
		}
	}
}

// epoch converts an Android date: milliseconds, or seconds when the value
// is below 1e11 (MMS dates are seconds on many phones).
func epoch(v int64) (time.Time, bool) {
	if v <= 0 {
		return time.Time{}, false
	}
	if v < secondsMax {
		v *= 1000
	}
	if v > 1e15 { // beyond year 33658: garbage
		return time.Time{}, false
	}
	return time.UnixMilli(v).UTC(), true
}

func (r *Reader) parseSMS(off int64) (*SMS, error) {
	s := &SMS{Off: off}
	r.recText = 0
	var date int64
	dateSt := numAbsent
	typeOK := false
	for {
		name, q, end, sc, err := r.nextAttr()
		if err != nil {
			return nil, err
		}
		if end {
			// <sms …>…</sms>: tolerate (and ignore) content.
			if err := r.endElement(sc); err != nil {
				return nil, err
			}
			break
		}
		switch string(name) {
		case "address":
			s.Address, err = r.address(q)
		case "date":
			date, dateSt, err = r.intVal(q)
		case "date_sent":
			err = r.optDate(q, &s.DateSent)
		case "type":
			s.Type, typeOK, err = r.number(q)
		case "body":
			if r.opts.MetaOnly {
				err = r.skipPast(q)
			} else {
				s.Body, err = r.text(q)
			}
		case "subject":
			s.Subject, err = r.text(q)
		case "read":
			s.Read, err = r.flag(q)
		case "status":
			s.Status, s.HasStatus, err = r.number(q)
		case "locked":
			s.Locked, err = r.flag(q)
		case "sub_id":
			s.SubID, s.HasSubID, err = r.number(q)
		case "contact_name":
			s.ContactName, err = r.short(q)
		case "service_center":
			s.ServiceCenter, err = r.short(q)
		default:
			err = r.skipPast(q)
		}
		if err != nil {
			return nil, err
		}
	}
	var err error
	if s.Date, err = recordDate("sms", date, dateSt); err != nil {
		return nil, err
	}
	if !typeOK || s.Type < TypeInbox || s.Type > TypeQueued {
		return nil, &syntaxError{reason: ReasonBadType, msg: "sms with an unknown type"}
	}
	if strings.TrimSpace(s.Address) == "" {
		return nil, &syntaxError{reason: ReasonNoAddress, msg: "sms without an address"}
	}
	return s, nil
}

func (r *Reader) parseMMS(off int64) (*MMS, error) {
	m := &MMS{Off: off}
	r.recText = 0
	var date int64
	dateSt := numAbsent
	boxOK := false
	selfClose := false
	for {
		name, q, end, sc, err := r.nextAttr()
		if err != nil {
			return nil, err
		}
		if end {
			selfClose = sc
			break
		}
		if bytes.HasPrefix(name, []byte("rcs_")) {
			m.RCS = true
		}
		switch string(name) {
		case "date":
			date, dateSt, err = r.intVal(q)
		case "date_sent":
			err = r.optDate(q, &m.DateSent)
		case "msg_box":
			m.MsgBox, boxOK, err = r.number(q)
		case "address":
			m.Address, err = r.address(q)
		case "contact_name":
			m.ContactName, err = r.short(q)
		case "sub":
			m.Subject, err = r.text(q)
		case "read":
			m.Read, err = r.flag(q)
		case "m_type":
			m.MType, _, err = r.number(q)
		case "ct_t":
			v, err := r.short(q)
			if err != nil {
				return nil, err
			}
			m.CtT = strings.ToLower(v)
			if strings.Contains(m.CtT, "rcs") {
				m.RCS = true
			}
		case "tr_id":
			if m.TrID, err = r.short(q); err != nil {
				return nil, err
			}
			if strings.HasPrefix(m.TrID, "proto:") {
				m.RCS = true
			}
		case "m_id":
			m.MID, err = r.short(q)
		case "sub_id":
			m.SubID, m.HasSubID, err = r.number(q)
		default:
			err = r.skipPast(q)
		}
		if err != nil {
			return nil, err
		}
	}
	if !selfClose {
		if err := r.mmsChildren(m); err != nil {
			return nil, err
		}
	}
	var err error
	if m.Date, err = recordDate("mms", date, dateSt); err != nil {
		return nil, err
	}
	if !boxOK || m.MsgBox < TypeInbox || m.MsgBox > TypeFailed {
		// Fall back on the PDU type: 128 send-req is ours, 132 retrieve-conf
		// was received.
		switch m.MType {
		case 128:
			m.MsgBox = TypeSent
		case 132:
			m.MsgBox = TypeInbox
		default:
			return nil, &syntaxError{reason: ReasonBadType, msg: "mms with an unknown msg_box"}
		}
	}
	if !m.hasAddress() {
		return nil, &syntaxError{reason: ReasonNoAddress, msg: "mms without an address"}
	}
	return m, nil
}

// hasAddress reports whether the MMS names anyone.
func (m *MMS) hasAddress() bool {
	for _, a := range strings.Split(m.Address, "~") {
		if usableAddress(a) {
			return true
		}
	}
	for _, a := range m.Addrs {
		if usableAddress(a.Address) {
			return true
		}
	}
	return false
}

// usableAddress reports whether an address names someone (not empty, not
// "null", not the insert-address-token placeholder).
func usableAddress(a string) bool {
	a = strings.TrimSpace(a)
	return a != "" && a != "null" && !strings.EqualFold(a, InsertAddressToken)
}

// mmsChildren reads an MMS's content through </mms>.
func (r *Reader) mmsChildren(m *MMS) error {
	for {
		if err := r.skipText(false); err != nil {
			return err
		}
		off := r.offset() - 1
		b, err := r.peekByte()
		if err != nil {
			return err
		}
		switch b {
		case '!':
			if err := r.skipBang(); err != nil {
				return err
			}
			continue
		case '?':
			if err := r.skipPI(); err != nil {
				return err
			}
			continue
		case '/':
			r.r++
			n, err := r.readName()
			if err != nil {
				return err
			}
			done := string(n) == "mms"
			if err := r.skipPast('>'); err != nil {
				return err
			}
			if done {
				return nil
			}
			continue
		}
		n, err := r.readName()
		if err != nil {
			return err
		}
		switch string(n) {
		case "parts", "addrs":
			// Containers: their children are handled here.
			if _, err := r.skipAttrs(); err != nil {
				return err
			}
		case "part":
			if r.opts.MetaOnly {
				if err := r.skipElement(); err != nil {
					return err
				}
				continue
			}
			p, err := r.parsePart()
			if err != nil {
				return err
			}
			m.Parts = keepChild(r, m.Parts, p, &m.DroppedParts)
		case "addr":
			a, err := r.parseAddr()
			if err != nil {
				return err
			}
			m.Addrs = keepChild(r, m.Addrs, a, &m.DroppedAddrs)
		case "sms", "mms":
			// A new record before </mms>: this one is unfinished.
			r.pending, r.pendingOff = string(n), off
			return &syntaxError{reason: ReasonUnclosed, msg: "mms without </mms>"} // resumes at the pending tag
		default:
			r.stats.Ignored["element"]++
			if err := r.skipElement(); err != nil {
				return err
			}
		}
	}
}

// keepChild appends an MMS child (part or address) unless MaxParts are kept
// already; a dropped child is counted in *dropped and Stats.Truncated.
func keepChild[T any](r *Reader, kept []T, child T, dropped *int) []T {
	if len(kept) < r.opts.MaxParts {
		return append(kept, child)
	}
	*dropped++
	r.stats.Truncated++
	return kept
}

// parsePart reads a <part> element through its end.
func (r *Reader) parsePart() (Part, error) {
	p := Part{Seq: -2}
	var textRaw string
	var textTrunc, haveText bool
	for {
		name, q, end, sc, err := r.nextAttr()
		if err != nil {
			return p, err
		}
		if end {
			if haveText && p.IsText() {
				p.Text, p.TextTruncated = textRaw, p.TextTruncated || textTrunc
			}
			return p, r.endElement(sc)
		}
		switch string(name) {
		case "seq":
			if n, ok, err := r.number(q); err != nil {
				return p, err
			} else if ok {
				p.Seq = n
			}
		case "ct":
			v, err := r.short(q)
			if err != nil {
				return p, err
			}
			p.ContentType = strings.ToLower(strings.TrimSpace(v))
			if i := strings.IndexByte(p.ContentType, ';'); i >= 0 {
				p.ContentType = strings.TrimSpace(p.ContentType[:i])
			}
		case "chset":
			p.Charset, _, err = r.number(q)
		case "name":
			p.Name, err = r.short(q)
		case "fn":
			p.Filename, err = r.short(q)
		case "cl":
			p.ContentLoc, err = r.short(q)
		case "cid":
			p.ContentID, err = r.short(q)
		case "text":
			// Kept whatever ct says (ct may follow); bounded by the record
			// budget. SMIL layouts are dropped once ct is known.
			if p.IsSMIL() {
				err = r.skipPast(q)
			} else {
				textRaw, textTrunc, err = r.textValue(q)
				haveText = err == nil && textRaw != "null"
			}
		case "data":
			if p.IsText() && !haveText {
				// A text part stored as base64 (some phones): decode it.
				t, size, trunc, err := r.base64Text(q, p.Charset)
				if err != nil {
					return p, err
				}
				p.Size, p.HasData = size, size > 0
				if t != "" {
					textRaw, textTrunc, haveText = t, trunc, true
				}
				continue
			}
			n, err := r.countBase64(q)
			if err != nil {
				return p, err
			}
			p.Size, p.HasData = n, n > 0
		default:
			err = r.skipPast(q)
		}
		if err != nil {
			return p, err
		}
	}
}

// parseAddr reads an <addr> element through its end.
func (r *Reader) parseAddr() (Addr, error) {
	var a Addr
	for {
		name, q, end, sc, err := r.nextAttr()
		if err != nil {
			return a, err
		}
		if end {
			return a, r.endElement(sc)
		}
		switch string(name) {
		case "address":
			a.Address, err = r.address(q)
		case "type":
			a.Type, _, err = r.number(q)
		case "charset":
			a.Charset, _, err = r.number(q)
		default:
			err = r.skipPast(q)
		}
		if err != nil {
			return a, err
		}
	}
}

// --- values -------------------------------------------------------------------

type numState int

const (
	numAbsent numState = iota // missing, empty or "null"
	numOK
	numBad // present but not an integer
)

// intVal reads an integer attribute value.
func (r *Reader) intVal(q byte) (int64, numState, error) {
	v, trunc, err := r.readValue(q, 64)
	if err != nil {
		return 0, numAbsent, err
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return 0, numAbsent, nil
	}
	if trunc {
		return 0, numBad, nil
	}
	neg := false
	if v[0] == '-' || v[0] == '+' {
		neg, v = v[0] == '-', v[1:]
	}
	if len(v) == 0 || len(v) > 18 {
		return 0, numBad, nil
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, numBad, nil
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, numOK, nil
}

// number reads an integer attribute as an int; ok is false (and n 0) when
// the value is absent, "null" or not an integer.
func (r *Reader) number(q byte) (n int, ok bool, err error) {
	v, st, err := r.intVal(q)
	return int(v), st == numOK, err
}

// flag reads a 0/1 attribute: true only for a valid non-zero integer.
func (r *Reader) flag(q byte) (bool, error) {
	v, st, err := r.intVal(q)
	return st == numOK && v != 0, err
}

// optDate reads an optional date attribute into *t, left alone when the
// value is absent or not an integer (an out-of-range date becomes zero).
func (r *Reader) optDate(q byte, t *time.Time) error {
	v, st, err := r.intVal(q)
	if err == nil && st == numOK {
		*t, _ = epoch(v)
	}
	return err
}

// recordDate checks a record's required date attribute (read with intVal);
// kind ("sms", "mms") names the record in the rejection.
func recordDate(kind string, v int64, st numState) (time.Time, error) {
	if st != numOK {
		return time.Time{}, &syntaxError{reason: ReasonBadDate, msg: kind + " without a valid date"}
	}
	t, ok := epoch(v)
	if !ok {
		return time.Time{}, &syntaxError{reason: ReasonBadDate, msg: kind + " date out of range"}
	}
	return t, nil
}

// address reads an address attribute; one beyond maxShort bytes rejects
// the record (errLongAddress) rather than being cut.
func (r *Reader) address(q byte) (string, error) {
	v, trunc, err := r.str(q, maxShort)
	if err == nil && trunc {
		return "", errLongAddress
	}
	return v, err
}

// short reads a short string value (name, id, content type) of at most
// maxShort bytes; a longer one is cut and counted in Stats.Truncated.
func (r *Reader) short(q byte) (string, error) {
	v, _, err := r.str(q, maxShort)
	return v, err
}

// str reads a short string value; "null" becomes "".
func (r *Reader) str(q byte, limit int) (string, bool, error) {
	v, trunc, err := r.readValue(q, limit)
	if err != nil {
		return "", false, err
	}
	if string(v) == "null" {
		return "", false, nil
	}
	if trunc {
		r.stats.Truncated++
	}
	return r.intern(v, trunc), trunc, nil
}

// maxInterned bounds the interning table of short repeated values
// (addresses, contact names, service centres, content types).
const maxInterned = 8192

// intern returns the cleaned string for a short value, sharing one copy
// between the records that repeat it.
func (r *Reader) intern(v []byte, trunc bool) string {
	if trunc || len(v) > 64 {
		return cleanText(v, trunc)
	}
	if s, ok := r.strs[string(v)]; ok {
		return s
	}
	s := cleanText(v, false)
	if len(r.strs) < maxInterned {
		r.strs[string(v)] = s
	}
	return s
}

// text reads a text value (body, subject, part text). The literal "null"
// is the app's marker for a null column and becomes "" (a message whose
// text is the word "null" is indistinguishable from it).
func (r *Reader) text(q byte) (string, error) {
	s, _, err := r.textValue(q)
	if s == "null" {
		s = ""
	}
	return s, err
}

// textValue reads a text value within the record's text budget.
func (r *Reader) textValue(q byte) (string, bool, error) {
	limit := min(r.opts.MaxText, r.opts.MaxRecordText-r.recText)
	if limit <= 0 {
		r.stats.Truncated++
		return "", true, r.skipPast(q)
	}
	v, trunc, err := r.readValue(q, limit)
	if err != nil {
		return "", false, err
	}
	if trunc {
		r.stats.Truncated++
	}
	r.recText += len(v)
	return cleanText(v, trunc), trunc, nil
}
