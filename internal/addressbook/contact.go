package addressbook

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Group kinds: RFC 6350's KIND:group with MEMBER, and Apple's vCard 3
// extension X-ADDRESSBOOKSERVER-KIND:group with X-ADDRESSBOOKSERVER-MEMBER
// (what Contacts.app and iCloud write). Both carry members as
// urn:uuid:<UID of the member card>.
const (
	KindVCard4 = "vcard4"
	KindApple  = "apple"
)

const (
	propKind        = "KIND"
	propMember      = "MEMBER"
	propAppleKind   = "X-ADDRESSBOOKSERVER-KIND"
	propAppleMember = "X-ADDRESSBOOKSERVER-MEMBER"
)

// GroupKind returns the card's group kind, or "" for an individual.
func (c *Card) GroupKind() string {
	switch {
	case strings.EqualFold(strings.TrimSpace(c.Raw(propKind)), "group"):
		return KindVCard4
	case strings.EqualFold(strings.TrimSpace(c.Raw(propAppleKind)), "group"):
		return KindApple
	}
	return ""
}

func memberProp(kind string) string {
	if kind == KindApple {
		return propAppleMember
	}
	return propMember
}

// Members returns the UIDs a group card names (urn:uuid: stripped; any
// other URI kept as written).
func (c *Card) Members() []string {
	var out []string
	for _, p := range c.All(memberProp(c.GroupKind())) {
		out = append(out, memberUID(p.Value))
	}
	return out
}

func memberUID(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 9 && strings.EqualFold(v[:9], "urn:uuid:") {
		return v[9:]
	}
	return v
}

// AddMember adds uid to a group card; false when it is already there.
func (c *Card) AddMember(uid string) bool {
	if slices.Contains(c.Members(), uid) {
		return false
	}
	c.Add(memberProp(c.GroupKind()), "", "urn:uuid:"+uid)
	return true
}

// RemoveMember removes uid from a group card; false when it was absent.
func (c *Card) RemoveMember(uid string) bool {
	found := false
	for _, p := range c.All(memberProp(c.GroupKind())) {
		if memberUID(p.Value) == uid {
			c.RemoveProp(p)
			found = true
		}
	}
	return found
}

// UID is the card's UID (urn:uuid: stripped).
func (c *Card) UID() string { return memberUID(c.Text("UID")) }

// Typed is a phone, e-mail, address or URL with its TYPE labels.
type Typed struct {
	Type  string `json:"type,omitempty"`
	Value string `json:"value"`
}

// Contact is what the tools read from a card; the card itself keeps
// everything else.
type Contact struct {
	UID        string
	FullName   string
	Given      string
	Family     string
	Nickname   string
	Org        string
	Title      string
	Phones     []Typed
	Emails     []Typed
	Addresses  []Typed
	URLs       []Typed
	Birthday   string
	Note       string
	GroupKind  string
	MemberUIDs []string
}

// View reads the fields the tools show.
func (c *Card) View() Contact {
	v := Contact{UID: c.UID(), FullName: c.Text("FN"), Nickname: c.Text("NICKNAME"),
		Title: c.Text("TITLE"), Birthday: c.Text("BDAY"), Note: c.Text("NOTE"), GroupKind: c.GroupKind()}
	if n := c.Raw("N"); n != "" {
		parts := SplitValue(n, ';')
		v.Family = strings.TrimSpace(at(parts, 0))
		v.Given = strings.TrimSpace(at(parts, 1))
	}
	if o := c.Raw("ORG"); o != "" {
		var keep []string
		for _, s := range SplitValue(o, ';') {
			if s = strings.TrimSpace(s); s != "" {
				keep = append(keep, s)
			}
		}
		v.Org = strings.Join(keep, ", ")
	}
	if v.FullName == "" {
		v.FullName = strings.TrimSpace(v.Given + " " + v.Family)
	}
	for _, p := range c.All("TEL") {
		v.Phones = append(v.Phones, Typed{Type: c.label(p), Value: strings.TrimPrefix(Unescape(p.Value), "tel:")})
	}
	for _, p := range c.All("EMAIL") {
		v.Emails = append(v.Emails, Typed{Type: c.label(p), Value: strings.TrimPrefix(Unescape(p.Value), "mailto:")})
	}
	for _, p := range c.All("ADR") {
		var keep []string
		for _, s := range SplitValue(p.Value, ';') {
			if s = strings.TrimSpace(s); s != "" {
				keep = append(keep, s)
			}
		}
		v.Addresses = append(v.Addresses, Typed{Type: c.label(p), Value: strings.Join(keep, ", ")})
	}
	for _, p := range c.All("URL") {
		v.URLs = append(v.URLs, Typed{Type: c.label(p), Value: Unescape(p.Value)})
	}
	if v.GroupKind != "" {
		v.MemberUIDs = c.Members()
	}
	return v
}

// label is a property's kind: its X-ABLabel (Apple's item1.X-ABLabel),
// else its TYPE values other than the generic ones, lower-cased.
func (c *Card) label(p *Prop) string {
	if p.Group != "" {
		for _, q := range c.Props {
			if q.Name == "X-ABLABEL" && strings.EqualFold(q.Group, p.Group) {
				l := Unescape(q.Value)
				if strings.HasPrefix(l, "_$!<") && strings.HasSuffix(l, ">!$_") {
					l = l[4 : len(l)-4]
				}
				return strings.ToLower(l)
			}
		}
	}
	var out []string
	for _, t := range Param(p.Params, "TYPE") {
		switch t = strings.ToLower(t); t {
		case "voice", "internet", "pref", "x400":
		default:
			out = append(out, t)
		}
	}
	return strings.Join(out, ",")
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// Handles are the card's phones and e-mail addresses, as the read policy
// and the people of the messages index match them.
func (v Contact) Handles() []string {
	var out []string
	for _, p := range v.Phones {
		out = append(out, p.Value)
	}
	for _, e := range v.Emails {
		out = append(out, e.Value)
	}
	return out
}

// Fields is what a create or an update sets; nil leaves a field as it is,
// a pointer to "" (or an empty list) removes it.
type Fields struct {
	FullName  *string
	Given     *string
	Family    *string
	Org       *string
	Title     *string
	Note      *string
	Birthday  *string
	Phones    *[]Typed
	Emails    *[]Typed
	Addresses *[]Typed
}

// Apply writes f into the card: only the properties f names are touched,
// everything else keeps its bytes. N is kept consistent with FN (vCard 3
// requires N).
func (c *Card) Apply(f Fields, now time.Time) {
	setText := func(name string, v *string) {
		if v == nil {
			return
		}
		if strings.TrimSpace(*v) == "" {
			c.Remove(name)
			return
		}
		c.Set(name, "", Escape(strings.TrimSpace(*v)))
	}
	setText("FN", f.FullName)
	setText("ORG", f.Org)
	setText("TITLE", f.Title)
	setText("NOTE", f.Note)
	setText("BDAY", f.Birthday)
	if f.FullName != nil && f.Given == nil && f.Family == nil && strings.TrimSpace(*f.FullName) != "" && c.GroupKind() == "" {
		// A new full name without its parts: N follows it (last word as
		// the family name), so the two never name two people.
		words := strings.Fields(*f.FullName)
		family, given := words[len(words)-1], strings.Join(words[:len(words)-1], " ")
		f.Given, f.Family = &given, &family
	}
	if f.Given != nil || f.Family != nil {
		parts := SplitValue(c.Raw("N"), ';')
		for len(parts) < 5 {
			parts = append(parts, "")
		}
		if f.Family != nil {
			parts[0] = strings.TrimSpace(*f.Family)
		}
		if f.Given != nil {
			parts[1] = strings.TrimSpace(*f.Given)
		}
		esc := make([]string, len(parts))
		for i, s := range parts {
			esc[i] = Escape(s)
		}
		c.Set("N", "", strings.Join(esc, ";"))
	}
	if c.Raw("N") == "" && c.GroupKind() == "" {
		c.Set("N", "", Escape(c.Text("FN"))+";;;;")
	}
	if c.Text("FN") == "" {
		v := c.View()
		c.Set("FN", "", Escape(strings.TrimSpace(v.Given+" "+v.Family)))
	}
	c.setTyped("TEL", f.Phones)
	c.setTyped("EMAIL", f.Emails)
	c.setTyped("ADR", f.Addresses)
	c.Set("REV", "", now.UTC().Format("20060102T150405Z"))
}

// setTyped replaces every property name by the list (nil: untouched).
// An ADR value is one line of text, put in the street component.
func (c *Card) setTyped(name string, list *[]Typed) {
	if list == nil {
		return
	}
	for _, p := range c.All(name) {
		c.RemoveProp(p)
	}
	for _, t := range *list {
		v := strings.TrimSpace(t.Value)
		if v == "" {
			continue
		}
		params := ""
		if ty := strings.TrimSpace(t.Type); ty != "" {
			params = "TYPE=" + paramValue(ty)
		}
		if name == "ADR" {
			v = ";;" + Escape(v) + ";;;;"
		} else {
			v = Escape(v)
		}
		c.Add(name, params, v)
	}
}

// paramValue quotes a parameter value holding ":", ";" or "," (RFC 6350
// §5), dropping characters a parameter cannot hold.
func paramValue(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '"' || r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if strings.ContainsAny(s, ":;,") {
		return `"` + s + `"`
	}
	return s
}

// NewCard starts a card: vCard 3.0 (what Contacts.app, iCloud and most
// CardDAV clients read), a fresh UID, PRODID. A group uses Apple's
// X-ADDRESSBOOKSERVER-KIND, which vCard 3 clients understand.
func NewCard(group bool) *Card {
	c := &Card{}
	c.Add("VERSION", "", "3.0")
	c.Add("PRODID", "", "-//Tidings//Contacts//EN")
	c.Add("UID", "", NewUID())
	if group {
		c.Add(propAppleKind, "", "group")
	}
	return c
}

// NewUID returns a random UUID (RFC 9562 version 4), the form MEMBER's
// urn:uuid: takes.
func NewUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
