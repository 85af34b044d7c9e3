// Package contacts reads address books and resolves message handles to
// people.
//
// Sources are the macOS AddressBook (every AddressBook-v22.abcddb under
// ~/Library/Application Support/AddressBook), the iOS AddressBook.sqlitedb
// (from a device backup) and vCard 2.1/3.0/4.0 files. Readers return
// model.Contact values exactly as the source stores them and never write to
// the files they read (SQLite databases are opened with mode=ro).
//
// Handles are normalised with libphonenumber (github.com/nyaruka/phonenumbers)
// against a configurable default region, so a French "06 12 34 56 78" becomes
// +33612345678 when the region is FR and a number typed with its country code
// keeps it. A Book merges cards that share a handle into one Person, picks the
// name of the most recently modified card, and answers the two questions the
// tools ask: "who is this handle?" (Resolve) and "which people match this
// name?" (Lookup, at most 25 candidates, ambiguity reported, never guessed).
//
// The package imports neither the MCP SDK nor the index; see docs/contacts.md.
package contacts
