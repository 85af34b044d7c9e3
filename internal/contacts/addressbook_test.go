package contacts

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// makeDB builds a fixture database from a synthetic schema file in
// testdata and the given statements, with an ordinary read-write
// connection that is closed before the test reads the file.
func makeDB(t *testing.T, path, schema string, stmts ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	ddl, err := os.ReadFile(filepath.Join("testdata", schema))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range append([]string{string(ddl)}, stmts...) {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("fixture %s: %v\n%s", filepath.Base(path), err, s)
		}
	}
}

// coreData returns t as Core Data seconds since 2001 for a SQL literal.
func coreData(t time.Time) string { return fmt.Sprintf("%f", t.Sub(appleEpoch).Seconds()) }

// abEntities describes a Core Data entity numbering.
type abEntities struct{ record, contact, group, container, sub int }

// macFixture writes a synthetic AddressBook with the given entity
// numbers: three contacts, a group and a container (which must not be
// read as people), phones and e-mails in a scrambled physical order.
func macFixture(t *testing.T, path string, e abEntities, mod time.Time) {
	t.Helper()
	stmts := []string{
		fmt.Sprintf(`INSERT INTO Z_PRIMARYKEY VALUES (%d,'ABCDRecord',0,20),(%d,'ABCDContact',%d,20),(%d,'ABCDGroup',%d,20),(%d,'ABCDContainer',%d,2)`,
			e.record, e.contact, e.record, e.group, e.record, e.container, e.record),
		fmt.Sprintf(`INSERT INTO ZABCDRECORD (Z_PK, Z_ENT, ZFIRSTNAME, ZMIDDLENAME, ZLASTNAME, ZNICKNAME, ZORGANIZATION, ZMODIFICATIONDATE, ZNAME) VALUES
			(1, %[3]d, NULL, NULL, NULL, NULL, NULL, NULL, 'On My Mac'),
			(2, %[1]d, 'Angel', 'M', 'Vossough', 'Angie', 'Acme', %[4]s, NULL),
			(3, %[1]d, '  Zoë ', NULL, 'Ĳsselmeer', NULL, NULL, NULL, NULL),
			(4, %[2]d, NULL, NULL, NULL, NULL, NULL, NULL, 'Family'),
			(5, %[1]d, NULL, NULL, NULL, NULL, 'Blue Bottle Coffee', 0, NULL),
			(6, %[3]d, NULL, NULL, NULL, NULL, NULL, NULL, 'iCloud')`, e.contact, e.group, e.container, coreData(mod)),
		`INSERT INTO ZABCDPHONENUMBER (Z_PK, ZOWNER, ZORDERINGINDEX, ZFULLNUMBER, ZLABEL) VALUES
			(10, 2, 1, '(415) 555-1234', '_$!<Mobile>!$_'),
			(11, 2, 0, '+1 415 555 9000', '_$!<Work>!$_'),
			(12, 4, 0, '+1 999 999 9999', NULL),
			(13, 3, 0, '06 12 34 56 78', 'iPhone'),
			(14, 5, 0, '+1 510 555 0142', '_$!<Main>!$_'),
			(15, 2, 2, '', NULL),
			(16, 99, 0, '+1 000', NULL)`,
		`INSERT INTO ZABCDEMAILADDRESS (Z_PK, ZOWNER, ZORDERINGINDEX, ZADDRESS, ZLABEL) VALUES
			(20, 2, 1, 'angel@work.example', '_$!<Work>!$_'),
			(21, 2, 0, 'Angel@Example.com', '_$!<Home>!$_'),
			(22, 6, 0, 'container@example.com', NULL)`,
	}
	if e.sub != 0 {
		stmts = append(stmts,
			fmt.Sprintf(`INSERT INTO Z_PRIMARYKEY VALUES (%d,'ABCDContactSubentity',%d,1)`, e.sub, e.contact),
			fmt.Sprintf(`INSERT INTO ZABCDRECORD (Z_PK, Z_ENT, ZFIRSTNAME, ZLASTNAME) VALUES (7, %d, 'Sub', 'Entity')`, e.sub))
	}
	makeDB(t, path, "addressbook-v22.synthetic.sql", stmts...)
}

func TestReadAddressBookEntityNumbers(t *testing.T) {
	mod := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) // literal date: a stored value read back
	want := []model.Contact{
		{Source: "addressbook", ID: "2", First: "Angel", Middle: "M", Last: "Vossough", Nickname: "Angie", Organization: "Acme",
			Phones: []string{"(415) 555-1234", "+1 415 555 9000"}, Emails: []string{"Angel@Example.com", "angel@work.example"}, Modified: mod},
		{Source: "addressbook", ID: "3", First: "Zoë", Last: "Ĳsselmeer", Phones: []string{"06 12 34 56 78"}},
		{Source: "addressbook", ID: "5", Organization: "Blue Bottle Coffee", Phones: []string{"+1 510 555 0142"}},
	}
	tests := []struct {
		name string
		ents abEntities
		want []model.Contact
	}{
		// The numbers contacts-sql-py hard-codes (contact 22, group 19).
		{"common numbering", abEntities{record: 21, contact: 22, group: 19, container: 20}, want},
		// Swapped: a reader that hard-codes 22 would return the group.
		{"non-standard numbering", abEntities{record: 3, contact: 5, group: 22, container: 9}, want},
		// Core Data stores sub-entities in the parent's table with their own Z_ENT.
		{"sub-entity of ABCDContact", abEntities{record: 1, contact: 2, group: 3, container: 4, sub: 8},
			append(append([]model.Contact{}, want...), model.Contact{Source: "addressbook", ID: "7", First: "Sub", Last: "Entity"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), AddressBookFile)
			macFixture(t, path, tc.ents, mod)
			got, err := ReadAddressBook(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestReadAddressBookErrors(t *testing.T) {
	dir := t.TempDir()
	noContact := filepath.Join(dir, "a.abcddb")
	makeDB(t, noContact, "addressbook-v22.synthetic.sql", `INSERT INTO Z_PRIMARYKEY VALUES (1,'ABCDRecord',0,0)`)
	if _, err := ReadAddressBook(context.Background(), noContact); err == nil || !strings.Contains(err.Error(), "ABCDContact") {
		t.Errorf("no ABCDContact entity: err = %v", err)
	}
	notCoreData := filepath.Join(dir, "b.abcddb")
	makeDB(t, notCoreData, "ios-addressbook.synthetic.sql")
	if _, err := ReadAddressBook(context.Background(), notCoreData); err == nil || !strings.Contains(err.Error(), "Z_PRIMARYKEY") {
		t.Errorf("not Core Data: err = %v", err)
	}
	garbage := filepath.Join(dir, "c.abcddb")
	if err := os.WriteFile(garbage, []byte("this is not a database, just text long enough to look like one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAddressBook(context.Background(), garbage); err == nil {
		t.Error("garbage file read without error")
	}
	if _, err := ReadAddressBook(context.Background(), filepath.Join(dir, "missing.abcddb")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
}

func TestReadAddressBookOldSchemaWithoutOptionalColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), AddressBookFile)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)`,
		`CREATE TABLE ZABCDRECORD (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZFIRSTNAME VARCHAR, ZLASTNAME VARCHAR)`,
		`CREATE TABLE ZABCDPHONENUMBER (Z_PK INTEGER PRIMARY KEY, ZOWNER INTEGER, ZFULLNUMBER VARCHAR)`,
		`INSERT INTO Z_PRIMARYKEY VALUES (4,'ABCDContact',0,1)`,
		`INSERT INTO ZABCDRECORD VALUES (1,4,'Old','Timer')`,
		`INSERT INTO ZABCDPHONENUMBER VALUES (1,1,'555-0100')`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	got, err := ReadAddressBook(context.Background(), path)
	want := []model.Contact{{Source: "addressbook", ID: "1", First: "Old", Last: "Timer", Phones: []string{"555-0100"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
}

func TestFindAddressBooksSources(t *testing.T) {
	root := filepath.Join(t.TempDir(), "Application Support", "AddressBook")
	ents := abEntities{record: 21, contact: 22, group: 19, container: 20}
	mod := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) // literal date: a stored value read back
	macFixture(t, filepath.Join(root, AddressBookFile), ents, mod)
	macFixture(t, filepath.Join(root, "Sources", "B1D0C0DE-0000-4000-8000-000000000002", AddressBookFile), ents, mod)
	macFixture(t, filepath.Join(root, "Sources", "A1D0C0DE-0000-4000-8000-000000000001", AddressBookFile), ents, mod)
	if err := os.MkdirAll(filepath.Join(root, "Sources", "empty-source"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := FindAddressBooks(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(root, AddressBookFile),
		filepath.Join(root, "Sources", "A1D0C0DE-0000-4000-8000-000000000001", AddressBookFile),
		filepath.Join(root, "Sources", "B1D0C0DE-0000-4000-8000-000000000002", AddressBookFile),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("FindAddressBooks = %v, want %v", got, want)
	}
	// Ids carry the account folder so they stay unique across databases
	// (the path has a space: the file: URI must be escaped).
	cards, err := ReadAddressBook(context.Background(), want[1])
	if err != nil {
		t.Fatal(err)
	}
	if cards[0].ID != "A1D0C0DE-0000-4000-8000-000000000001/2" {
		t.Errorf("id = %q", cards[0].ID)
	}
	if _, err := FindAddressBooks(t.TempDir()); !errors.Is(err, ErrNoAddressBook) {
		t.Errorf("empty folder: err = %v, want ErrNoAddressBook", err)
	}
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestReadAddressBookSeesWALAndNeverWrites keeps a writer connection open
// with uncheckpointed rows in the WAL (as Contacts.app does): mode=ro must
// see them (immutable=1 would not) and must leave the files unchanged.
func TestReadAddressBookSeesWALAndNeverWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), AddressBookFile)
	macFixture(t, path, abEntities{record: 21, contact: 22, group: 19, container: 20}, time.Now())
	w, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`INSERT INTO ZABCDRECORD (Z_PK, Z_ENT, ZFIRSTNAME) VALUES (50, 22, 'Walter')`); err != nil {
		t.Fatal(err)
	}
	mainSum, walSum := fileSum(t, path), fileSum(t, path+"-wal")
	cards, err := ReadAddressBook(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if last := cards[len(cards)-1]; last.First != "Walter" {
		t.Errorf("row in the WAL not seen: last card %+v", last)
	}
	if fileSum(t, path) != mainSum || fileSum(t, path+"-wal") != walSum {
		t.Error("reader modified the database or its WAL")
	}
}

func TestReadIOSAddressBook(t *testing.T) {
	path := filepath.Join(t.TempDir(), "AddressBook.sqlitedb")
	mod := time.Date(2023, 3, 4, 5, 6, 7, 0, time.UTC) // literal date: a stored value read back
	makeDB(t, path, "ios-addressbook.synthetic.sql",
		`INSERT INTO ABMultiValueLabel (rowid, value) VALUES (1,'_$!<Home>!$_'),(2,'_$!<Mobile>!$_'),(3,'iPhone'),(4,'_$!<Work>!$_')`,
		fmt.Sprintf(`INSERT INTO ABPerson (ROWID, First, Middle, Last, Nickname, Organization, ModificationDate) VALUES
			(1,'Élodie',NULL,'Durand','Lolo',NULL,%d),
			(2,NULL,NULL,NULL,NULL,'Pharmacie Centrale',NULL),
			(3,'Nobody',NULL,NULL,NULL,NULL,0)`, int64(mod.Sub(appleEpoch).Seconds())),
		`INSERT INTO ABMultiValue (UID, record_id, property, identifier, label, value) VALUES
			(1,1,3,0,1,'+33 1 42 68 53 00'),
			(2,1,3,1,3,'06 12 34 56 78'),
			(3,1,4,0,4,'elodie@travail.example'),
			(4,1,22,0,NULL,'http://example.fr'),
			(5,2,3,0,NULL,'01 23 45 67 89'),
			(6,1,4,1,1,'Elodie@Maison.example'),
			(7,9,3,0,2,'+1 000 000 0000'),
			(8,1,3,2,NULL,NULL)`,
	)
	got, err := ReadIOSAddressBook(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Contact{
		{Source: "ios-addressbook", ID: "1", First: "Élodie", Last: "Durand", Nickname: "Lolo",
			Phones: []string{"06 12 34 56 78", "+33 1 42 68 53 00"}, Emails: []string{"elodie@travail.example", "Elodie@Maison.example"}, Modified: mod},
		{Source: "ios-addressbook", ID: "2", Organization: "Pharmacie Centrale", Phones: []string{"01 23 45 67 89"}},
		{Source: "ios-addressbook", ID: "3", First: "Nobody"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestReadIOSAddressBookMinimalSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.sqlitedb")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		`CREATE TABLE ABPerson (ROWID INTEGER PRIMARY KEY, First TEXT, Last TEXT)`,
		`CREATE TABLE ABMultiValue (UID INTEGER PRIMARY KEY, record_id INTEGER, property INTEGER, value TEXT)`,
		`INSERT INTO ABPerson VALUES (7,'Ann','Old')`,
		`INSERT INTO ABMultiValue VALUES (1,7,4,'ann@example.com'),(2,7,3,5551234)`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	got, err := ReadIOSAddressBook(context.Background(), path)
	want := []model.Contact{{Source: "ios-addressbook", ID: "7", First: "Ann", Last: "Old", Phones: []string{"5551234"}, Emails: []string{"ann@example.com"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	if _, err := ReadIOSAddressBook(context.Background(), filepath.Join(filepath.Dir(path), "x.sqlitedb")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
