package contacts

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"github.com/tidings-mcp/tidings/internal/model"
)

// SourceVCard is the model.Contact.Source of cards read from vCard files.
const SourceVCard = "vcard"

// Parser limits. A logical line of a property we keep (a name, a number)
// longer than maxValueLine is skipped and reported; properties we ignore
// (PHOTO, often megabytes of base64) are discarded while reading, so their
// size costs no memory.
const (
	maxPhysLine  = 1 << 20
	maxValueLine = 1 << 16
	maxPerCard   = 1000 // phones or e-mails kept per card
	maxNesting   = 8    // vCard 2.1 AGENT cards nest whole cards
)

// ParseError describes what a vCard parse had to skip. The cards that
// parsed are still returned alongside it.
type ParseError struct {
	Line    int    // first line with a problem (1-based, physical)
	Msg     string // what was wrong there
	Skipped int    // number of problems in the file
}

func (e *ParseError) Error() string {
	if e.Skipped > 1 {
		return fmt.Sprintf("vcard line %d: %s (and %d more problems)", e.Line, e.Msg, e.Skipped-1)
	}
	return fmt.Sprintf("vcard line %d: %s", e.Line, e.Msg)
}

// ReadVCardFile reads every card of a .vcf file. A non-nil error with
// cards means the file was read but something was skipped (*ParseError).
func ReadVCardFile(path string) ([]model.Contact, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open vcard: %w", err)
	}
	defer f.Close()
	cards, err := ParseVCards(f)
	if err != nil {
		return cards, fmt.Errorf("%s: %w", path, err)
	}
	return cards, nil
}

// ParseVCards reads every card (BEGIN:VCARD … END:VCARD) in r: vCard 2.1,
// 3.0 and 4.0, UTF-8 with or without BOM, UTF-16 with BOM, CRLF/LF/CR line
// ends, folded lines, QUOTED-PRINTABLE and BASE64 values, CHARSET
// parameters, backslash escapes and grouped properties ("item1.TEL").
// It keeps N, FN, NICKNAME, ORG, TEL, EMAIL, UID and REV; phones labelled
// mobile (TYPE=CELL, X-ABLabel Mobile/iPhone) come first.
//
// A read error is returned alone; malformed content yields the cards that
// parsed plus a *ParseError (an unterminated last card is one).
func ParseVCards(r io.Reader) ([]model.Contact, error) {
	p := &vparser{lr: newLineReader(r)}
	cards, err := p.run()
	if err != nil {
		return nil, err
	}
	if p.perr != nil {
		return cards, p.perr
	}
	return cards, nil
}

// lineReader yields physical lines ended by CRLF, LF or a lone CR.
type lineReader struct {
	br     *bufio.Reader
	cur    []byte
	skipLF bool
	line   int
}

func newLineReader(r io.Reader) *lineReader {
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(3); len(head) >= 2 {
		switch {
		case bytes.HasPrefix(head, []byte{0xEF, 0xBB, 0xBF}):
			_, _ = br.Discard(3)
		case head[0] == 0xFF && head[1] == 0xFE, head[0] == 0xFE && head[1] == 0xFF:
			dec := unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder()
			br = bufio.NewReaderSize(transform.NewReader(br, dec), 64<<10)
		}
	}
	return &lineReader{br: br}
}

// next returns the next line (valid until the following call) and whether
// it was longer than maxPhysLine (then it is cut). It returns io.EOF after
// the last line.
func (lr *lineReader) next() ([]byte, bool, error) {
	lr.cur = lr.cur[:0]
	got, overflow := false, false
	for {
		if lr.br.Buffered() == 0 {
			if _, err := lr.br.Peek(1); err != nil {
				if err == io.EOF && got {
					lr.line++
					return lr.cur, overflow, nil
				}
				return nil, false, err
			}
		}
		buf, _ := lr.br.Peek(lr.br.Buffered())
		if lr.skipLF {
			lr.skipLF = false
			if buf[0] == '\n' {
				_, _ = lr.br.Discard(1)
				continue
			}
		}
		got = true
		i := bytes.IndexAny(buf, "\r\n")
		end := i
		if i < 0 {
			end = len(buf)
		}
		if len(lr.cur)+end > maxPhysLine {
			overflow = true
		} else {
			lr.cur = append(lr.cur, buf[:end]...)
		}
		if i < 0 {
			_, _ = lr.br.Discard(len(buf))
			continue
		}
		lr.skipLF = buf[i] == '\r'
		_, _ = lr.br.Discard(i + 1)
		lr.line++
		return lr.cur, overflow, nil
	}
}

// vprop is one parsed content line.
type vprop struct {
	group  string
	name   string // upper case
	params map[string][]string
	value  string // decoded to UTF-8, escapes still in place
}

type vparser struct {
	lr *lineReader
	// One line of lookahead for unfolding.
	peek      []byte
	peekOver  bool
	peekValid bool
	peekLine  int
	perr      *ParseError
}

func (p *vparser) problem(line int, format string, args ...any) {
	if p.perr == nil {
		p.perr = &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	p.perr.Skipped++
}

// fill loads the lookahead line.
func (p *vparser) fill() error {
	if p.peekValid {
		return nil
	}
	l, over, err := p.lr.next()
	if err != nil {
		return err
	}
	p.peek = append(p.peek[:0], l...)
	p.peekOver, p.peekValid, p.peekLine = over, true, p.lr.line
	return nil
}

// interesting lists the properties whose values are kept.
var interesting = map[string]bool{
	"BEGIN": true, "END": true, "VERSION": true, "N": true, "FN": true, "NICKNAME": true,
	"ORG": true, "TEL": true, "EMAIL": true, "UID": true, "REV": true, "X-ABLABEL": true,
}

// logical returns the next unfolded line, or nil at EOF. keep is false for
// properties whose value is not needed (the content is then dropped).
func (p *vparser) logical() (line []byte, keep bool, lineNo int, err error) {
	for {
		if err := p.fill(); err != nil {
			if err == io.EOF {
				return nil, false, 0, io.EOF
			}
			return nil, false, 0, fmt.Errorf("read vcard: %w", err)
		}
		p.peekValid = false
		if len(bytes.TrimSpace(p.peek)) > 0 {
			break
		}
	}
	lineNo = p.peekLine
	first := p.peek
	name, qp := headOf(first)
	keep = interesting[name]
	var out []byte
	tooLong := p.peekOver
	if keep {
		out = append(out, first...)
	}
	tail := lastByte(first)
unfold:
	for {
		if err := p.fill(); err != nil {
			break
		}
		switch {
		case qp && tail == '=':
			// Quoted-printable soft line break: the next line continues
			// the value verbatim.
			if keep {
				out = append(out[:len(out)-1], p.peek...)
			}
		case len(p.peek) > 0 && (p.peek[0] == ' ' || p.peek[0] == '\t'):
			if keep {
				out = append(out, p.peek[1:]...)
			}
		default:
			break unfold
		}
		p.peekValid = false
		tail = lastByte(p.peek)
		tooLong = tooLong || p.peekOver
		if keep && len(out) > maxValueLine {
			tooLong, keep, out = true, false, nil
		}
	}
	if len(out) > maxValueLine {
		tooLong = true
	}
	if tooLong && interesting[name] {
		p.problem(lineNo, "%s value longer than %d bytes skipped", name, maxValueLine)
		return []byte{}, false, lineNo, nil
	}
	return out, keep, lineNo, nil
}

func lastByte(b []byte) byte {
	if len(b) == 0 {
		return 0
	}
	return b[len(b)-1]
}

// headOf returns the upper-cased property name of a raw line and whether
// its parameters ask for quoted-printable.
func headOf(line []byte) (string, bool) {
	end := bytes.IndexAny(line, ";:")
	if end < 0 {
		return "", false
	}
	name := line[:end]
	if i := bytes.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	qp := false
	if line[end] == ';' {
		colon := paramEnd(line, end)
		qp = bytes.Contains(bytes.ToUpper(line[end:colon]), []byte("QUOTED-PRINTABLE"))
	}
	return strings.ToUpper(strings.TrimSpace(string(name))), qp
}

// paramEnd returns the index of the colon that ends the parameters, which
// starts the value; colons inside double-quoted parameter values do not
// count. It returns len(line) when there is none.
func paramEnd(line []byte, from int) int {
	quoted := false
	for i := from; i < len(line); i++ {
		switch line[i] {
		case '"':
			quoted = !quoted
		case ':':
			if !quoted {
				return i
			}
		}
	}
	return len(line)
}

func (p *vparser) run() ([]model.Contact, error) {
	var (
		cards   []model.Contact
		props   []vprop
		depth   int
		startAt int
	)
	for {
		raw, keep, lineNo, err := p.logical()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if !keep {
			continue
		}
		prop, ok := parseProp(raw)
		if !ok {
			if depth > 0 {
				p.problem(lineNo, "malformed content line skipped")
			}
			continue
		}
		switch prop.name {
		case "BEGIN":
			if !strings.EqualFold(strings.TrimSpace(prop.value), "VCARD") {
				continue
			}
			if depth == 0 {
				props, startAt = props[:0], lineNo
			}
			if depth < maxNesting {
				depth++
			} else {
				p.problem(lineNo, "cards nested deeper than %d", maxNesting)
			}
			continue
		case "END":
			if !strings.EqualFold(strings.TrimSpace(prop.value), "VCARD") || depth == 0 {
				continue
			}
			depth--
			if depth == 0 {
				if c, ok := buildCard(props); ok {
					cards = append(cards, c)
				}
			}
			continue
		}
		if depth == 1 {
			props = append(props, prop)
		}
	}
	if depth > 0 {
		p.problem(startAt, "card not closed (missing END:VCARD)")
	}
	return cards, nil
}

// parseProp splits "group.NAME;param=a,b;bare:value" and decodes the value
// to UTF-8 (QUOTED-PRINTABLE/BASE64, then CHARSET).
func parseProp(raw []byte) (vprop, bool) {
	end := bytes.IndexAny(raw, ";:")
	if end <= 0 {
		return vprop{}, false
	}
	var pr vprop
	name := strings.TrimSpace(string(raw[:end]))
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		pr.group, name = strings.ToUpper(name[:i]), name[i+1:]
	}
	if name == "" || !isToken(name) {
		return vprop{}, false
	}
	pr.name = strings.ToUpper(name)
	colon := end
	if raw[end] == ';' {
		colon = paramEnd(raw, end)
		if colon == len(raw) {
			return vprop{}, false
		}
		pr.params = parseParams(string(raw[end+1 : colon]))
	}
	val := raw[colon+1:]
	switch enc := strings.ToUpper(first(pr.params["ENCODING"])); enc {
	case "QUOTED-PRINTABLE":
		val = decodeQP(val)
	case "B", "BASE64":
		if pr.name != "BEGIN" && pr.name != "END" {
			clean := bytes.Map(func(r rune) rune {
				if r == ' ' || r == '\t' {
					return -1
				}
				return r
			}, val)
			// Large enough for padded and unpadded input alike.
			dec := make([]byte, len(clean))
			n, err := base64.StdEncoding.Decode(dec, clean)
			if err != nil {
				n, err = base64.RawStdEncoding.Decode(dec, bytes.TrimRight(clean, "="))
			}
			if err != nil {
				return vprop{}, false
			}
			val = dec[:n]
		}
	}
	pr.value = toUTF8(val, first(pr.params["CHARSET"]))
	return pr, true
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// parseParams reads "TYPE=cell,voice;PREF=1;CHARSET=UTF-8" and vCard 2.1
// bare parameters ("CELL", "QUOTED-PRINTABLE"). Keys are upper case; TYPE
// values are split on commas.
func parseParams(s string) map[string][]string {
	out := map[string][]string{}
	for _, part := range splitUnquoted(s, ';') {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, hasEq := strings.Cut(part, "=")
		k = strings.ToUpper(strings.TrimSpace(k))
		if !hasEq {
			switch k {
			case "QUOTED-PRINTABLE", "BASE64", "8BIT", "7BIT":
				out["ENCODING"] = append(out["ENCODING"], k)
			default:
				out["TYPE"] = append(out["TYPE"], strings.ToLower(k))
			}
			continue
		}
		for _, item := range splitUnquoted(v, ',') {
			item = strings.Trim(strings.TrimSpace(item), `"`)
			if k != "TYPE" {
				out[k] = append(out[k], item)
				continue
			}
			// TYPE="work,cell" (vCard 4) lists types inside the quotes.
			for _, t := range strings.Split(item, ",") {
				out[k] = append(out[k], strings.ToLower(strings.TrimSpace(t)))
			}
		}
	}
	return out
}

// splitUnquoted splits s on sep outside double quotes.
func splitUnquoted(s string, sep byte) []string {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case sep:
			if !quoted {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// decodeQP decodes quoted-printable leniently: a malformed escape is kept
// literally, as old exporters produce them.
func decodeQP(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '=' && i+2 < len(b) {
			if h, ok := unhex(b[i+1], b[i+2]); ok {
				out = append(out, h)
				i += 2
				continue
			}
		}
		out = append(out, b[i])
	}
	return out
}

func unhex(a, b byte) (byte, bool) {
	x, ok1 := hexVal(a)
	y, ok2 := hexVal(b)
	return x<<4 | y, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// toUTF8 converts a value from its CHARSET. Without one, or with an
// unknown one, valid UTF-8 is kept and anything else is read as
// Windows-1252, the usual encoding of old unlabelled exports.
func toUTF8(b []byte, charset string) string {
	if charset != "" {
		if enc, err := htmlindex.Get(charset); err == nil {
			if name, _ := htmlindex.Name(enc); name != "utf-8" {
				if out, err := enc.NewDecoder().Bytes(b); err == nil {
					return strings.ToValidUTF8(string(out), "\uFFFD")
				}
			}
		}
	}
	if utf8.Valid(b) {
		return string(b)
	}
	out, err := charmap.Windows1252.NewDecoder().Bytes(b)
	if err != nil {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return string(out)
}

// splitEscaped splits a value on an unescaped separator.
func splitEscaped(s string, sep byte) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// unescape resolves vCard text escapes (\n \N \, \; \: \\). An unknown
// escape keeps its backslash.
func unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n', 'N':
			b.WriteByte('\n')
		case ',', ';', ':', '\\':
			b.WriteByte(s[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return strings.TrimSpace(b.String())
}

// component returns structured component i, with list items joined by a
// space.
func component(parts []string, i int) string {
	if i >= len(parts) {
		return ""
	}
	items := splitEscaped(parts[i], ',')
	out := make([]string, 0, len(items))
	for _, it := range items {
		if it = unescape(it); it != "" {
			out = append(out, it)
		}
	}
	return strings.Join(out, " ")
}

// revLayouts are the REV timestamp forms seen in exports.
var revLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "20060102T150405Z", "20060102T150405Z0700",
	"20060102T150405", "2006-01-02T15:04:05", "2006-01-02", "20060102",
}

func parseRev(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, l := range revLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

type labelled struct {
	value string
	rank  int
}

// buildCard turns a card's properties into a Contact. A card with neither
// a name nor a handle is dropped.
func buildCard(props []vprop) (model.Contact, bool) {
	c := model.Contact{Source: SourceVCard}
	labels := map[string]string{}
	for _, pr := range props {
		if pr.name == "X-ABLABEL" && pr.group != "" {
			labels[pr.group] = unescape(pr.value)
		}
	}
	var phones, emails []labelled
	var uid string
	for _, pr := range props {
		switch pr.name {
		case "N":
			parts := splitEscaped(pr.value, ';')
			c.Last, c.First, c.Middle = component(parts, 0), component(parts, 1), component(parts, 2)
		case "FN":
			c.FullName = unescape(pr.value)
		case "NICKNAME":
			if c.Nickname == "" {
				for _, n := range splitEscaped(pr.value, ',') {
					if n = unescape(n); n != "" {
						c.Nickname = n
						break
					}
				}
			}
		case "ORG":
			if c.Organization == "" {
				c.Organization = component(splitEscaped(pr.value, ';'), 0)
			}
		case "TEL":
			v := unescape(pr.value)
			if len(v) > 4 && strings.EqualFold(v[:4], "tel:") {
				v = strings.TrimSpace(v[4:])
			}
			if v != "" && len(phones) < maxPerCard {
				phones = append(phones, labelled{v, labelRank(pr.params["TYPE"], labels[pr.group])})
			}
		case "EMAIL":
			v := unescape(pr.value)
			if len(v) > 7 && strings.EqualFold(v[:7], "mailto:") {
				v = strings.TrimSpace(v[7:])
			}
			if v != "" && len(emails) < maxPerCard {
				emails = append(emails, labelled{v, labelRank(pr.params["TYPE"], labels[pr.group])})
			}
		case "UID":
			uid = unescape(pr.value)
		case "REV":
			c.Modified = parseRev(unescape(pr.value))
		}
	}
	c.Phones = orderByLabel(phones)
	c.Emails = orderByLabel(emails)
	if c.Name() == "" && len(c.Phones) == 0 && len(c.Emails) == 0 {
		return c, false
	}
	if uid != "" {
		c.ID = uid
	} else {
		c.ID = cardHash(c)
	}
	return c, true
}

// labelRank is 0 for a mobile number (the one Messages uses), 1 otherwise.
func labelRank(types []string, abLabel string) int {
	for _, t := range types {
		if t == "cell" || t == "mobile" || t == "iphone" {
			return 0
		}
	}
	switch strings.ToLower(CleanLabel(abLabel)) {
	case "mobile", "iphone", "cell":
		return 0
	}
	return 1
}

// orderByLabel returns the values, mobile first, otherwise in card order,
// without exact duplicates.
func orderByLabel(vs []labelled) []string {
	slices.SortStableFunc(vs, func(a, b labelled) int { return a.rank - b.rank })
	var out []string
	for _, v := range vs {
		if !slices.Contains(out, v.value) {
			out = append(out, v.value)
		}
	}
	return out
}

// cardHash is the id of a card without UID: a digest of its identifying
// content (not REV or photos), so re-exporting an unchanged card keeps it.
func cardHash(c model.Contact) string {
	h := sha256.New()
	for _, s := range []string{c.FullName, c.First, c.Middle, c.Last, c.Nickname, c.Organization} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	for _, s := range c.Phones {
		h.Write([]byte(s))
		h.Write([]byte{1})
	}
	for _, s := range c.Emails {
		h.Write([]byte(s))
		h.Write([]byte{2})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)[:8])
}

// CleanLabel turns an Apple label such as "_$!<Mobile>!$_" into "Mobile";
// other labels are returned trimmed.
func CleanLabel(l string) string {
	l = strings.TrimSpace(l)
	if strings.HasPrefix(l, "_$!<") && strings.HasSuffix(l, ">!$_") && len(l) >= 8 {
		return l[4 : len(l)-4]
	}
	return l
}
