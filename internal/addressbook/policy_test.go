package addressbook

import (
	"strings"
	"testing"
)

// contactSentinelCalls aim at the blocked person from every angle: the
// name, the number in several formats, the e-mail address (the person's
// other handle, hidden with the blocked number), the card id, the group
// they are in, and the broad listings.
func contactSentinelCalls() []struct {
	tool string
	args map[string]any
} {
	id := "Local/" + zanziUID
	type c = struct {
		tool string
		args map[string]any
	}
	out := []c{
		{"contacts_list_accounts", nil},
		{"contacts_search", nil},
		{"contacts_search", map[string]any{"limit": 200}},
		{"contacts_search", map[string]any{"group": "Local/Family"}},
		{"contacts_list_groups", nil},
		{"contacts_get", map[string]any{"id": id}},
		{"contacts_get", map[string]any{"id": "Local/" + anaUID}},
		{"contacts_update", map[string]any{"id": id, "note": "x"}},
		{"contacts_delete", map[string]any{"id": id}},
		{"contacts_add_to_group", map[string]any{"id": id, "group": "Local/Work"}},
		{"contacts_remove_from_group", map[string]any{"id": id, "group": "Local/Family"}},
	}
	for _, q := range []string{"Quokka", "Zanzisentinel", "zanzi", "+44 7700 900123", "07700 900123", "447700900123", "zanzi@sentinel.example", "sentinel.example", "ZANZISENTINEL"} {
		out = append(out, c{"contacts_search", map[string]any{"query": q}})
	}
	return out
}

// TestBlockedPersonIsInvisibleToEveryContactsTool (the contacts sentinel
// test): with the person's number on the blocklist, no answer of any
// contacts tool — result, error or count — carries their name, number,
// address, id or note, and the group they are in counts only the others;
// without the block the same calls do reach them, so the test can fail.
func TestBlockedPersonIsInvisibleToEveryContactsTool(t *testing.T) {
	sentinels := []string{"Zanzisentinel", "ZANZISENTINEL", "Quokka", "900123", "sentinel.example", "zanzi0000004"}
	for _, block := range []bool{false, true} {
		st := testStore(policyHome(t, block), NewFolder("Local", folderWithCards(t)))
		cs := clients(t, nil, ContactsService(st))["stdio"]
		seen := 0
		for _, c := range contactSentinelCalls() {
			_, _, all := call(t, cs, c.tool, c.args, nil)
			// The caller's own arguments may be echoed back (an error
			// naming the id asked for); nothing else may carry a sentinel.
			for _, v := range c.args {
				if s, ok := v.(string); ok {
					all = strings.ReplaceAll(all, s, "")
				}
			}
			for _, s := range sentinels {
				if strings.Contains(all, s) {
					if block {
						t.Errorf("%s %v shows %q while blocked: %s", c.tool, c.args, s, all)
					}
					seen++
				}
			}
		}
		if !block && seen < 10 {
			t.Fatal("the sentinels are not visible before the block: the test would pass vacuously")
		}
	}
}
