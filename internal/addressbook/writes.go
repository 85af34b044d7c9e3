package addressbook

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/scope"
)

// Writes (docs/tools.md, "Contacts"): every one is refused under access =
// "read" (ReadOnly: No), writes with If-None-Match (create) or If-Match
// (the etag the caller read, else the one just read: no lost update),
// changes only the properties it names (card.go keeps the rest byte for
// byte) and reads back what it wrote.

type fieldsIn struct {
	Name       *string   `json:"name,omitempty" jsonschema:"full name"`
	GivenName  *string   `json:"given_name,omitempty"`
	FamilyName *string   `json:"family_name,omitempty"`
	Org        *string   `json:"org,omitempty"`
	Title      *string   `json:"title,omitempty"`
	Phones     *[]string `json:"phones,omitempty" jsonschema:"\"+49 30 1234567\" or \"mobile: …\"; replaces all"`
	Emails     *[]string `json:"emails,omitempty" jsonschema:"as phones"`
	Addresses  *[]string `json:"addresses,omitempty" jsonschema:"as phones, one line each"`
	Birthday   *string   `json:"birthday,omitempty" jsonschema:"YYYY-MM-DD"`
	Note       *string   `json:"note,omitempty"`
}

// toTyped reads "value" or "label: value" items (a label is one word or
// a few, before the first ": "; "mailto:" and "tel:" are no labels).
func toTyped(in *[]string) (*[]Typed, error) {
	if in == nil {
		return nil, nil
	}
	if len(*in) > 50 {
		return nil, errors.New("at most 50 phones, e-mails or addresses")
	}
	out := make([]Typed, 0, len(*in))
	for _, s := range *in {
		if len(s) > 8<<10 {
			return nil, errTooBig
		}
		t := Typed{Value: strings.TrimSpace(s)}
		if l, v, ok := strings.Cut(s, ": "); ok && len(l) <= 32 && !strings.ContainsAny(l, "@+0123456789") {
			t = Typed{Type: strings.TrimSpace(l), Value: strings.TrimSpace(v)}
		}
		out = append(out, t)
	}
	return &out, nil
}

func (in fieldsIn) fields() (Fields, error) {
	for _, s := range []*string{in.Name, in.GivenName, in.FamilyName, in.Org, in.Title, in.Birthday} {
		if s != nil && len(*s) > 1<<10 {
			return Fields{}, errTooBig
		}
	}
	if in.Note != nil && len(*in.Note) > 8<<10 {
		return Fields{}, errTooBig
	}
	f := Fields{FullName: in.Name, Given: in.GivenName, Family: in.FamilyName, Org: in.Org, Title: in.Title, Note: in.Note, Birthday: in.Birthday}
	var err error
	if f.Phones, err = toTyped(in.Phones); err != nil {
		return Fields{}, err
	}
	if f.Emails, err = toTyped(in.Emails); err != nil {
		return Fields{}, err
	}
	if f.Addresses, err = toTyped(in.Addresses); err != nil {
		return Fields{}, err
	}
	return f, nil
}

// policyAllows refuses a write that would put a person the read policy
// hides on a card (they would be invisible the moment it is written).
func (s *Store) policyAllows(v Contact) error {
	if s.Visible == nil || len(v.Handles()) == 0 {
		return nil
	}
	ok, err := s.Visible(v.Handles())
	if err != nil || !ok {
		return errors.New("a phone number or e-mail address of this card is blocked by the read policy (or the policy cannot be loaded): remove it")
	}
	return nil
}

// writeBack writes a changed card over its object under If-Match and
// reads it back.
func (s *Store) writeBack(ctx context.Context, e Entry, etag string) (Entry, error) {
	if e.OfFile > 1 {
		return Entry{}, fmt.Errorf("this card is one of %d in one file, which the tools do not rewrite: split the file into one card per .vcf", e.OfFile)
	}
	if etag != "" && etag != e.Object.ETag {
		return Entry{}, ErrPrecondition
	}
	href, err := e.Backend.Put(ctx, e.Book, "", e.Object.Href, e.Card.Encode(), Cond{IfMatch: e.Object.ETag})
	if err != nil {
		return Entry{}, err
	}
	return s.readBack(ctx, e.Backend, e.Book, href, e.View.UID)
}

func (s *Store) readBack(ctx context.Context, b Backend, bk Book, href, uid string) (Entry, error) {
	o, err := b.Get(ctx, href)
	if err != nil {
		return Entry{}, fmt.Errorf("the card was written but could not be read back: %w", err)
	}
	cards, err := ParseCards(o.Data)
	if err != nil || len(cards) != 1 || cards[0].UID() != uid {
		return Entry{}, errors.New("the card was written but reads back differently; check the address book")
	}
	return Entry{Backend: b, Book: bk, Object: o, Card: cards[0], View: cards[0].View(), OfFile: 1}, nil
}

// targetBook resolves where a new card or group goes: the explicit
// account (in scope) or the scope's single account, then the explicit
// address book or the account's only one. Two books answering to one
// name (or to none given) are refused, naming both.
func targetBook(ctx context.Context, st *Store, acct, book string) (Backend, Book, error) {
	accts, err := pickAccount(ctx, st, acct)
	if err != nil {
		return nil, Book{}, err
	}
	if len(accts) != 1 {
		names := make([]string, len(accts))
		for i, a := range accts {
			names[i] = fmt.Sprintf("%q", a)
		}
		return nil, Book{}, &scope.Error{Decision: scope.Choose, Message: "say which account to use: one of " + strings.Join(names, ", ")}
	}
	b, _ := st.Backend(accts[0])
	books, err := b.Books(ctx)
	if err != nil {
		return nil, Book{}, err
	}
	var hits []Book
	for _, bk := range books {
		if strings.TrimSpace(book) == "" || scope.Fold(bk.Name) == scope.Fold(strings.TrimSpace(book)) {
			hits = append(hits, bk)
		}
	}
	switch {
	case len(hits) == 1:
		return b, hits[0], nil
	case len(hits) == 0:
		return nil, Book{}, fmt.Errorf("account %s has no address book %s", output.Name(accts[0]), output.Name(book))
	case strings.TrimSpace(book) == "":
		return nil, Book{}, fmt.Errorf("account %s has several address books (%s and %s …): say which with address_book", output.Name(accts[0]), output.Name(hits[0].Name), output.Name(hits[1].Name))
	}
	return nil, Book{}, fmt.Errorf("two address books of %s are both named %s (%s and %s): rename one on the server", output.Name(accts[0]), output.Name(book), output.Name(hits[0].Href), output.Name(hits[1].Href))
}

type createIn struct {
	fieldsIn
	Account     string `json:"account,omitempty" jsonschema:"default: the only account in scope"`
	AddressBook string `json:"address_book,omitempty"`
	Group       string `json:"group,omitempty" jsonschema:"Account/Name: also add to this group"`
}

func createTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "contacts_create", Title: "Create a contact",
		Description: "Create a contact card (and optionally add it to a group), then read it back.",
		Toolset:     mcpserver.ToolsetAddressBook, Bridged: true, OutputSchema: cardSchema,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[createIn, cardResult] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in createIn) (*mcp.CallToolResult, cardResult, error) {
			f, err := in.fields()
			if err != nil {
				return nil, cardResult{}, err
			}
			if strings.TrimSpace(deref(f.FullName)+deref(f.Given)+deref(f.Family)+deref(f.Org)) == "" {
				return nil, cardResult{}, errors.New("give a name (or given_name, family_name or org)")
			}
			var group *Entry
			acct := in.Account
			if strings.TrimSpace(in.Group) != "" {
				g, _, err := findGroup(ctx, st, in.Group)
				if err != nil {
					return nil, cardResult{}, err
				}
				if acct != "" && scope.Fold(acct) != scope.Fold(g.Book.Account) {
					return nil, cardResult{}, errors.New("group must be in the account the card is created in")
				}
				group, acct = &g, g.Book.Account
			}
			b, bk, err := targetBook(ctx, st, acct, in.AddressBook)
			if err != nil {
				return nil, cardResult{}, err
			}
			if f.FullName == nil && f.Org != nil && f.Given == nil && f.Family == nil {
				f.FullName = f.Org
			}
			c := NewCard(false)
			c.Apply(f, st.Now())
			if err := st.policyAllows(c.View()); err != nil {
				return nil, cardResult{}, err
			}
			uid := c.UID()
			href, err := b.Put(ctx, bk, uid+".vcf", "", c.Encode(), Cond{IfNoneMatch: true})
			if err != nil {
				return nil, cardResult{}, err
			}
			if a, ok := b.(uidAssigner); ok {
				uid = a.UIDOf(href) // the backend named the new card itself
			}
			e, err := st.readBack(ctx, b, bk, href, uid)
			if err != nil {
				return nil, cardResult{}, err
			}
			var groups []string
			if group != nil {
				if group.Card.AddMember(uid) {
					if _, err := st.writeBack(ctx, *group, ""); err != nil {
						return nil, cardResult{}, fmt.Errorf("the card was created but not added to the group: %w", err)
					}
				}
				groups = []string{output.Name(group.Book.Account + "/" + group.View.FullName)}
			}
			return nil, cardResult{Contact: full(e, groups)}, nil
		}
	})
}

// uidAssigner is a backend that gives a new card its own UID (the Mac's
// Contacts app): the UID a create reads back is the one its href names.
type uidAssigner interface {
	UIDOf(href string) string
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

type updateIn struct {
	ID   string `json:"id" jsonschema:"contact id from contacts_search"`
	ETag string `json:"etag,omitempty" jsonschema:"etag from contacts_get: refuse if the card changed since"`
	fieldsIn
}

func updateTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "contacts_update", Title: "Update a contact",
		Description: "Change the given fields of a contact (lists replace; \"\" removes); every other field of the card is kept as it was. Reads it back.",
		Toolset:     mcpserver.ToolsetAddressBook, Bridged: true, OutputSchema: cardSchema,
		ReadOnly: mcpserver.No, Destructive: mcpserver.Yes, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[updateIn, cardResult] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in updateIn) (*mcp.CallToolResult, cardResult, error) {
			f, err := in.fields()
			if err != nil {
				return nil, cardResult{}, err
			}
			e, l, err := findCard(ctx, st, in.ID)
			if err != nil {
				return nil, cardResult{}, err
			}
			e.Card.Apply(f, st.Now())
			if err := st.policyAllows(e.Card.View()); err != nil {
				return nil, cardResult{}, err
			}
			back, err := st.writeBack(ctx, e, in.ETag)
			if err != nil {
				return nil, cardResult{}, err
			}
			groups, sr, err := groupRows(ctx, l)
			if err != nil {
				return nil, cardResult{}, err
			}
			return nil, cardResult{Contact: full(back, groupsOf(back, groups, sr))}, nil
		}
	})
}

type deleteIn struct {
	ID   string `json:"id" jsonschema:"contact id from contacts_search"`
	ETag string `json:"etag,omitempty" jsonschema:"etag from contacts_get: refuse if the card changed since"`
}

type deleteOut struct {
	Deleted string `json:"deleted"`
	// Groups are the groups in scope the card was removed from.
	Groups []string `json:"groups"`
	// Problems name groups that still list the deleted card.
	Problems []string `json:"problems,omitempty"`
}

func deleteTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "contacts_delete", Title: "Delete a contact",
		Description: "Delete a contact card; the groups that name it drop it in the same call.",
		Toolset:     mcpserver.ToolsetAddressBook, Bridged: true,
		OutputSchema: objSchema([]string{"deleted", "groups"}, map[string]*jsonschema.Schema{"deleted": {Type: "string"},
			"groups": {Type: "array", Description: "groups the card was removed from"}, "problems": {Type: "array", Description: "groups still naming it"}}),
		ReadOnly: mcpserver.No, Destructive: mcpserver.Yes, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[deleteIn, deleteOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in deleteIn) (*mcp.CallToolResult, deleteOut, error) {
			e, l, err := findCard(ctx, st, in.ID)
			if err != nil {
				return nil, deleteOut{}, err
			}
			if e.OfFile > 1 {
				return nil, deleteOut{}, fmt.Errorf("this card is one of %d in one file, which the tools do not rewrite", e.OfFile)
			}
			etag := e.Object.ETag
			if in.ETag != "" && in.ETag != etag {
				return nil, deleteOut{}, ErrPrecondition
			}
			if err := e.Backend.Delete(ctx, e.Object.Href, etag); err != nil {
				return nil, deleteOut{}, err
			}
			out := deleteOut{Deleted: output.Name(e.ID()), Groups: []string{}}
			out.Groups, out.Problems = st.dropFromGroups(ctx, e, l)
			return nil, out, nil
		}
	})
}

// dropFromGroups removes a deleted card's UID from every group of its
// account that names it, so no group keeps a dangling member
// (docs/tools.md, "Contacts"). Groups outside the client's contact_groups
// are cleaned too — deleting a card is bounded by contact_accounts, and
// the member it leaves behind points at nothing — but only the groups in
// scope are named: the result lists them, problems say which still name
// the card. Each group is rewritten under If-Match; one changed meanwhile
// is read again and retried once, never overwritten.
func (s *Store) dropFromGroups(ctx context.Context, card Entry, l Loaded) (changed, problems []string) {
	changed = []string{}
	uid := card.View.UID
	if uid == "" {
		return changed, nil // no group can name a card without a UID
	}
	groups, sr, err := groupRows(ctx, l)
	if err != nil {
		return changed, []string{"the groups naming the deleted card were not checked: " + err.Error()}
	}
	inScope := map[int]bool{}
	if idx, err := sr.Allowed(); err == nil {
		for _, i := range idx {
			inScope[i] = true
		}
	}
	for i, g := range groups {
		if g.Book.Account != card.Book.Account || !contains(g.View.MemberUIDs, uid) {
			continue
		}
		name := "a group outside this client's scope"
		if inScope[i] {
			name = "group " + output.Name(g.Book.Account+"/"+g.View.FullName)
		}
		if err := s.dropMember(ctx, g, uid); err != nil {
			problems = append(problems, fmt.Sprintf("%s still names the deleted card: %v", name, err))
			continue
		}
		if inScope[i] {
			changed = append(changed, output.Name(g.Book.Account+"/"+g.View.FullName))
		}
	}
	return changed, problems
}

// dropMember rewrites group g without member uid under If-Match and
// checks the read-back; a precondition failure (someone changed the group
// since it was read) re-reads it and tries once more.
func (s *Store) dropMember(ctx context.Context, g Entry, uid string) error {
	for attempt := 0; ; attempt++ {
		if !g.Card.RemoveMember(uid) {
			return nil // already gone (another client removed it)
		}
		back, err := s.writeBack(ctx, g, "")
		if errors.Is(err, ErrPrecondition) && attempt == 0 {
			if g, err = reread(ctx, g); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if contains(back.View.MemberUIDs, uid) {
			return errors.New("the group was written but reads back differently; check the address book")
		}
		return nil
	}
}

// reread reads an entry's object again (after a failed If-Match).
func reread(ctx context.Context, e Entry) (Entry, error) {
	o, err := e.Backend.Get(ctx, e.Object.Href)
	if err != nil {
		return Entry{}, err
	}
	cards, err := ParseCards(o.Data)
	if err != nil || len(cards) != 1 || cards[0].UID() != e.View.UID {
		return Entry{}, errors.New("the group changed into something else meanwhile; check the address book")
	}
	return Entry{Backend: e.Backend, Book: e.Book, Object: o, Card: cards[0], View: cards[0].View(), OfFile: 1}, nil
}

// ---- groups ----

// findGroup resolves a group path in scope (both contacts fields).
func findGroup(ctx context.Context, st *Store, path string) (Entry, Loaded, error) {
	accts, err := accounts(ctx, st)
	if err != nil {
		return Entry{}, Loaded{}, err
	}
	l, err := st.Load(ctx, accts)
	if err != nil {
		return Entry{}, Loaded{}, err
	}
	groups, sr, err := groupRows(ctx, l)
	if err != nil {
		return Entry{}, Loaded{}, err
	}
	i, err := resolveGroup(sr, path)
	if err != nil {
		return Entry{}, Loaded{}, err
	}
	return groups[i], l, nil
}

type groupOut struct {
	Path    string `json:"path"`
	Account string `json:"account"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Members int    `json:"members"`
}

func groupView(g Entry, l Loaded) groupOut {
	n := 0
	for _, e := range l.Entries {
		if e.View.GroupKind == "" && e.Book.Account == g.Book.Account && contains(g.View.MemberUIDs, e.View.UID) {
			n++ // visible members only: a hidden person is not counted
		}
	}
	return groupOut{Path: output.Name(g.Book.Account + "/" + g.View.FullName), Account: output.Name(g.Book.Account), Name: output.Name(g.View.FullName), Kind: g.View.GroupKind, Members: n}
}

type listGroupsIn struct {
	Account string `json:"account,omitempty"`
}

type listGroupsOut struct {
	Groups   []groupOut `json:"groups"`
	Problems []string   `json:"problems,omitempty"`
}

var groupSchema = objSchema([]string{"group"}, map[string]*jsonschema.Schema{"group": {Type: "object", Description: "path, account, name, kind, members"}})

func listGroupsTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "contacts_list_groups", Title: "List contact groups",
		Description: "List contact groups (vCard 4 KIND:group and Apple's). Each path (Account/Name) is what group arguments take.",
		Toolset:     mcpserver.ToolsetAddressBook, Bridged: true,
		OutputSchema: objSchema([]string{"groups"}, map[string]*jsonschema.Schema{"groups": {Type: "array", Description: "path, account, name, kind, members"}, "problems": {Type: "array"}}),
		ReadOnly:     mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[listGroupsIn, listGroupsOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in listGroupsIn) (*mcp.CallToolResult, listGroupsOut, error) {
			accts, err := pickAccount(ctx, st, in.Account)
			if err != nil {
				return nil, listGroupsOut{}, err
			}
			l, err := st.Load(ctx, accts)
			if err != nil {
				return nil, listGroupsOut{}, err
			}
			groups, sr, err := groupRows(ctx, l)
			if err != nil {
				return nil, listGroupsOut{}, err
			}
			idx, err := sr.Allowed()
			if err != nil {
				return nil, listGroupsOut{}, err
			}
			out := listGroupsOut{Groups: []groupOut{}}
			for _, i := range idx {
				out.Groups = append(out.Groups, groupView(groups[i], l))
			}
			for _, p := range l.Problems {
				out.Problems = append(out.Problems, output.Name(p))
			}
			return nil, out, nil
		}
	})
}

type createGroupIn struct {
	Name        string `json:"name"`
	Account     string `json:"account,omitempty" jsonschema:"default: the only account in scope"`
	AddressBook string `json:"address_book,omitempty"`
}

type groupResult struct {
	Group groupOut `json:"group"`
}

func createGroupTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "contacts_create_group", Title: "Create a contact group",
		Description: "Create an empty contact group. Refused while this client's scope names contact_groups.",
		Toolset:     mcpserver.ToolsetAddressBook, Bridged: true, OutputSchema: groupSchema,
		ReadOnly: mcpserver.No, Destructive: mcpserver.No, Idempotent: mcpserver.No, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[createGroupIn, groupResult] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in createGroupIn) (*mcp.CallToolResult, groupResult, error) {
			sc, err := scope.FromContext(ctx)
			if err != nil {
				return nil, groupResult{}, err
			}
			if _, inForce := sc.Values(scope.ContactGroups); inForce {
				// A group-confined profile may not make new groups: a
				// contact_groups value is matched whole and never split into
				// an account and a name to create, and a value naming no group
				// is a stale grant to surface, not to make real
				// (docs/security.md, "Contacts").
				return nil, groupResult{}, scope.Violationf("contacts_create_group is refused while contact_groups confines this client: ask the operator to create the group and add it to the profile")
			}
			name := strings.TrimSpace(in.Name)
			switch {
			case name == "":
				return nil, groupResult{}, errors.New("name is required")
			case len(name) > 1<<10:
				return nil, groupResult{}, errTooBig
			}
			b, bk, err := targetBook(ctx, st, in.Account, in.AddressBook)
			if err != nil {
				return nil, groupResult{}, err
			}
			l, err := st.Load(ctx, []string{b.Account()})
			if err != nil {
				return nil, groupResult{}, err
			}
			for _, e := range l.Entries {
				if e.View.GroupKind != "" && scope.Fold(e.View.FullName) == scope.Fold(name) {
					return nil, groupResult{}, fmt.Errorf("account %s already has a group %s", output.Name(b.Account()), output.Name(name))
				}
			}
			c := NewCard(true)
			c.Set("FN", "", Escape(name))
			c.Set("N", "", Escape(name)+";;;;")
			c.Set("REV", "", st.Now().UTC().Format("20060102T150405Z"))
			uid := c.UID()
			href, err := b.Put(ctx, bk, uid+".vcf", "", c.Encode(), Cond{IfNoneMatch: true})
			if err != nil {
				return nil, groupResult{}, err
			}
			e, err := st.readBack(ctx, b, bk, href, uid)
			if err != nil {
				return nil, groupResult{}, err
			}
			return nil, groupResult{Group: groupView(e, Loaded{})}, nil
		}
	})
}

type memberIn struct {
	ID    string `json:"id" jsonschema:"contact id from contacts_search"`
	Group string `json:"group" jsonschema:"Account/Name from contacts_list_groups"`
}

type memberOut struct {
	Group   groupOut `json:"group"`
	Contact string   `json:"contact"`
	Changed bool     `json:"changed"`
}

// memberTool is contacts_add_to_group (add) or contacts_remove_from_group.
// Both ends are checked: the card against contact_accounts, the group
// against both fields — a client that could add any card to a group it
// holds could read it through the group next.
func memberTool(st *Store, add bool) mcpserver.Tool {
	name, title, desc := "contacts_remove_from_group", "Remove a contact from a group", "Remove a contact from a contact group."
	if add {
		name, title, desc = "contacts_add_to_group", "Add a contact to a group", "Add a contact to a contact group of the same account."
	}
	destructive := mcpserver.Yes
	if add {
		destructive = mcpserver.No
	}
	return mcpserver.Define(mcpserver.Tool{
		Name: name, Title: title, Description: desc,
		Toolset: mcpserver.ToolsetAddressBook, Bridged: true,
		OutputSchema: objSchema([]string{"group", "contact", "changed"}, map[string]*jsonschema.Schema{
			"group": {Type: "object", Description: "path, account, name, kind, members"}, "contact": {Type: "string"}, "changed": {Type: "boolean"}}),
		ReadOnly: mcpserver.No, Destructive: destructive, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[memberIn, memberOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in memberIn) (*mcp.CallToolResult, memberOut, error) {
			card, _, err := findCard(ctx, st, in.ID)
			if err != nil {
				return nil, memberOut{}, err
			}
			g, l, err := findGroup(ctx, st, in.Group)
			if err != nil {
				return nil, memberOut{}, err
			}
			if g.Book.Account != card.Book.Account {
				return nil, memberOut{}, errors.New("the contact and the group are in different accounts; a group holds cards of its own account only")
			}
			if card.View.UID == "" {
				return nil, memberOut{}, errors.New("this card has no UID, so no group can name it")
			}
			var changed bool
			if add {
				changed = g.Card.AddMember(card.View.UID)
			} else {
				changed = g.Card.RemoveMember(card.View.UID)
			}
			if changed {
				back, err := st.writeBack(ctx, g, "")
				if err != nil {
					return nil, memberOut{}, err
				}
				if contains(back.View.MemberUIDs, card.View.UID) != add {
					return nil, memberOut{}, errors.New("the group was written but reads back differently; check the address book")
				}
				for i := range l.Entries {
					if l.Entries[i].ID() == g.ID() {
						l.Entries[i] = back
					}
				}
				g = back
			}
			return nil, memberOut{Group: groupView(g, l), Contact: output.Name(card.ID()), Changed: changed}, nil
		}
	})
}
