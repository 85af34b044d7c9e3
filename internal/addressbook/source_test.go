package addressbook

import (
	"context"
	"testing"

	"github.com/tidings-mcp/tidings/internal/contacts"
)

// TestEditedCardRenamesAtTheNextLoad: the accounts' cards join the people
// the messages index resolves — a number typed without its country code
// on the card resolves from the international form a chat carries — and
// after contacts_update renames the card, the next load of the source
// resolves that number to the new name.
func TestEditedCardRenamesAtTheNextLoad(t *testing.T) {
	st := testStore(policyHome(t, false), NewFolder("Local", folderWithCards(t)))
	resolve := func(handle string) string {
		t.Helper()
		cards, err := BookSource{Store: st}.Contacts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		b, err := contacts.NewBook(cards, "DE")
		if err != nil {
			t.Fatal(err)
		}
		return b.DisplayName(handle)
	}
	cs := clients(t, nil, ContactsService(st))["stdio"]
	var got cardResult
	ok(t, cs, "contacts_create", map[string]any{"name": "Lena Fischer", "phones": []string{"030 1234567"}}, &got)
	if n := resolve("+49301234567"); n != "Lena Fischer" {
		t.Fatalf("a new card does not name its chat: %q", n)
	}
	if n := resolve("kenji@example.jp"); n != "Kenji Sato" {
		t.Errorf("an e-mail handle: %q", n)
	}
	ok(t, cs, "contacts_update", map[string]any{"id": got.Contact.ID, "name": "Lena Schmidt"}, nil)
	if n := resolve("+49301234567"); n != "Lena Schmidt" {
		t.Errorf("after the rename: %q", n)
	}
}
