// Package addressbook is the Contacts service of seed 002 (docs/tools.md,
// "Contacts"): CardDAV accounts and local vCard folders
// ([[contacts.accounts]]) behind the small Backend interface, the
// raw-preserving vCard model of card.go, and the ten contacts_* tools of
// tools.go (toolset addressbook). The read sources of internal/contacts
// (AddressBook, iOS, vCard files) stay the messages index's read path;
// this package writes. Only the tool files import internal/mcpserver.
package addressbook

import (
	"context"
	"errors"
)

// Book is one address book (a CardDAV collection, or a folder).
type Book struct {
	// Account is the [[contacts.accounts]] name.
	Account string
	// Name is the book's display name (the server's, third-party text),
	// else the last segment of its path.
	Name string
	// Href identifies the book on its backend; opaque outside it.
	Href string
}

// Object is one stored resource: a .vcf file or a CardDAV address object.
type Object struct {
	Href string
	// ETag is the server's entity tag, or for a file the SHA-256 of its
	// bytes: what a write's If-Match compares.
	ETag string
	Data []byte
}

// Cond is the precondition of a write (RFC 7232): IfNoneMatch for a new
// resource (fail when the name is taken), IfMatch with the ETag the
// writer read (fail when someone changed it since): no lost updates.
type Cond struct {
	IfNoneMatch bool
	IfMatch     string
}

// ErrPrecondition is returned when a write's Cond failed (HTTP 412).
var ErrPrecondition = errors.New("the card changed (or already exists) since it was read; read it again with contacts_get and retry")

// ErrNotFound is returned for an object that is not there.
var ErrNotFound = errors.New("the card is no longer there")

// Backend is one contacts account.
type Backend interface {
	// Account is the configured name.
	Account() string
	// Kind is "carddav", "vcard-folder" or "mac-contacts".
	Kind() string
	// Books lists the account's address books.
	Books(ctx context.Context) ([]Book, error)
	// Objects returns every object of a book.
	Objects(ctx context.Context, b Book) ([]Object, error)
	// Get reads one object.
	Get(ctx context.Context, href string) (Object, error)
	// Put writes data as resource name (e.g. "<uid>.vcf") in b, or at
	// href when href is set (an existing object), under cond; it returns
	// the object's href.
	Put(ctx context.Context, b Book, name, href string, data []byte, cond Cond) (string, error)
	// Delete removes an object under If-Match etag.
	Delete(ctx context.Context, href, etag string) error
}
