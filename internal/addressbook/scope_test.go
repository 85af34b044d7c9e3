package addressbook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// twoAccounts is the card set in two folders, "Local" and "Other" (Other
// also holds a Work group, so Work exists in both accounts).
func twoAccounts(t *testing.T) *Store {
	t.Helper()
	other := folderWithCards(t)
	for _, n := range []string{"ana.vcf", "ana-duplicate.vcf", "zanzi.vcf", "group-family.vcf"} {
		os.Remove(filepath.Join(other, n))
	}
	return testStore(policyHome(t, true), NewFolder("Local", folderWithCards(t)), NewFolder("Other", other))
}

// TestScopeBothDirections: contact_accounts bounds every tool by the
// card's (or group's) account; contact_groups bounds only the group tools
// and group arguments, never which cards exist; both ends of a membership
// change are checked; contacts_create_group is refused under a
// group-confined profile; a refusal outside the scope is a violation with
// the same sentence whether or not the thing exists, and what the scope
// admits works.
func TestScopeBothDirections(t *testing.T) {
	anaID, kenjiID := "Local/"+anaUID, "Local/"+kenjiUID
	tests := []struct {
		name    string
		profile *mcpserver.Profile
		tool    string
		args    map[string]any
		// refused is the isError text wanted ("" = success), violation
		// whether _meta marks it.
		refused   string
		violation bool
		want      []string // names (search), paths (groups) on success
	}{
		{"accounts: search sees only the account", &mcpserver.Profile{ContactAccounts: []string{"Other"}}, "contacts_search", nil, "", false, []string{"Kenji Sato"}},
		{"accounts: a card of another account", &mcpserver.Profile{ContactAccounts: []string{"Other"}}, "contacts_get", map[string]any{"id": anaID}, "is outside this client's scope", true, nil},
		{"accounts: a card that does not exist there either", &mcpserver.Profile{ContactAccounts: []string{"Other"}}, "contacts_get", map[string]any{"id": "Local/no-such-uid"}, "is outside this client's scope", true, nil},
		{"accounts: the card in scope", &mcpserver.Profile{ContactAccounts: []string{"Local"}}, "contacts_get", map[string]any{"id": anaID}, "", false, nil},
		{"accounts: explicit account outside", &mcpserver.Profile{ContactAccounts: []string{"Other"}}, "contacts_search", map[string]any{"account": "Local"}, "contact account Local is outside this client's scope", true, nil},
		{"accounts: explicit account that does not exist", &mcpserver.Profile{ContactAccounts: []string{"Other"}}, "contacts_search", map[string]any{"account": "Nowhere"}, "contact account Nowhere is outside this client's scope", true, nil},
		{"accounts: a stale value is surfaced", &mcpserver.Profile{ContactAccounts: []string{"Gone"}}, "contacts_search", nil, `names no contact account here`, false, nil},
		{"accounts: listing of groups", &mcpserver.Profile{ContactAccounts: []string{"Other"}}, "contacts_list_groups", nil, "", false, []string{"Other/Work"}},
		{"accounts: create placed by the only account", &mcpserver.Profile{ContactAccounts: []string{"Other"}}, "contacts_create", map[string]any{"name": "New"}, "", false, nil},
		{"accounts: create into an account outside", &mcpserver.Profile{ContactAccounts: []string{"Other"}}, "contacts_create", map[string]any{"name": "New", "account": "Local"}, "is outside this client's scope", true, nil},
		{"no scope: create needs an account named", nil, "contacts_create", map[string]any{"name": "New"}, `say which account to use: one of "Local", "Other"`, false, nil},
		{"groups: cards are not narrowed", &mcpserver.Profile{ContactGroups: []string{"Local/Work"}}, "contacts_search", map[string]any{"account": "Local"}, "", false, []string{"Ana Lima", "Ana Paula Lima", "Kenji Sato"}},
		{"groups: listing shows only the group", &mcpserver.Profile{ContactGroups: []string{"Local/Work"}}, "contacts_list_groups", nil, "", false, []string{"Local/Work"}},
		{"groups: a group outside as a search filter", &mcpserver.Profile{ContactGroups: []string{"Local/Work"}}, "contacts_search", map[string]any{"group": "Local/Family"}, "is outside this client's scope", true, nil},
		{"groups: add to a group outside", &mcpserver.Profile{ContactGroups: []string{"Local/Work"}}, "contacts_add_to_group", map[string]any{"id": anaID, "group": "Local/Family"}, "is outside this client's scope", true, nil},
		{"groups: add to a group that does not exist", &mcpserver.Profile{ContactGroups: []string{"Local/Work"}}, "contacts_add_to_group", map[string]any{"id": anaID, "group": "Local/Nope"}, "is outside this client's scope", true, nil},
		{"groups: remove from the group in scope", &mcpserver.Profile{ContactGroups: []string{"Local/Work"}}, "contacts_remove_from_group", map[string]any{"id": kenjiID, "group": "Local/Work"}, "", false, nil},
		{"both ends: the card's account is outside", &mcpserver.Profile{ContactAccounts: []string{"Other"}}, "contacts_add_to_group", map[string]any{"id": anaID, "group": "Other/Work"}, "is outside this client's scope", true, nil},
		{"both ends: the group's account is outside", &mcpserver.Profile{ContactAccounts: []string{"Other"}}, "contacts_add_to_group", map[string]any{"id": "Other/" + kenjiUID, "group": "Local/Work"}, "is outside this client's scope", true, nil},
		{"both ends: different accounts", nil, "contacts_add_to_group", map[string]any{"id": "Other/" + kenjiUID, "group": "Local/Family"}, "different accounts", false, nil},
		{"create_group: refused under contact_groups", &mcpserver.Profile{ContactGroups: []string{"Local/Work"}}, "contacts_create_group", map[string]any{"name": "New", "account": "Local"}, "refused while contact_groups confines this client", true, nil},
		{"create_group: allowed by account scope", &mcpserver.Profile{ContactAccounts: []string{"Local"}}, "contacts_create_group", map[string]any{"name": "New"}, "", false, nil},
		{"create: a group argument outside", &mcpserver.Profile{ContactGroups: []string{"Local/Work"}}, "contacts_create", map[string]any{"name": "New", "group": "Local/Family"}, "is outside this client's scope", true, nil},
		{"ambiguous: a group name two cards carry", nil, "contacts_list_groups", map[string]any{"account": "Local"}, "", false, []string{"Local/Family", "Local/Work"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := clients(t, tt.profile, ContactsService(twoAccounts(t)))["stdio"]
			var res struct {
				Contacts []cardSummary `json:"contacts"`
				Groups   []groupOut    `json:"groups"`
			}
			msg, meta, _ := call(t, cs, tt.tool, tt.args, &res)
			switch {
			case tt.refused == "" && msg != "":
				t.Fatalf("refused: %s", msg)
			case tt.refused != "" && !strings.Contains(msg, tt.refused):
				t.Fatalf("got %q, want it to contain %q", msg, tt.refused)
			}
			if v, _ := meta["scope_violation"].(bool); v != tt.violation {
				t.Errorf("scope_violation = %v, want %v (%s)", v, tt.violation, msg)
			}
			if tt.want != nil {
				got := names(res.Contacts)
				for _, g := range res.Groups {
					got = append(got, g.Path)
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("got %q, want %q", got, tt.want)
				}
			}
		})
	}
}

// TestAmbiguousGroupNameIsMisconfigured: a contact_groups value that two
// group cards carry admits neither, and the refusal names both.
func TestAmbiguousGroupNameIsMisconfigured(t *testing.T) {
	st := twoAccounts(t)
	dir := st.Backends[0].(*Folder).Dir()
	dup := strings.ReplaceAll(string(cardFiles(t)["group-work.vcf"]), "work00000006", "work00000099")
	if err := os.WriteFile(filepath.Join(dir, "group-work-2.vcf"), []byte(dup), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := clients(t, &mcpserver.Profile{ContactGroups: []string{"Local/Work"}}, ContactsService(st))["stdio"]
	msg, _, _ := call(t, cs, "contacts_list_groups", nil, nil)
	if !strings.Contains(msg, "matches two contact groups") || !strings.Contains(msg, "work00000006") || !strings.Contains(msg, "work00000099") {
		t.Errorf("got %q", msg)
	}
}
