package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/bridge"
	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// TestContactAccountsJoinTheContactBook: a [[contacts.accounts]] vCard
// folder is a source of the contact book that names conversations (no
// other contacts source configured), its numbers folded by region.
func TestContactAccountsJoinTheContactBook(t *testing.T) {
	dir := t.TempDir()
	card := "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:u1\r\nFN:Lena Fischer\r\nN:Fischer;Lena;;;\r\nTEL:030 1234567\r\nEND:VCARD\r\n"
	if err := os.WriteFile(filepath.Join(dir, "u1.vcf"), []byte(card), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Region: "DE", Home: t.TempDir(), Now: testclock.Anchor,
		ContactAccounts: []config.ContactAccount{{Name: "cards", Folder: dir}}}
	fb := contactBook(cfg, nil, slog.New(slog.DiscardHandler))
	if fb == nil {
		t.Fatal("no contact book from a contacts account alone")
	}
	b, err := fb.Book(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := b.DisplayName("+49301234567"); n != "Lena Fischer" {
		t.Errorf("the chat handle +49301234567 is named %q, want the folder card's name", n)
	}
}

// TestHelperNamesFromContactAccounts: a helper whose config.toml has a
// [[contacts.accounts]] vCard folder and no other contacts source names
// conversations and answers contacts_lookup from that folder's cards, in
// both bridge roles (docs/bridge.md: the helper reads the same settings as
// serve).
func TestHelperNamesFromContactAccounts(t *testing.T) {
	data := demoData(t)
	cards := t.TempDir()
	card := "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:jk\r\nFN:Jordan Folderkim\r\nN:Folderkim;Jordan;;;\r\nTEL:+1 415 555 0147\r\nEND:VCARD\r\n"
	if err := os.WriteFile(filepath.Join(cards, "jk.vcf"), []byte(card), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "[[contacts.accounts]]\nname = \"cards\"\nfolder = " + strconv.Quote(cards) + "\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ role, action, params, want string }{
		{"", "search", `{"term": "ramen", "days": 90}`, `"contact_name":"Jordan Folderkim"`},
		{"", "contacts_lookup", `{"name": "Folderkim"}`, `"phone_last10":"4155550147"`},
		{"manager", "list_chats", `{"days": 3650, "limit": 50}`, `"label":"Jordan Folderkim"`},
		{"manager", "contacts_lookup", `{"name": "Folderkim"}`, `"phone_last10":"4155550147"`},
	} {
		t.Run(tc.role+"/"+tc.action, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bridge")
			startHelper(t, map[string]string{bridge.RoleEnv: tc.role, "TIDINGS_HOME": home, "TIDINGS_NOW": anchorRFC3339, "DISPLAY": ""},
				"--bridge-dir", dir, "--imessage", data.ChatDB)
			waitBridge(t, dir)
			got, err := bridgeCall(t, dir, tc.action, tc.params, "--protocol", "1.2")
			if err != nil {
				t.Fatalf("%s: %v", tc.action, err)
			}
			b, _ := json.Marshal(got)
			if !strings.Contains(string(b), tc.want) {
				t.Errorf("%s does not name the account's card (%s):\n%s", tc.action, tc.want, clip(b))
			}
		})
	}
}
