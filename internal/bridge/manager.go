package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/output"
)

// ManagerBackend serves a manager bridge: list_chats from the messages
// database and an unfiltered contacts_lookup (role table in docs/bridge.md,
// "Roles": the manager sees the threads a policy will be written about).
// It has no body-returning action; the worker would refuse those anyway.
type ManagerBackend struct {
	Unsupported
	// Chats is the messages database; nil means none is configured.
	Chats *ChatDB
	// Names resolves handles for labels; nil shows handles.
	Names NameResolver
	// Contacts answers contacts_lookup; nil means no contacts source.
	Contacts *contacts.Book
	// Now is the clock for the list_chats window; Location the zone of
	// last_activity_date (default: local time).
	Now      func() time.Time
	Location *time.Location
}

// ListChats implements Backend.
func (m *ManagerBackend) ListChats(ctx context.Context, p ListChatsParams) (ListChatsResult, error) {
	if m.Chats == nil {
		return ListChatsResult{}, fmt.Errorf("list_chats: %w", ErrNoDatabase)
	}
	now := time.Now
	if m.Now != nil {
		now = m.Now
	}
	names := m.Names
	if names == nil && m.Contacts != nil {
		names = m.Contacts
	}
	return m.Chats.ListChats(ctx, p, now(), names, m.Location)
}

// ContactsLookup implements Backend without a read-policy filter (a host
// backend filters).
func (m *ManagerBackend) ContactsLookup(ctx context.Context, p ContactsLookupParams) (ContactsLookupResult, error) {
	if m.Contacts == nil {
		return ContactsLookupResult{}, fmt.Errorf("contacts_lookup: no contacts source is configured (set --contacts): %w", ErrUnavailable)
	}
	return LookupContacts(m.Contacts, p.Name, nil)
}

// LookupContacts answers contacts_lookup from a contacts book: at most 25
// matches, each with phone_last10 or email. keep filters people before
// the cut (the read policy on a host bridge); nil keeps everyone.
func LookupContacts(b *contacts.Book, name string, keep func(contacts.Person) bool) (ContactsLookupResult, error) {
	res := ContactsLookupResult{Query: output.Name(name), Matches: []ContactMatch{}}
	lr, err := b.Lookup(name, keep)
	if forms := output.NameForms(name); err == nil && len(lr.Matches) == 0 && len(forms) > 1 {
		// The escaped form of a name an answer showed (output.Name).
		lr, err = b.Lookup(forms[1], keep)
	}
	if err != nil && !errors.Is(err, contacts.ErrNoMatch) {
		return res, &RequestError{Code: CodeInvalidParams, Msg: err.Error()}
	}
	// Names leave through output.Name, the one treatment of a string a
	// third party controls (docs/security.md, "Names").
	for _, m := range lr.Matches {
		res.Matches = append(res.Matches, ContactMatch{Name: output.Name(m.Name), PhoneLast10: output.Name(m.Phone10), Email: output.Name(m.Email)})
	}
	res.MatchCount = len(res.Matches)
	return res, nil
}

// Close closes the messages database.
func (m *ManagerBackend) Close() error {
	if m.Chats != nil {
		return m.Chats.Close()
	}
	return nil
}
