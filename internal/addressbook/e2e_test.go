package addressbook

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// The card set of testdata/cards (docs/tools.md, "Contacts"): Ana Lima
// (vCard 3, Brazilian mobile, an Apple item1 label, a photo, X- fields,
// in both groups), a duplicate of her number typed another way, Kenji
// Sato (vCard 4, Japanese number as a tel: URI, a data: URI photo, a
// prompt injection in his note), Quokka Zanzisentinel (blocked by the
// read policy in most tests), Family (Apple's group kind) and Work
// (vCard 4 KIND:group).
const (
	anaUID   = "6f1c2a9e-0001-4d2b-9a11-ana000000001"
	kenjiUID = "6f1c2a9e-0003-4d2b-9a11-kenji0000003"
	zanziUID = "6f1c2a9e-0004-4d2b-9a11-zanzi0000004"
)

// cardFiles returns the test card set, file name → bytes.
func cardFiles(t *testing.T) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir("testdata/cards")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata/cards", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// folderWithCards copies the card set into a temp folder.
func folderWithCards(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for n, b := range cardFiles(t) {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// policyHome is a Tidings home whose read policy blocks Zanzi's mobile
// number (only: the person's e-mail is hidden with it, as one person).
func policyHome(t *testing.T, block bool) string {
	t.Helper()
	home := t.TempDir()
	if block {
		if err := os.MkdirAll(filepath.Join(home, policy.ContactsDir), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, policy.ContactsDir, policy.BlockedFile), []byte("+44 7700 900123\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

func testStore(home string, backends ...Backend) *Store {
	return &Store{Backends: backends, Region: "DE", Now: testclock.Anchor, Visible: PolicyVisible(home, policy.Options{})}
}

// clients starts one server of the service and connects go-sdk clients
// over stdio and over HTTP.
func clients(t *testing.T, p *mcpserver.Profile, svc mcpserver.Service) map[string]*mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test", Profile: p}, mcpserver.Filters{Toolsets: []string{"addressbook"}, Profile: p}, svc)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		_ = mcpserver.ServeStdio(ctx, srv.SDK, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close() })
	ts := httptest.NewServer(mcpserver.NewHTTPHandler(srv.SDK, mcpserver.HTTPOptions{}))
	t.Cleanup(ts.Close)
	out := map[string]*mcp.ClientSession{}
	for name, tr := range map[string]mcp.Transport{
		"stdio": &mcp.IOTransport{Reader: outR, Writer: inW},
		"http":  &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"},
	} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "contacts-test", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		out[name] = cs
	}
	return out
}

// call runs a tool and decodes its structured result into out; it
// returns the isError text ("" on success), the result's _meta and the
// whole result as JSON (for sentinel scans).
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) (string, map[string]any, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	all, _ := json.Marshal(res)
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return strings.Join(text, " "), res.Meta, string(all)
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, b, err)
		}
	}
	return "", res.Meta, string(all)
}

func ok(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	if msg, _, _ := call(t, cs, name, args, out); msg != "" {
		t.Fatalf("%s %v: %s", name, args, msg)
	}
}

type searchResult struct {
	Contacts []cardSummary `json:"contacts"`
}

func names(cs []cardSummary) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// exerciseAllTen runs every tool against an account holding the card set
// (with Zanzi blocked) through one client: the duplicates found by one
// number in another format, the card in two groups of both kinds, the
// injection wrapped, the blocked person nowhere, and every write read
// back with If-Match protecting it.
func exerciseAllTen(t *testing.T, cs *mcp.ClientSession, acct, kind string) {
	t.Helper()
	var accts listAccountsOut
	ok(t, cs, "contacts_list_accounts", nil, &accts)
	if len(accts.Accounts) != 1 || accts.Accounts[0].Name != acct || accts.Accounts[0].Kind != kind || len(accts.Accounts[0].AddressBooks) != 1 {
		t.Fatalf("accounts: %+v", accts)
	}

	var found searchResult
	ok(t, cs, "contacts_search", map[string]any{"query": "0055 11 912345678"}, &found)
	if got := names(found.Contacts); !slices.Equal(got, []string{"Ana Lima", "Ana Paula Lima"}) {
		t.Errorf("one number in another format finds both duplicates: %q", got)
	}
	ok(t, cs, "contacts_search", map[string]any{"query": "+81 3 1234 5678"}, &found)
	if got := names(found.Contacts); !slices.Equal(got, []string{"Kenji Sato"}) {
		t.Errorf("a Japanese tel: URI by its number: %q", got)
	}
	ok(t, cs, "contacts_search", map[string]any{"query": "sao paulo"}, &found) // an address is not searched
	ok(t, cs, "contacts_search", nil, &found)
	if got := names(found.Contacts); !slices.Equal(got, []string{"Ana Lima", "Ana Paula Lima", "Kenji Sato"}) {
		t.Errorf("every visible card (no groups, no blocked person): %q", got)
	}
	ok(t, cs, "contacts_search", map[string]any{"group": acct + "/Work"}, &found)
	if got := names(found.Contacts); !slices.Equal(got, []string{"Ana Lima", "Kenji Sato"}) {
		t.Errorf("members of Work: %q", got)
	}

	anaID := acct + "/" + anaUID
	var got cardResult
	ok(t, cs, "contacts_get", map[string]any{"id": anaID}, &got)
	c := got.Contact
	if c.Name != "Ana Lima" || c.Org != "Lima &amp; Filhos, Export" || !slices.Equal(c.Groups, []string{acct + "/Family", acct + "/Work"}) ||
		len(c.Phones) != 1 || c.Phones[0].Type != "mobile" || len(c.Addresses) != 1 || !strings.Contains(c.Addresses[0].Value, "São Paulo") {
		t.Errorf("ana: %+v", c)
	}
	ok(t, cs, "contacts_get", map[string]any{"id": acct + "/" + kenjiUID}, &got)
	if n := got.Contact.Note; !strings.HasPrefix(n, "<untrusted_external_content>") || strings.Count(n, "</untrusted_external_content>") != 1 || strings.Contains(n, "<system>") {
		t.Errorf("the note's injection is not neutralised inside the wrapper: %q", n)
	}

	var groups listGroupsOut
	ok(t, cs, "contacts_list_groups", nil, &groups)
	want := map[string]groupOut{
		acct + "/Family": {Path: acct + "/Family", Account: acct, Name: "Family", Kind: KindApple, Members: 1}, // Zanzi is not counted
		acct + "/Work":   {Path: acct + "/Work", Account: acct, Name: "Work", Kind: KindVCard4, Members: 2},
	}
	if len(groups.Groups) != 2 || groups.Groups[0] != want[groups.Groups[0].Path] || groups.Groups[1] != want[groups.Groups[1].Path] {
		t.Errorf("groups: %+v", groups.Groups)
	}

	// Create into a group, read back.
	ok(t, cs, "contacts_create", map[string]any{"name": "Lena Fischer", "phones": []string{"mobile: 030 1234567"}, "emails": []string{"lena@example.de"},
		"note": "met in Berlin", "group": acct + "/Work"}, &got)
	lena := got.Contact
	if lena.Name != "Lena Fischer" || len(lena.Phones) != 1 || lena.Phones[0].Type != "mobile" || !slices.Equal(lena.Groups, []string{acct + "/Work"}) || lena.ETag == "" {
		t.Fatalf("created: %+v", lena)
	}
	ok(t, cs, "contacts_search", map[string]any{"query": "+49 30 1234567"}, &found) // DE region folds the national number
	if got := names(found.Contacts); !slices.Equal(got, []string{"Lena Fischer"}) {
		t.Errorf("the new card by its international number: %q", got)
	}
	// Refused: a create putting a blocked number on a card.
	if msg, _, _ := call(t, cs, "contacts_create", map[string]any{"name": "X", "phones": []string{"+44 7700 900123"}}, nil); !strings.Contains(msg, "blocked by the read policy") {
		t.Errorf("create with a blocked number: %q", msg)
	}

	// Update: a stale etag is refused (no lost update); the right one
	// changes only what it names.
	if msg, _, _ := call(t, cs, "contacts_update", map[string]any{"id": lena.ID, "etag": "stale", "org": "Acme"}, nil); !strings.Contains(msg, "changed") {
		t.Errorf("stale etag: %q", msg)
	}
	ok(t, cs, "contacts_update", map[string]any{"id": lena.ID, "etag": lena.ETag, "org": "Acme"}, &got)
	if got.Contact.Org != "Acme" || got.Contact.Name != "Lena Fischer" || len(got.Contact.Emails) != 1 || got.Contact.ETag == lena.ETag {
		t.Errorf("updated: %+v", got.Contact)
	}

	// Groups: create, add (idempotent), remove.
	var g groupResult
	ok(t, cs, "contacts_create_group", map[string]any{"name": "Friends"}, &g)
	if g.Group.Path != acct+"/Friends" || g.Group.Members != 0 {
		t.Errorf("new group: %+v", g.Group)
	}
	var m memberOut
	ok(t, cs, "contacts_add_to_group", map[string]any{"id": lena.ID, "group": acct + "/Friends"}, &m)
	if !m.Changed || m.Group.Members != 1 {
		t.Errorf("add: %+v", m)
	}
	ok(t, cs, "contacts_add_to_group", map[string]any{"id": lena.ID, "group": acct + "/Friends"}, &m)
	if m.Changed || m.Group.Members != 1 {
		t.Errorf("add again: %+v", m)
	}
	ok(t, cs, "contacts_remove_from_group", map[string]any{"id": anaID, "group": acct + "/Family"}, &m)
	if !m.Changed || m.Group.Members != 0 {
		t.Errorf("remove: %+v", m)
	}
	ok(t, cs, "contacts_get", map[string]any{"id": anaID}, &got)
	if !slices.Equal(got.Contact.Groups, []string{acct + "/Work"}) {
		t.Errorf("ana's groups after the removal: %q", got.Contact.Groups)
	}

	// Delete.
	var d deleteOut
	ok(t, cs, "contacts_delete", map[string]any{"id": lena.ID}, &d)
	if msg, _, _ := call(t, cs, "contacts_get", map[string]any{"id": lena.ID}, nil); !strings.Contains(msg, "there is no contact") {
		t.Errorf("get after delete: %q", msg)
	}
}

// TestAllTenToolsOnAVCardFolder: the ten tools through real MCP clients
// (stdio and HTTP) on a vCard folder.
func TestAllTenToolsOnAVCardFolder(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			dir := folderWithCards(t)
			st := testStore(policyHome(t, true), NewFolder("Local", dir))
			exerciseAllTen(t, clients(t, nil, ContactsService(st))[tr], "Local", "vcard-folder")
			// What the folder holds: one .vcf per card, no temporary file left.
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if !strings.HasSuffix(e.Name(), ".vcf") {
					t.Errorf("left in the folder: %s", e.Name())
				}
			}
		})
	}
}

// TestAllTenToolsAgainstRadicale: the same through a real CardDAV server
// (discovery from the root URL: well-known, principal, home set).
func TestAllTenToolsAgainstRadicale(t *testing.T) {
	r := startRadicale(t)
	r.mkaddressbook(t, "alice", "contacts", "Contacts")
	for n, b := range cardFiles(t) {
		r.put(t, "alice", "/alice/contacts/"+n, string(b))
	}
	st := testStore(policyHome(t, true), r.backend(t, "dav", "alice"))
	exerciseAllTen(t, clients(t, nil, ContactsService(st))["stdio"], "dav", "carddav")
}

// TestAmbiguousAddressBooksAreRefusedNamingBoth: a CardDAV account with
// two address books given one display name (servers allow it) is never
// guessed at: a create without address_book asks, and naming the shared
// name is refused with both hrefs.
func TestAmbiguousAddressBooksAreRefusedNamingBoth(t *testing.T) {
	r := startRadicale(t)
	r.mkaddressbook(t, "alice", "one", "Contacts")
	r.mkaddressbook(t, "alice", "two", "Contacts")
	st := testStore(policyHome(t, false), r.backend(t, "dav", "alice"))
	cs := clients(t, nil, ContactsService(st))["stdio"]
	if msg, _, _ := call(t, cs, "contacts_create", map[string]any{"name": "X"}, nil); !strings.Contains(msg, "several address books") {
		t.Errorf("no address_book: %q", msg)
	}
	msg, _, _ := call(t, cs, "contacts_create", map[string]any{"name": "X", "address_book": "Contacts"}, nil)
	if !strings.Contains(msg, "both named") || !strings.Contains(msg, "/alice/one/") || !strings.Contains(msg, "/alice/two/") {
		t.Errorf("the shared name: %q", msg)
	}
}
