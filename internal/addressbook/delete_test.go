package addressbook

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// racingBackend changes a group card behind the tool's back just before
// the tool's first write to it, as another client would: the write's
// If-Match must fail and the tool must re-read, not overwrite.
type racingBackend struct {
	Backend
	once  sync.Once
	group string // the href raced on
	add   string // the member UID the other client adds
	t     *testing.T
}

func (r *racingBackend) Put(ctx context.Context, b Book, name, href string, data []byte, cond Cond) (string, error) {
	if href != "" && strings.HasSuffix(href, r.group) {
		r.once.Do(func() {
			o, err := r.Backend.Get(ctx, href)
			must(r.t, err)
			cards, err := ParseCards(o.Data)
			must(r.t, err)
			cards[0].AddMember(r.add)
			_, err = r.Backend.Put(ctx, b, "", href, cards[0].Encode(), Cond{IfMatch: o.ETag})
			must(r.t, err)
		})
	}
	return r.Backend.Put(ctx, b, name, href, data, cond)
}

// groupMembers reads every group card of a backend straight from it
// (no policy, no scope): path name → member UIDs.
func groupMembers(t *testing.T, b Backend) map[string][]string {
	t.Helper()
	ctx := context.Background()
	books, err := b.Books(ctx)
	must(t, err)
	out := map[string][]string{}
	for _, bk := range books {
		objs, err := b.Objects(ctx, bk)
		must(t, err)
		for _, o := range objs {
			cards, _ := ParseCards(o.Data)
			for _, c := range cards {
				if c.GroupKind() != "" {
					out[c.Text("FN")] = c.Members()
				}
			}
		}
	}
	return out
}

// TestDeleteRemovesTheCardFromItsGroups: contacts_delete leaves no
// dangling member behind — every group of the card's account that named
// it (both kinds, in the client's contact_groups or not) is rewritten
// under If-Match in the same call, the other members (a blocked person
// too) stay, a group changed meanwhile is re-read rather than
// overwritten, and the result names the changed groups in scope.
func TestDeleteRemovesTheCardFromItsGroups(t *testing.T) {
	const other = "6f1c2a9e-0009-4d2b-9a11-other0000009"
	backends := map[string]func(t *testing.T) Backend{
		"folder": func(t *testing.T) Backend { return NewFolder("acct", folderWithCards(t)) },
		"radicale": func(t *testing.T) Backend {
			r := startRadicale(t)
			r.mkaddressbook(t, "alice", "contacts", "Contacts")
			for n, b := range cardFiles(t) {
				r.put(t, "alice", "/alice/contacts/"+n, string(b))
			}
			return r.backend(t, "acct", "alice")
		},
	}
	tests := []struct {
		name    string
		profile *mcpserver.Profile
		race    bool
		want    []string // the result's groups
	}{
		{"both groups named", nil, false, []string{"acct/Family", "acct/Work"}},
		{"a group outside contact_groups is cleaned, not named", &mcpserver.Profile{ContactGroups: []string{"acct/Work"}}, false, []string{"acct/Work"}},
		{"a group changed meanwhile is re-read, not overwritten", nil, true, []string{"acct/Family", "acct/Work"}},
	}
	for bname, mk := range backends {
		for _, tc := range tests {
			t.Run(bname+"/"+tc.name, func(t *testing.T) {
				b := mk(t)
				if tc.race {
					b = &racingBackend{Backend: b, group: "group-work.vcf", add: other, t: t}
				}
				st := testStore(policyHome(t, true), b)
				cs := clients(t, tc.profile, ContactsService(st))["stdio"]
				var d deleteOut
				ok(t, cs, "contacts_delete", map[string]any{"id": "acct/" + anaUID}, &d)
				if d.Deleted != "acct/"+anaUID || !slices.Equal(d.Groups, tc.want) || len(d.Problems) > 0 {
					t.Errorf("delete = %+v, want groups %q", d, tc.want)
				}
				got := groupMembers(t, b)
				wantWork := []string{kenjiUID}
				if tc.race {
					wantWork = append(wantWork, other)
				}
				if !slices.Equal(got["Family"], []string{zanziUID}) || !slices.Equal(got["Work"], wantWork) {
					t.Errorf("groups after the delete: %q (want Family [zanzi], Work %q)", got, wantWork)
				}
			})
		}
	}
}
