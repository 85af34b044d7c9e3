package addressbook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/policy"
)

// Store is every configured contacts account, with the read policy's
// question about people.
type Store struct {
	Backends []Backend
	// Region folds phone numbers without a country code (the shared
	// region setting), as the messages index does.
	Region string
	Now    func() time.Time
	// Visible reports whether the read policy lets a person with these
	// handles be seen (a blocked handle hides the person; in allowlist
	// mode an allowed handle is needed, as lookup_contacts decides). An
	// error hides everything (fail closed). Nil = everyone is visible.
	Visible func(handles []string) (bool, error)
}

// Entry is one card as read, with where it lives.
type Entry struct {
	Backend Backend
	Book    Book
	Object  Object
	Card    *Card
	View    Contact
	// InFile is the card's position in its object; a file holding
	// several cards is read but not written.
	InFile, OfFile int
}

// ID is what the tools name a card by: Account/UID (the UID, or for a
// card without one its file name), so the account — what the scope
// decides on — is read from the id before anything is looked up.
func (e Entry) ID() string {
	k := e.View.UID
	if k == "" {
		k = "file:" + e.Object.Href[strings.LastIndex(e.Object.Href, "/")+1:]
	}
	return e.Book.Account + "/" + k
}

// Loaded is what Load read.
type Loaded struct {
	Entries  []Entry
	Problems []string
}

// Backend returns the backend of an account.
func (s *Store) Backend(account string) (Backend, bool) {
	for _, b := range s.Backends {
		if b.Account() == account {
			return b, true
		}
	}
	return nil, false
}

// Load reads every card of the accounts (nil = all), hiding the cards of
// people the read policy hides: a card is hidden when any card sharing a
// phone or an address with it (the same person, merged as the messages
// index merges people) has a blocked handle. A backend that fails is
// named in Problems; when every backend fails the first error is
// returned, because an empty list would claim there is nothing.
func (s *Store) Load(ctx context.Context, accounts []string) (Loaded, error) {
	var out Loaded
	var firstErr error
	tried := 0
	for _, b := range s.Backends {
		if accounts != nil && !slices.Contains(accounts, b.Account()) {
			continue
		}
		tried++
		books, err := b.Books(ctx)
		if err == nil {
			for _, bk := range books {
				objs, oerr := b.Objects(ctx, bk)
				if oerr != nil {
					err = oerr
					break
				}
				for _, o := range objs {
					cards, perr := ParseCards(o.Data)
					if perr != nil && len(cards) == 0 {
						out.Problems = append(out.Problems, fmt.Sprintf("%s: %s: %v", b.Account(), o.Href, perr))
						continue
					}
					for i, c := range cards {
						out.Entries = append(out.Entries, Entry{Backend: b, Book: bk, Object: o, Card: c, View: c.View(), InFile: i, OfFile: len(cards)})
					}
				}
			}
		}
		if err != nil {
			out.Problems = append(out.Problems, err.Error())
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if tried > 0 && len(out.Problems) > 0 && len(out.Entries) == 0 && firstErr != nil {
		return out, firstErr
	}
	kept, err := s.visible(out.Entries)
	if err != nil {
		return Loaded{}, err
	}
	out.Entries = kept
	return out, nil
}

// visible applies the read policy per person.
func (s *Store) visible(es []Entry) ([]Entry, error) {
	if s.Visible == nil {
		return es, nil
	}
	cards := make([]model.Contact, 0, len(es))
	for i, e := range es {
		if e.View.GroupKind != "" {
			continue
		}
		var ph, em []string
		for _, p := range e.View.Phones {
			ph = append(ph, p.Value)
		}
		for _, m := range e.View.Emails {
			em = append(em, m.Value)
		}
		cards = append(cards, model.Contact{Source: "contacts-service", ID: fmt.Sprint(i), FullName: e.View.FullName, Phones: ph, Emails: em})
	}
	region := s.Region
	if !contacts.ValidRegion(region) {
		region = "US"
	}
	book, err := contacts.NewBook(cards, region)
	if err != nil {
		return nil, fmt.Errorf("merge the cards into people: %w", err)
	}
	hidden := map[string]bool{}
	for _, p := range book.People() {
		var hs []string
		for _, h := range p.Handles {
			hs = append(hs, h.Key)
		}
		ok, err := s.Visible(hs)
		if err != nil {
			return nil, fmt.Errorf("the read policy cannot be loaded, so no card is shown: %w", err)
		}
		if !ok {
			for _, c := range p.Cards {
				hidden[c.ID] = true
			}
		}
	}
	out := es[:0:0]
	for i, e := range es {
		if !hidden[fmt.Sprint(i)] {
			out = append(out, e)
		}
	}
	return out, nil
}

// PolicyVisible is the read policy of the Tidings home as Store.Visible:
// loaded on first use and reloaded when its files change; a person is
// hidden when a handle is blocked, and in allowlist mode unless one is
// allowed (the rule of lookup_contacts, internal/service/policy.go).
// A person without any phone or address is visible in blocklist mode
// only.
func PolicyVisible(home string, opts policy.Options) func([]string) (bool, error) {
	var mu sync.Mutex
	var st *policy.Store
	return func(handles []string) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if st == nil {
			s, err := policy.NewStore(home, opts)
			if err != nil {
				return false, err
			}
			st = s
		}
		p, err := st.Current()
		if err != nil {
			return false, err
		}
		p = p.WithPeople([][]string{handles})
		allowed := false
		for _, h := range handles {
			d := p.AllowHandle(h)
			if d.Reason == policy.ReasonBlocked {
				return false, nil
			}
			allowed = allowed || d.Allowed
		}
		return allowed || (len(handles) == 0 && p.Mode() == policy.ModeBlocklist), nil
	}
}

// errTooBig is returned for a card or group field past the tools' bound.
var errTooBig = errors.New("a field is too long: names, organisations and titles up to 1 KB, notes and addresses up to 8 KB")
