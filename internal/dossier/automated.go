package dossier

import (
	"strings"
	"unicode"

	"github.com/tidings-mcp/tidings/internal/triage"
)

// A machine's texts are no commitments: an appointment reminder, a courier's
// "we'll try again tomorrow" or a pharmacy's "pick up by Feb 9" are the
// sender's notices, and the owner's replies to them ("C", "can you leave it
// at the back door") reach nobody who will act (docs/dossier.md
// "Commitments"). A subject is a machine when one of its handles can only
// be a machine's (a short code, an alphanumeric id, a no-reply address), or
// when it sends a template text (triage.TemplateText) and is a business on
// its own evidence: the card names only a business, the number is
// toll-free, or the text is signed with the card's own name. A person who
// writes for a business ("Ray from Summit Plumbing") or a friend pasting a
// template is not one.

// machine reports whether m shows the subject to be a machine.
func (d *Dossier) machine(m *Message) bool {
	for _, h := range append([]string{m.Sender}, d.Subject.Handles...) {
		if h != "" && triage.MachineHandle(h, "") {
			return true
		}
	}
	if m.FromMe || !triage.TemplateText(m.Text) {
		return false
	}
	// A "Name: …" prefix alone is no proof: a person may write "Jamie Lee:
	// draft attached". Signed with the card's own name, the text must also
	// carry an automated sender's strong marks.
	return businessCard(d.Subject) || tollFree(m.Sender) || (signedBy(m.Text, d.Subject) && triage.AutomatedText(m.Text))
}

// businessCard reports whether a card names a business and no person: the
// name is the organisation (or a part of it), or there is no name with
// letters.
func businessCard(s Subject) bool {
	name, org := strings.ToLower(strings.TrimSpace(s.Name)), strings.ToLower(strings.TrimSpace(s.Organization))
	if !strings.ContainsFunc(name, unicode.IsLetter) {
		return true
	}
	return org != "" && (strings.HasPrefix(org, name) || strings.HasPrefix(name, org))
}

// tollFree reports whether a handle is a North American toll-free number,
// which businesses text from and people do not.
func tollFree(h string) bool {
	var digits strings.Builder
	for _, r := range h {
		if r >= '0' && r <= '9' {
			digits.WriteRune(r)
		}
	}
	d := strings.TrimPrefix(digits.String(), "1")
	if len(d) != 10 {
		return false
	}
	switch d[:3] {
	case "800", "833", "844", "855", "866", "877", "888":
		return true
	}
	return false
}

// signedBy reports whether a text opens with the card's own name or
// organisation as a sender tag ("Cedar Dental: …").
func signedBy(text string, s Subject) bool {
	tag, _, ok := strings.Cut(text, ":")
	if !ok || tag == "" {
		return false
	}
	tag = strings.ToLower(strings.TrimSpace(tag))
	for _, n := range append([]string{s.Name, s.Organization}, s.Names...) {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" && (strings.HasPrefix(n, tag) || strings.HasPrefix(tag, n)) {
			return true
		}
	}
	return false
}
