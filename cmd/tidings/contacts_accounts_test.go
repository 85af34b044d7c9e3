package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

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
