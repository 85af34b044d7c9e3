//go:build !darwin

package addressbook

// macContactsWrites: off macOS there is no Contacts.app to write through;
// a copied AddressBook store is read-only.
const macContactsWrites = false
