package contacts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestDetectSource(t *testing.T) {
	dir := t.TempDir()
	abRoot := filepath.Join(dir, "AddressBook")
	macFixture(t, filepath.Join(abRoot, "Sources", "S1", AddressBookFile), abEntities{1, 2, 3, 4, 0}, time.Time{})
	// Backup files are named by SHA-1, without extension.
	iosHashed := filepath.Join(dir, "backup", "31", "31bb7ba8914766d4ba40d6dfb6113c8b614be442")
	makeDB(t, iosHashed, "ios-addressbook.synthetic.sql")
	abNoExt := filepath.Join(dir, "abcopy")
	macFixture(t, abNoExt, abEntities{1, 2, 3, 4, 0}, time.Time{})
	vcfDir := filepath.Join(dir, "cards")
	writeFile(t, filepath.Join(vcfDir, "a.vcf"), "BEGIN:VCARD\nFN:A\nEND:VCARD\n")
	writeFile(t, filepath.Join(dir, "export.txt"), "\xEF\xBB\xBFbegin:vcard\nFN:A\nend:vcard\n")
	writeFile(t, filepath.Join(dir, "notes.txt"), "hello")
	iosDir := filepath.Join(dir, "iosdir")
	makeDB(t, filepath.Join(iosDir, "AddressBook.sqlitedb"), "ios-addressbook.synthetic.sql")
	if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		path, kind, wantPath string
	}{
		{abRoot, SourceAddressBook, abRoot},
		{filepath.Join(abRoot, "Sources", "S1", AddressBookFile), SourceAddressBook, ""},
		{abNoExt, SourceAddressBook, ""},
		{iosHashed, SourceIOSAddressBook, ""},
		{iosDir, SourceIOSAddressBook, filepath.Join(iosDir, "AddressBook.sqlitedb")},
		{vcfDir, SourceVCard, ""},
		{filepath.Join(vcfDir, "a.vcf"), SourceVCard, ""},
		{filepath.Join(dir, "export.txt"), SourceVCard, ""},
		{filepath.Join(dir, "notes.txt"), "", ""},
		{filepath.Join(dir, "empty"), "", ""},
		{filepath.Join(dir, "missing.vcf"), "", ""},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			got, err := DetectSource(tc.path)
			if tc.kind == "" {
				if err == nil {
					t.Fatalf("DetectSource = %+v, want an error", got)
				}
				return
			}
			want := tc.wantPath
			if want == "" {
				want = tc.path
			}
			if err != nil || got.Kind != tc.kind || got.Path != want {
				t.Fatalf("DetectSource = %+v, %v; want %s %s", got, err, tc.kind, want)
			}
		})
	}
}

// TestOpenEndToEnd reads a macOS AddressBook with two account databases,
// an iOS address book and a vCard export, then resolves across them.
func TestOpenEndToEnd(t *testing.T) {
	dir := t.TempDir()
	abRoot := filepath.Join(dir, "Library", "Application Support", "AddressBook")
	old := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
	// Account 1 holds the stale "Angel Vossough" card (same number).
	macFixture(t, filepath.Join(abRoot, "Sources", "ACC1", AddressBookFile), abEntities{21, 22, 19, 20, 0}, old)
	// Account 2 is damaged.
	writeFile(t, filepath.Join(abRoot, "Sources", "ACC2", AddressBookFile), "not sqlite at all, but long enough to be read as a header....")
	iosPath := filepath.Join(dir, "AddressBook.sqlitedb")
	makeDB(t, iosPath, "ios-addressbook.synthetic.sql",
		`INSERT INTO ABPerson (ROWID, First, Last) VALUES (1, 'Élodie', 'Durand')`,
		`INSERT INTO ABMultiValue (UID, record_id, property, value) VALUES (1, 1, 3, '+33 6 12 34 56 78')`)
	vcf := filepath.Join(dir, "contacts.vcf")
	writeFile(t, vcf, "BEGIN:VCARD\nVERSION:3.0\nFN:Angel V. (new)\nTEL:+1 415 555 1234\nREV:2025-06-01T00:00:00Z\nEND:VCARD\n"+
		"BEGIN:VCARD\nVERSION:3.0\nFN:Broken")
	sources := []Source{
		{Kind: SourceAddressBook, Path: abRoot},
		{Kind: SourceIOSAddressBook, Path: iosPath},
		{Kind: SourceVCard, Path: vcf},
		{Kind: SourceVCard, Path: filepath.Join(dir, "missing.vcf")},
		{Kind: "carrier-pigeon", Path: "x"},
	}
	book, statuses, err := Open(context.Background(), sources, "US")
	if err != nil {
		t.Fatal(err)
	}
	type st struct {
		base  string
		cards int
		err   bool
	}
	var got []st
	for _, s := range statuses {
		got = append(got, st{filepath.Base(filepath.Dir(s.Path)) + "/" + filepath.Base(s.Path), s.Cards, s.Err != nil})
	}
	want := []st{
		{"ACC1/" + AddressBookFile, 3, false},
		{"ACC2/" + AddressBookFile, 0, true},
		{filepath.Base(dir) + "/AddressBook.sqlitedb", 1, false},
		{filepath.Base(dir) + "/contacts.vcf", 1, true},
		{filepath.Base(dir) + "/missing.vcf", 0, true},
		{"./x", 0, true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("statuses = %v\nwant       %v", got, want)
	}
	if !statuses[3].Partial() || statuses[1].Partial() {
		t.Error("Partial() wrong")
	}
	if p, ok := book.Resolve("+14155551234"); !ok || p.Name != "Angel V. (new)" || len(p.Cards) != 2 {
		t.Errorf("newest card must win: %+v", p)
	}
	if n := book.DisplayName("+33612345678"); n != "Élodie Durand" {
		t.Errorf("iOS card: %q", n)
	}
	if res, err := book.Lookup("blue bottle", nil); err != nil || len(res.Matches) != 1 || res.Matches[0].Phone10 != "5105550142" {
		t.Errorf("lookup: %+v %v", res, err)
	}
}

func TestDefaultSources(t *testing.T) {
	if got := DefaultSources("/Users/a", "darwin"); len(got) != 1 || got[0].Path != "/Users/a/Library/Application Support/AddressBook" {
		t.Errorf("darwin: %+v", got)
	}
	if got := DefaultSources("/home/a", "linux"); got != nil {
		t.Errorf("linux: %+v", got)
	}
}

func TestLoadVCardFolder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.vcf"), "BEGIN:VCARD\nFN:B\nEND:VCARD\n")
	writeFile(t, filepath.Join(dir, "a.VCF"), "BEGIN:VCARD\nFN:A\nEND:VCARD\nBEGIN:VCARD\nFN:A2\nEND:VCARD\n")
	writeFile(t, filepath.Join(dir, "readme.txt"), "BEGIN:VCARD\nFN:ignored\nEND:VCARD\n")
	cards, st := Load(context.Background(), []Source{{Kind: SourceVCard, Path: dir}})
	if len(cards) != 3 || len(st) != 2 || st[0].Cards != 2 || st[1].Cards != 1 {
		t.Fatalf("cards %d statuses %+v", len(cards), st)
	}
	empty := t.TempDir()
	if _, st := Load(context.Background(), []Source{{Kind: SourceVCard, Path: empty}}); len(st) != 1 || st[0].Err == nil {
		t.Errorf("empty folder: %+v", st)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, st := Load(ctx, []Source{{Kind: SourceVCard, Path: dir}}); len(st) != 1 || !errors.Is(st[0].Err, context.Canceled) {
		t.Errorf("cancelled: %+v", st)
	}
}

func TestPermissionDeniedIsReported(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores file modes")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, AddressBookFile)
	macFixture(t, p, abEntities{1, 2, 3, 4, 0}, time.Time{})
	if err := os.Chmod(p, 0); err != nil {
		t.Fatal(err)
	}
	_, err := ReadAddressBook(context.Background(), p)
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("err = %v, want fs.ErrPermission", err)
	}
}

// TestChecksGiveEachUnreadableSourceItsPlatformsFix: Checks reports the
// region, the readable sources and one check per source; every failing one
// carries the fix for its cause and platform: Full Disk Access for a denied
// source on macOS but file modes on Linux, re-export for a partly read
// vCard, the path for a missing file, --contacts when there is no source.
func TestChecksGiveEachUnreadableSourceItsPlatformsFix(t *testing.T) {
	denied := fmt.Errorf("address book: %w", &fs.PathError{Op: "open", Path: "/Users/a/Library/Application Support/AddressBook", Err: syscall.EPERM})
	statuses := []Status{
		{Kind: SourceAddressBook, Path: "/ab/Sources/1/" + AddressBookFile, Cards: 120},
		{Kind: SourceAddressBook, Path: "/ab/Sources/2/" + AddressBookFile, Err: denied},
		{Kind: SourceVCard, Path: "/x.vcf", Cards: 3, Err: fmt.Errorf("x.vcf: %w", &ParseError{Line: 9, Msg: "card not closed", Skipped: 1})},
		{Kind: SourceVCard, Path: "/gone.vcf", Err: fmt.Errorf("open vcard: %w", fs.ErrNotExist)},
	}
	got := Checks(statuses, "fr", "darwin")
	if len(got) != 6 {
		t.Fatalf("%d checks: %+v", len(got), got)
	}
	if c := got[0]; !c.OK || !strings.Contains(c.Detail, "FR") {
		t.Errorf("region: %+v", c)
	}
	if c := got[1]; !c.OK || c.Detail != "2 of 4 sources readable, 123 cards" {
		t.Errorf("sources: %+v", c)
	}
	if c := got[2]; !c.OK || c.Fix != "" || !strings.Contains(c.Detail, "120 cards") {
		t.Errorf("good source: %+v", c)
	}
	if c := got[3]; c.OK || !strings.Contains(c.Fix, "Full Disk Access") {
		t.Errorf("denied source: %+v", c)
	}
	if c := got[4]; c.OK || !strings.Contains(c.Detail, "3 cards read") || !strings.Contains(c.Fix, "re-export") {
		t.Errorf("partial vcard: %+v", c)
	}
	if c := got[5]; c.OK || !strings.Contains(c.Fix, "check the path") {
		t.Errorf("missing: %+v", c)
	}
	// On Linux a permission problem is about file modes, not Full Disk Access.
	if c := Checks(statuses[1:2], "US", "linux")[2]; strings.Contains(c.Fix, "Full Disk Access") {
		t.Errorf("linux fix mentions FDA: %+v", c)
	}
	none := Checks(nil, "XX", "linux")
	if none[0].OK || none[0].Fix == "" || none[1].OK || !strings.Contains(none[1].Fix, "--contacts") {
		t.Errorf("no sources, bad region: %+v", none)
	}
	if c := Checks([]Status{statuses[1]}, "US", "darwin")[1]; c.OK || !strings.Contains(c.Fix, "Full Disk Access") {
		t.Errorf("nothing readable on macOS: %+v", c)
	}
}
