package addressbook

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/account"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/policy/redact"
	"github.com/tidings-mcp/tidings/internal/scope"
)

// The Contacts service (docs/tools.md, "Contacts"): ten contacts_* tools
// over every [[contacts.accounts]] entry, in the addressbook toolset
// (the contacts toolset is lookup_contacts over the read sources). Its
// name is "contacts", the seed's service name and the config section
// ([contacts]) get_status and doctor key it by.

// body redacts notes with every class, as message bodies are.
var body = output.New(redact.Default())

var limitSpec = coerce.IntSpec{Name: "limit", Default: 50, Min: 1, Max: 200, Clamp: true}

// StoreFromConfig builds the store of cfg's [[contacts.accounts]];
// nothing is contacted and no secret read until a tool or check runs.
func StoreFromConfig(cfg *config.Config, now func() time.Time) (*Store, error) {
	s := &Store{Region: cfg.Region, Now: now}
	for _, a := range cfg.ContactAccounts {
		if a.Kind == config.KindMacContacts {
			root := a.Folder
			if root == "" {
				root = DefaultMacAddressBook()
			}
			s.Backends = append(s.Backends, NewMacContacts(a.Name, root))
			continue
		}
		if a.Folder != "" {
			s.Backends = append(s.Backends, NewFolder(a.Name, a.Folder))
			continue
		}
		src := account.PasswordSource{Account: fmt.Sprintf("contacts account %q", a.Name), Env: a.PasswordEnv, Cmd: a.PasswordCmd}
		var once sync.Once
		var secret account.Secret
		var perr error
		d, err := NewCardDAV(DAVConfig{Account: a.Name, URL: a.URL, Username: a.Username, CAFile: a.CAFile,
			Password: func(ctx context.Context) (account.Secret, error) {
				once.Do(func() { secret, perr = src.Resolve(ctx, account.Options{}) })
				return secret, perr
			}})
		if err != nil {
			return nil, err
		}
		s.Backends = append(s.Backends, d)
	}
	s.Visible = PolicyVisible(cfg.Home, policy.Options{HardenedAllowlist: cfg.HardenedAllowlist})
	return s, nil
}

// New builds the Contacts service.
func New(env *mcpserver.ServiceEnv) (mcpserver.Service, error) {
	st, err := StoreFromConfig(env.Config, env.Now)
	if err != nil {
		return mcpserver.Service{}, err
	}
	svc := ContactsService(st)
	if len(st.Backends) == 0 {
		svc.Unavailable = "no [[contacts.accounts]] in config.toml"
	}
	return svc, nil
}

// ContactsService is the Contacts service over st.
func ContactsService(st *Store) mcpserver.Service {
	return mcpserver.Service{
		Name:    "contacts",
		Default: len(st.Backends) > 0,
		Tools: []mcpserver.Tool{listAccountsTool(st), searchTool(st), getTool(st), createTool(st), updateTool(st), deleteTool(st),
			listGroupsTool(st), createGroupTool(st), memberTool(st, true), memberTool(st, false)},
		Checks: func(ctx context.Context) []mcpserver.CheckResult {
			var out []mcpserver.CheckResult
			for _, b := range st.Backends {
				cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
				_, err := b.Books(cctx)
				cancel()
				r := mcpserver.CheckResult{Name: fmt.Sprintf("contacts %s %q", b.Kind(), b.Account()), Status: "ok", Detail: "reachable, address books listed"}
				if err != nil {
					r.Status, r.Detail = "fail", err.Error()
					r.Fix = "check the url, username and password_env or password_cmd (or the folder) of this [[contacts.accounts]] entry in config.toml (docs/configuration.md, \"Contacts\")"
				}
				out = append(out, r)
			}
			return out
		},
		Status: func(context.Context) mcpserver.ServiceStatus {
			s := mcpserver.ServiceStatus{State: "ready"}
			for _, b := range st.Backends {
				detail := ""
				switch v := b.(type) {
				case *CardDAV:
					detail = v.Endpoint()
				case *Folder:
					detail = v.Dir()
				}
				s.Backends = append(s.Backends, mcpserver.BackendStatus{Name: b.Account(), Kind: b.Kind(), State: "unknown", Detail: detail})
			}
			return s
		},
		ScopeFields: []string{string(scope.ContactAccounts), string(scope.ContactGroups)},
	}
}

// ---- scope ----

// accounts returns the accounts the call's contact_accounts reaches.
func accounts(ctx context.Context, st *Store) ([]string, error) {
	sc, err := scope.FromContext(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]scope.Row, len(st.Backends))
	for i, b := range st.Backends {
		rows[i] = scope.Row{Account: b.Account(), ID: b.Account()}
	}
	sr := scope.ScopedRows{Rows: rows, Account: sc.Access(scope.ContactAccounts), Name: scope.Access{Field: scope.ContactGroups}, Noun: "contact account"}
	idx, err := sr.Allowed()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = rows[i].Account
	}
	return out, nil
}

// pickAccount checks an explicit account against the scope: outside it is
// a violation with one sentence whether or not the account exists.
func pickAccount(ctx context.Context, st *Store, name string) ([]string, error) {
	allowed, err := accounts(ctx, st)
	if err != nil || strings.TrimSpace(name) == "" {
		return allowed, err
	}
	for _, f := range output.NameForms(strings.TrimSpace(name)) {
		for _, a := range allowed {
			if scope.Fold(a) == scope.Fold(f) {
				return []string{a}, nil
			}
		}
	}
	sc, _ := scope.FromContext(ctx)
	if _, inForce := sc.Values(scope.ContactAccounts); inForce {
		return nil, scope.Violationf("contact account %s is outside this client's scope", output.Name(name))
	}
	return nil, &scope.Error{Decision: scope.NotFound, Message: fmt.Sprintf("there is no contacts account %s: contacts_list_accounts lists them", output.Name(name))}
}

// findCard resolves a card id (Account/UID) in scope: the account half is
// checked before anything is read, so an id outside the scope is refused
// with the same sentence whether or not the card exists.
func findCard(ctx context.Context, st *Store, id string) (Entry, Loaded, error) {
	id = strings.TrimSpace(id)
	acct, _, ok := strings.Cut(id, "/")
	if !ok || acct == "" {
		return Entry{}, Loaded{}, errors.New("id must be a contact id from contacts_search (Account/UID)")
	}
	accts, err := pickAccount(ctx, st, acct)
	if err != nil {
		if scope.IsViolation(err) {
			return Entry{}, Loaded{}, scope.Violationf("contact %s is outside this client's scope", output.Name(id))
		}
		return Entry{}, Loaded{}, err
	}
	l, err := st.Load(ctx, accts)
	if err != nil {
		return Entry{}, Loaded{}, err
	}
	for _, f := range output.NameForms(id) {
		for _, e := range l.Entries {
			if e.View.GroupKind == "" && scope.Fold(e.ID()) == scope.Fold(f) {
				return e, l, nil
			}
		}
	}
	return Entry{}, l, fmt.Errorf("there is no contact %s (contacts_search lists them)", output.Name(id))
}

// groupRows scopes the group cards of l by both contacts fields.
func groupRows(ctx context.Context, l Loaded) ([]Entry, scope.ScopedRows, error) {
	sc, err := scope.FromContext(ctx)
	if err != nil {
		return nil, scope.ScopedRows{}, err
	}
	var groups []Entry
	for _, e := range l.Entries {
		if e.View.GroupKind != "" {
			groups = append(groups, e)
		}
	}
	// By path, whatever order the server answered in.
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := scope.Fold(groups[i].Book.Account+"/"+groups[i].View.FullName), scope.Fold(groups[j].Book.Account+"/"+groups[j].View.FullName)
		if a != b {
			return a < b
		}
		return groups[i].ID() < groups[j].ID()
	})
	rows := make([]scope.Row, len(groups))
	for i, e := range groups {
		rows[i] = scope.Row{Account: e.Book.Account, Name: e.View.FullName, ID: e.ID()}
	}
	sr := sc.Rows(scope.Contacts, rows)
	sr.Noun = "contact group"
	return groups, sr, nil
}

// resolveGroup is ScopedRows.Resolve over the ways a name may be meant.
func resolveGroup(sr scope.ScopedRows, name string) (int, error) {
	var first error
	for _, f := range output.NameForms(strings.TrimSpace(name)) {
		i, err := sr.Resolve(f)
		if err == nil {
			return i, nil
		}
		if first == nil {
			first = err
		}
	}
	return -1, first
}

// groupsOf lists the in-scope groups a card is a member of.
func groupsOf(e Entry, groups []Entry, sr scope.ScopedRows) []string {
	allowed, err := sr.Allowed()
	if err != nil {
		return nil
	}
	out := []string{}
	for _, i := range allowed {
		g := groups[i]
		if g.Book.Account == e.Book.Account && e.View.UID != "" && contains(g.View.MemberUIDs, e.View.UID) {
			out = append(out, output.Name(g.Book.Account+"/"+g.View.FullName))
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ---- output ----

type cardSummary struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Org     string   `json:"org,omitempty"`
	Phones  []string `json:"phones,omitempty"`
	Emails  []string `json:"emails,omitempty"`
	Groups  []string `json:"groups,omitempty"`
	Account string   `json:"account"`
}

type typedOut struct {
	Type  string `json:"type,omitempty"`
	Value string `json:"value"`
}

type cardOut struct {
	ID          string     `json:"id"`
	ETag        string     `json:"etag"`
	Account     string     `json:"account"`
	AddressBook string     `json:"address_book"`
	Name        string     `json:"name"`
	GivenName   string     `json:"given_name,omitempty"`
	FamilyName  string     `json:"family_name,omitempty"`
	Nickname    string     `json:"nickname,omitempty"`
	Org         string     `json:"org,omitempty"`
	Title       string     `json:"title,omitempty"`
	Phones      []typedOut `json:"phones,omitempty"`
	Emails      []typedOut `json:"emails,omitempty"`
	Addresses   []typedOut `json:"addresses,omitempty"`
	URLs        []typedOut `json:"urls,omitempty"`
	Birthday    string     `json:"birthday,omitempty"`
	Note        string     `json:"note,omitempty"`
	Groups      []string   `json:"groups,omitempty"`
}

func typed(ts []Typed) []typedOut {
	var out []typedOut
	for _, t := range ts {
		out = append(out, typedOut{Type: output.Name(t.Type), Value: output.Name(t.Value)})
	}
	return out
}

func summary(e Entry, groups []string) cardSummary {
	v := e.View
	s := cardSummary{ID: output.Name(e.ID()), Name: output.Name(v.FullName), Org: output.Name(v.Org), Groups: groups, Account: output.Name(e.Book.Account)}
	for _, p := range v.Phones {
		s.Phones = append(s.Phones, output.Name(p.Value))
	}
	for _, m := range v.Emails {
		s.Emails = append(s.Emails, output.Name(m.Value))
	}
	return s
}

// full is a card as contacts_get shows it: every third-party string
// through internal/output, the note redacted and wrapped as untrusted.
func full(e Entry, groups []string) cardOut {
	v := e.View
	o := cardOut{ID: output.Name(e.ID()), ETag: output.Name(e.Object.ETag), Account: output.Name(e.Book.Account), AddressBook: output.Name(e.Book.Name),
		Name: output.Name(v.FullName), GivenName: output.Name(v.Given), FamilyName: output.Name(v.Family), Nickname: output.Name(v.Nickname),
		Org: output.Name(v.Org), Title: output.Name(v.Title), Phones: typed(v.Phones), Emails: typed(v.Emails), Addresses: typed(v.Addresses),
		URLs: typed(v.URLs), Birthday: output.Name(v.Birthday), Groups: groups}
	if strings.TrimSpace(v.Note) != "" {
		o.Note = output.Wrapped(body.Body(v.Note, nil))
	}
	return o
}

var (
	objSchema = func(req []string, props map[string]*jsonschema.Schema) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Required: req, Properties: props}
	}
	cardSchema = objSchema([]string{"contact"}, map[string]*jsonschema.Schema{"contact": {Type: "object",
		Description: "id, etag, account, address_book, name, given_name, family_name, nickname, org, title, phones, emails, addresses, urls ({type, value}), birthday, note, groups"}})
)

// ---- read tools ----

type accountOut struct {
	Name         string   `json:"name"`
	Kind         string   `json:"kind"`
	AddressBooks []string `json:"address_books"`
}

type listAccountsOut struct {
	Accounts []accountOut `json:"accounts"`
	Problems []string     `json:"problems,omitempty"`
}

func listAccountsTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "contacts_list_accounts", Title: "List contacts accounts",
		Description: "List the contacts accounts this client may reach (CardDAV or a vCard folder) and their address books.",
		Toolset:     mcpserver.ToolsetAddressBook, Bridged: true,
		OutputSchema: objSchema([]string{"accounts"}, map[string]*jsonschema.Schema{"accounts": {Type: "array", Description: "name, kind, address_books"}, "problems": {Type: "array"}}),
		ReadOnly:     mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[struct{}, listAccountsOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, listAccountsOut, error) {
			accts, err := accounts(ctx, st)
			if err != nil {
				return nil, listAccountsOut{}, err
			}
			out := listAccountsOut{Accounts: []accountOut{}}
			for _, a := range accts {
				b, _ := st.Backend(a)
				ao := accountOut{Name: output.Name(a), Kind: b.Kind(), AddressBooks: []string{}}
				books, err := b.Books(ctx)
				if err != nil {
					out.Problems = append(out.Problems, output.Name(err.Error()))
				}
				for _, bk := range books {
					ao.AddressBooks = append(ao.AddressBooks, output.Name(bk.Name))
				}
				out.Accounts = append(out.Accounts, ao)
			}
			return nil, out, nil
		}
	})
}

type searchIn struct {
	Query   string        `json:"query,omitempty" jsonschema:"part of a name, organisation, e-mail or phone number (default: every contact)"`
	Account string        `json:"account,omitempty"`
	Group   string        `json:"group,omitempty" jsonschema:"Account/Name from contacts_list_groups"`
	Limit   coerce.Number `json:"limit,omitzero" jsonschema:"1-200 (default 50)"`
	Cursor  string        `json:"cursor,omitempty"`
}

type searchOut struct {
	Contacts []cardSummary  `json:"contacts"`
	Page     mcpserver.Page `json:"page"`
	Problems []string       `json:"problems,omitempty"`
}

// matches reports whether a card matches a query: its names or
// organisation (folded), an e-mail (folded), or a phone number (the same
// number after the messages index's normalisation, or the digits typed).
func matches(v Contact, q, region string) bool {
	if q == "" {
		return true
	}
	fq := scope.Fold(q)
	for _, s := range []string{v.FullName, v.Given + " " + v.Family, v.Nickname, v.Org} {
		if strings.Contains(scope.Fold(s), fq) {
			return true
		}
	}
	for _, e := range v.Emails {
		if strings.Contains(scope.Fold(e.Value), fq) {
			return true
		}
	}
	qk, kind := contacts.Normalize(q, region)
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, q)
	for _, p := range v.Phones {
		pk, _ := contacts.Normalize(p.Value, region)
		if kind == contacts.KindPhone && (pk == qk || (len(digits) >= 10 && contacts.Last10(p.Value) == contacts.Last10(q))) {
			return true
		}
		pd := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, p.Value)
		if len(digits) >= 4 && strings.Contains(pd, digits) {
			return true
		}
	}
	return false
}

func searchTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "contacts_search", Title: "Search contacts",
		Description: "Find contacts by name, organisation, e-mail or phone number (any format), optionally in one account or group. Returns ids for contacts_get.",
		Toolset:     mcpserver.ToolsetAddressBook, Bridged: true,
		OutputSchema: objSchema([]string{"contacts", "page"}, map[string]*jsonschema.Schema{
			"contacts": {Type: "array", Description: "id, name, org, phones, emails, groups, account"}, "page": {Type: "object"}, "problems": {Type: "array"}}),
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[searchIn, searchOut] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
			limit, err := coerce.Int(in.Limit, limitSpec)
			if err != nil {
				return nil, searchOut{}, err
			}
			offset := 0
			if c := strings.TrimSpace(in.Cursor); c != "" {
				if offset, err = strconv.Atoi(c); err != nil || offset < 0 {
					return nil, searchOut{}, errors.New("cursor must be the next_cursor of a previous page")
				}
			}
			if len(in.Query) > 200 {
				return nil, searchOut{}, errors.New("query is longer than 200 characters")
			}
			accts, err := pickAccount(ctx, st, in.Account)
			if err != nil {
				return nil, searchOut{}, err
			}
			l, err := st.Load(ctx, accts)
			if err != nil {
				return nil, searchOut{}, err
			}
			groups, sr, err := groupRows(ctx, l)
			if err != nil {
				return nil, searchOut{}, err
			}
			var only *Entry
			if strings.TrimSpace(in.Group) != "" {
				i, err := resolveGroup(sr, in.Group)
				if err != nil {
					return nil, searchOut{}, err
				}
				only = &groups[i]
			}
			var hits []Entry
			q := strings.TrimSpace(in.Query)
			for _, e := range l.Entries {
				if e.View.GroupKind != "" || !matches(e.View, q, st.Region) {
					continue
				}
				if only != nil && (only.Book.Account != e.Book.Account || !contains(only.View.MemberUIDs, e.View.UID)) {
					continue
				}
				hits = append(hits, e)
			}
			sort.SliceStable(hits, func(i, j int) bool {
				a, b := scope.Fold(hits[i].View.FullName), scope.Fold(hits[j].View.FullName)
				if a != b {
					return a < b
				}
				return hits[i].ID() < hits[j].ID()
			})
			out := searchOut{Contacts: []cardSummary{}}
			for _, p := range l.Problems {
				out.Problems = append(out.Problems, output.Name(p))
			}
			rest := hits[min(offset, len(hits)):]
			for _, e := range rest[:min(limit, len(rest))] {
				out.Contacts = append(out.Contacts, summary(e, groupsOf(e, groups, sr)))
			}
			kept, page, err := mcpserver.Cut(out.Contacts, 512, func(n int) string { return strconv.Itoa(offset + n) })
			if err != nil {
				return nil, searchOut{}, err
			}
			if len(kept) == len(out.Contacts) && len(rest) > limit {
				page.Truncated, page.NextCursor = true, strconv.Itoa(offset+limit)
				page.Note = fmt.Sprintf("showing %d of %d contacts; pass next_cursor to continue", limit, len(rest))
			}
			out.Contacts, out.Page = kept, page
			return nil, out, nil
		}
	})
}

type idIn struct {
	ID string `json:"id" jsonschema:"contact id from contacts_search"`
}

type cardResult struct {
	Contact cardOut `json:"contact"`
}

func getTool(st *Store) mcpserver.Tool {
	return mcpserver.Define(mcpserver.Tool{
		Name: "contacts_get", Title: "Get a contact",
		Description: "One contact's full card: names, phones, e-mails, addresses, note, groups, and the etag contacts_update and contacts_delete take.",
		Toolset:     mcpserver.ToolsetAddressBook, Bridged: true, OutputSchema: cardSchema,
		ReadOnly: mcpserver.Yes, Destructive: mcpserver.No, Idempotent: mcpserver.Yes, OpenWorld: mcpserver.No,
	}, func(*mcpserver.Deps) mcp.ToolHandlerFor[idIn, cardResult] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, cardResult, error) {
			e, l, err := findCard(ctx, st, in.ID)
			if err != nil {
				return nil, cardResult{}, err
			}
			groups, sr, err := groupRows(ctx, l)
			if err != nil {
				return nil, cardResult{}, err
			}
			return nil, cardResult{Contact: full(e, groupsOf(e, groups, sr))}, nil
		}
	})
}
