package triage

import "github.com/tidings-mcp/tidings/internal/contacts"

// TemplateText reports whether a text is written the way machines write:
// a strong automated phrase (a STOP footer, a keyword menu, a one-time
// code, a delivery or bank notice; docs/triage.md) or a "Brand: " sender
// tag. The dossier reads it to keep automated senders' texts out of the
// commitments (docs/dossier.md "Commitments"); one such text alone does
// not prove its sender a machine.
func TemplateText(text string) bool {
	f := analyze(text)
	return f.strongAuto || f.brand
}

// AutomatedText reports whether text carries the strong marks of an
// automated sender (opt-out lines, codes, links to a service), not only
// a brand-like "Name: ..." prefix, which a person may write too.
func AutomatedText(text string) bool { return analyze(text).strongAuto }

// MachineHandle reports whether a handle can only be a machine's: an SMS
// short code, an alphanumeric sender id or a no-reply address.
func MachineHandle(handle, region string) bool {
	_, kind := contacts.Normalize(handle, region)
	switch kind {
	case contacts.KindShortCode, contacts.KindAlnum:
		return true
	case contacts.KindEmail:
		return noReplyAddress(handle)
	}
	return false
}
