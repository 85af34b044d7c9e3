package addressbook

import (
	"context"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// BookSource is the Contacts service's accounts as a card source of the
// messages index's contact book (internal/service.CardSource): every card
// of every [[contacts.accounts]] entry joins the people the index
// resolves (phones folded by region, e-mails folded, by internal/contacts),
// so a card created or renamed through the tools — or in the folder by
// any program — names its conversations from the next reload of the
// book. The read policy is applied downstream by the book's consumers, as
// for every other source; group cards are not people and are left out.
type BookSource struct {
	Store *Store
}

// Key implements service.CardSource.
func (s BookSource) Key() string { return "contacts-accounts" }

// Contacts implements service.CardSource. A backend that cannot be read
// is skipped (its error returned only when nothing could be read).
func (s BookSource) Contacts(ctx context.Context) ([]model.Contact, error) {
	st := *s.Store
	st.Visible = nil // the book's consumers apply the policy per handle
	l, err := st.Load(ctx, nil)
	if err != nil {
		return nil, err
	}
	var out []model.Contact
	for _, e := range l.Entries {
		v := e.View
		if v.GroupKind != "" {
			continue
		}
		c := model.Contact{Source: "vcard", ID: e.ID(), First: v.Given, Last: v.Family, Nickname: v.Nickname, Organization: v.Org, FullName: v.FullName}
		for _, p := range v.Phones {
			c.Phones = append(c.Phones, p.Value)
		}
		for _, m := range v.Emails {
			c.Emails = append(c.Emails, m.Value)
		}
		if rev, err := time.Parse("20060102T150405Z", e.Card.Text("REV")); err == nil {
			c.Modified = rev
		} else if rev, err := time.Parse(time.RFC3339, e.Card.Text("REV")); err == nil {
			c.Modified = rev
		}
		out = append(out, c)
	}
	return out, nil
}

// Folders lists the folder accounts' directories: the files whose
// changes make the contact book reload.
func (s *Store) Folders() []string {
	var out []string
	for _, b := range s.Backends {
		if f, ok := b.(*Folder); ok {
			out = append(out, f.Dir())
		}
	}
	return out
}
