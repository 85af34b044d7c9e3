package addressbook

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A vCard (RFC 2426 3.0, RFC 6350 4.0) held as its content lines, so a
// write changes only the properties it means to and keeps every other one
// byte for byte: photos, X- fields, parameters it does not know, groups
// (item1.TEL with item1.X-ABLabel), the exact escaping. go-vcard (which
// go-webdav's carddav package decodes into) cannot do this: it unescapes
// "\," into "," so a list value and a value holding a comma become one
// thing, and its encoder escapes every comma, which corrupts a vCard 4
// data: URI photo (docs/tools.md, "Contacts"). Reading therefore happens
// here, and go-webdav is used for discovery only.

// Prop is one content line: [group.]NAME[;params]:value.
type Prop struct {
	Group string
	// Name is upper-cased.
	Name string
	// Params is the raw parameter text after the name, without the
	// leading ";" ("TYPE=CELL;PREF=1"); kept as written.
	Params string
	// Value is the raw (still escaped) value.
	Value string
	// raw is the line as read, folding included; a property built or
	// changed here has none and is encoded and folded afresh.
	raw string
}

// Card is one BEGIN:VCARD … END:VCARD.
type Card struct {
	Props []*Prop
}

// ErrNotVCard is returned for text holding no vCard.
var ErrNotVCard = errors.New("not a vCard: no BEGIN:VCARD")

// maxCard bounds one object read from a folder or a server.
const maxCard = 4 << 20

// ParseCards parses every vCard of data. Lines are unfolded (a CRLF or LF
// followed by a space or tab continues the line); the original text of
// each line is kept for the write back.
func ParseCards(data []byte) ([]*Card, error) {
	if len(data) > maxCard {
		return nil, fmt.Errorf("the vCard is larger than %d MB", maxCard>>20)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return nil, errors.New("the vCard is not UTF-8")
	}
	text := string(data)
	var cards []*Card
	var cur *Card
	for len(text) > 0 {
		// One logical line: physical lines joined while the next begins
		// with a space or tab.
		end := 0
		for {
			nl := strings.IndexByte(text[end:], '\n')
			if nl < 0 {
				end = len(text)
				break
			}
			end += nl + 1
			if end >= len(text) || (text[end] != ' ' && text[end] != '\t') {
				break
			}
		}
		raw := text[:end]
		text = text[end:]
		logical := unfold(raw)
		if strings.TrimSpace(logical) == "" {
			continue
		}
		p, err := parseProp(logical)
		if err != nil {
			return cards, err
		}
		p.raw = raw
		switch {
		case p.Name == "BEGIN" && strings.EqualFold(p.Value, "VCARD"):
			if cur != nil {
				return cards, errors.New("a vCard begins inside another (nested vCards are not supported)")
			}
			cur = &Card{}
		case p.Name == "END" && strings.EqualFold(p.Value, "VCARD"):
			if cur == nil {
				return cards, errors.New("END:VCARD without BEGIN:VCARD")
			}
			cards = append(cards, cur)
			cur = nil
		case cur == nil:
			return cards, ErrNotVCard
		default:
			cur.Props = append(cur.Props, p)
		}
	}
	if cur != nil {
		return cards, errors.New("the vCard has no END:VCARD")
	}
	if len(cards) == 0 {
		return nil, ErrNotVCard
	}
	return cards, nil
}

func unfold(raw string) string {
	s := strings.TrimRight(raw, "\r\n")
	s = strings.ReplaceAll(s, "\r\n ", "")
	s = strings.ReplaceAll(s, "\r\n\t", "")
	s = strings.ReplaceAll(s, "\n ", "")
	s = strings.ReplaceAll(s, "\n\t", "")
	return s
}

// parseProp splits a logical line at the first ":" outside a quoted
// parameter value.
func parseProp(line string) (*Prop, error) {
	colon, quoted := -1, false
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"':
			quoted = !quoted
		case ':':
			if !quoted {
				colon = i
			}
		}
		if colon >= 0 {
			break
		}
	}
	if colon < 0 {
		return nil, fmt.Errorf("a vCard line has no ':' (%.40q)", line)
	}
	head, value := line[:colon], line[colon+1:]
	name, params, _ := strings.Cut(head, ";")
	p := &Prop{Value: value, Params: params}
	if g, n, ok := strings.Cut(name, "."); ok {
		p.Group, name = g, n
	}
	p.Name = strings.ToUpper(strings.TrimSpace(name))
	if p.Name == "" {
		return nil, fmt.Errorf("a vCard line has no property name (%.40q)", line)
	}
	return p, nil
}

// Encode renders the card: every untouched line exactly as read, every
// new or changed one with CRLF and folded at 75 octets (RFC 6350 §3.2),
// never inside a UTF-8 sequence.
func (c *Card) Encode() []byte {
	var b bytes.Buffer
	b.WriteString("BEGIN:VCARD\r\n")
	for _, p := range c.Props {
		if p.raw != "" {
			b.WriteString(p.raw)
			if !strings.HasSuffix(p.raw, "\n") {
				b.WriteString("\r\n")
			}
			continue
		}
		b.WriteString(fold(p.line()))
	}
	b.WriteString("END:VCARD\r\n")
	return b.Bytes()
}

func (p *Prop) line() string {
	var s strings.Builder
	if p.Group != "" {
		s.WriteString(p.Group + ".")
	}
	s.WriteString(p.Name)
	if p.Params != "" {
		s.WriteString(";" + p.Params)
	}
	s.WriteString(":" + p.Value)
	return s.String()
}

func fold(line string) string {
	var b strings.Builder
	n := 0
	for _, r := range line {
		w := utf8.RuneLen(r)
		if n+w > 75 {
			b.WriteString("\r\n ")
			n = 1
		}
		b.WriteRune(r)
		n += w
	}
	b.WriteString("\r\n")
	return b.String()
}

// Version is the card's VERSION ("3.0", "4.0"; "" when absent).
func (c *Card) Version() string { return strings.TrimSpace(c.Raw("VERSION")) }

// All returns the properties named name, in card order.
func (c *Card) All(name string) []*Prop {
	var out []*Prop
	for _, p := range c.Props {
		if p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

// Raw is the raw value of the first property named name.
func (c *Card) Raw(name string) string {
	for _, p := range c.Props {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// Text is the unescaped text of the first property named name.
func (c *Card) Text(name string) string { return Unescape(c.Raw(name)) }

// Remove deletes every property named name.
func (c *Card) Remove(name string) {
	c.Props = removeIf(c.Props, func(p *Prop) bool { return p.Name == name })
}

// RemoveProp deletes one property (and the other lines of its group, such
// as item1.X-ABLabel for item1.TEL, when no other property uses it).
func (c *Card) RemoveProp(q *Prop) {
	c.Props = removeIf(c.Props, func(p *Prop) bool { return p == q })
	if q.Group == "" {
		return
	}
	for _, p := range c.Props {
		if strings.EqualFold(p.Group, q.Group) && !strings.HasPrefix(p.Name, "X-") {
			return
		}
	}
	c.Props = removeIf(c.Props, func(p *Prop) bool { return strings.EqualFold(p.Group, q.Group) })
}

func removeIf(ps []*Prop, f func(*Prop) bool) []*Prop {
	out := ps[:0]
	for _, p := range ps {
		if !f(p) {
			out = append(out, p)
		}
	}
	return out
}

// Set replaces the properties named name by one with the raw value (and
// params), at the place of the first one it replaces, or before the end.
func (c *Card) Set(name, params, value string) {
	np := &Prop{Name: name, Params: params, Value: value}
	for i, p := range c.Props {
		if p.Name == name {
			c.Props[i] = np
			rest := removeIf(c.Props[i+1:], func(p *Prop) bool { return p.Name == name })
			c.Props = append(c.Props[:i+1], rest...)
			return
		}
	}
	c.Props = append(c.Props, np)
}

// Add appends a property.
func (c *Card) Add(name, params, value string) {
	c.Props = append(c.Props, &Prop{Name: name, Params: params, Value: value})
}

// Escape escapes a text value (RFC 6350 §3.4): backslash, comma,
// semicolon, newline.
func Escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, ",", `\,`, ";", `\;`, "\r\n", `\n`, "\n", `\n`, "\r", `\n`).Replace(s)
}

// Unescape undoes Escape (and accepts "\N").
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n', 'N':
				b.WriteByte('\n')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// SplitValue splits a raw structured value at unescaped sep (";" for N
// and ADR components, "," for list values), unescaping each part.
func SplitValue(raw string, sep byte) []string {
	var out []string
	start := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case sep:
			out = append(out, Unescape(raw[start:i]))
			start = i + 1
		}
	}
	return append(out, Unescape(raw[start:]))
}

// Param returns the values of parameter name in the raw params (TYPE=a,b
// and TYPE=a;TYPE=b alike, upper-cased names compared; quotes removed),
// and the vCard 2.1 bare types ("TEL;CELL") as TYPE.
func Param(params, name string) []string {
	var out []string
	for _, part := range splitParams(params) {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			if name == "TYPE" && part != "" {
				out = append(out, part)
			}
			continue
		}
		if !strings.EqualFold(strings.TrimSpace(k), name) {
			continue
		}
		for _, x := range splitQuotedList(v) {
			out = append(out, strings.Trim(x, `"`))
		}
	}
	return out
}

func splitParams(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ';':
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if s != "" {
		out = append(out, s[start:])
	}
	return out
}

func splitQuotedList(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
