package addressbook

// macContactsWrites: on macOS, cards of the Mac's address book are written
// through Contacts.app (maccontacts.go).
const macContactsWrites = true
