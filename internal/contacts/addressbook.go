package contacts

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Source names of the SQLite address books (model.Contact.Source).
const (
	SourceAddressBook    = "addressbook"     // macOS AddressBook-v22.abcddb
	SourceIOSAddressBook = "ios-addressbook" // iOS AddressBook.sqlitedb
)

// AddressBookFile is the file name of a macOS Contacts database.
const AddressBookFile = "AddressBook-v22.abcddb"

// ErrNoAddressBook means a folder holds no AddressBook database.
var ErrNoAddressBook = errors.New("no " + AddressBookFile + " found")

// FindAddressBooks returns every AddressBook-v22.abcddb of a macOS
// AddressBook folder (~/Library/Application Support/AddressBook): the
// top-level one and one per account in Sources/<UUID>/, sorted. A root
// that is itself an .abcddb file is returned as is. An unreadable folder
// is an error (on macOS without Full Disk Access it is fs.ErrPermission).
func FindAddressBooks(root string) ([]string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("address book folder: %w", err)
	}
	if !st.IsDir() {
		return []string{root}, nil
	}
	var found []string
	top := filepath.Join(root, AddressBookFile)
	if _, err := os.Stat(top); err == nil {
		found = append(found, top)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("address book: %w", err)
	}
	entries, err := os.ReadDir(filepath.Join(root, "Sources"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("address book sources: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(root, "Sources", e.Name(), AddressBookFile)
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("address book source %s: %w", e.Name(), err)
		}
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%s: %w", root, ErrNoAddressBook)
	}
	slices.Sort(found)
	return found, nil
}

// addressBookIDPrefix returns "<UUID>/" for a database in Sources/<UUID>/,
// so ids stay unique across the account databases; "" for the top level.
func addressBookIDPrefix(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(filepath.Dir(dir)) == "Sources" {
		return filepath.Base(dir) + "/"
	}
	return ""
}

// ReadAddressBook reads the contacts of one macOS AddressBook-v22.abcddb
// (Core Data). Contact rows are those of entity ABCDContact and its
// sub-entities, whose numbers are looked up in Z_PRIMARYKEY because they
// differ between macOS versions. IDs are the Core Data Z_PK, prefixed with
// the account folder's UUID for databases under Sources/.
func ReadAddressBook(ctx context.Context, path string) ([]model.Contact, error) {
	db, err := openReadOnly(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("address book: %w", err)
	}
	defer db.Close()
	cards, err := readAddressBook(ctx, db, addressBookIDPrefix(path))
	if err != nil {
		return nil, fmt.Errorf("address book %s: %w", path, err)
	}
	return cards, nil
}

// contactEntities returns the Z_ENT of ABCDContact and of every entity that
// inherits from it.
func contactEntities(ctx context.Context, db *sql.DB) ([]int64, error) {
	cols, err := columns(ctx, db, "Z_PRIMARYKEY")
	if err != nil {
		return nil, err
	}
	if !cols["Z_ENT"] || !cols["Z_NAME"] {
		return nil, errors.New("not a Core Data store: Z_PRIMARYKEY is missing")
	}
	rows, err := db.QueryContext(ctx, `SELECT Z_ENT, Z_NAME, `+colOr(cols, "Z_SUPER", "Z_SUPER")+` FROM Z_PRIMARYKEY`)
	if err != nil {
		return nil, fmt.Errorf("read Z_PRIMARYKEY: %w", err)
	}
	defer rows.Close()
	super := map[int64]int64{}
	var contact int64 = -1
	for rows.Next() {
		var ent int64
		var name sql.NullString
		var sup sql.NullInt64
		if err := rows.Scan(&ent, &name, &sup); err != nil {
			return nil, fmt.Errorf("read Z_PRIMARYKEY: %w", err)
		}
		if name.String == "ABCDContact" {
			contact = ent
		}
		super[ent] = sup.Int64
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read Z_PRIMARYKEY: %w", err)
	}
	if contact < 0 {
		return nil, errors.New("entity ABCDContact is not in Z_PRIMARYKEY")
	}
	var ents []int64
	for ent := range super {
		// Walk up the inheritance chain (bounded against cycles).
		for e, i := ent, 0; i < 32; e, i = super[e], i+1 {
			if e == contact {
				ents = append(ents, ent)
				break
			}
			if e == 0 {
				break
			}
		}
	}
	slices.Sort(ents)
	return ents, nil
}

func readAddressBook(ctx context.Context, db *sql.DB, idPrefix string) ([]model.Contact, error) {
	ents, err := contactEntities(ctx, db)
	if err != nil {
		return nil, err
	}
	rc, err := columns(ctx, db, "ZABCDRECORD")
	if err != nil {
		return nil, err
	}
	if !rc["Z_PK"] || !rc["Z_ENT"] {
		return nil, errors.New("table ZABCDRECORD is missing")
	}
	placeholders := strings.TrimSuffix(strings.Repeat("?,", len(ents)), ",")
	args := make([]any, len(ents))
	for i, e := range ents {
		args[i] = e
	}
	q := `SELECT Z_PK, ` + colOr(rc, "ZFIRSTNAME", "ZFIRSTNAME") + `, ` + colOr(rc, "ZMIDDLENAME", "ZMIDDLENAME") + `, ` +
		colOr(rc, "ZLASTNAME", "ZLASTNAME") + `, ` + colOr(rc, "ZNICKNAME", "ZNICKNAME") + `, ` +
		colOr(rc, "ZORGANIZATION", "ZORGANIZATION") + `, ` + colOr(rc, "ZMODIFICATIONDATE", "ZMODIFICATIONDATE") +
		` FROM ZABCDRECORD WHERE Z_ENT IN (` + placeholders + `) ORDER BY Z_PK`
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read ZABCDRECORD: %w", err)
	}
	defer rows.Close()
	var cards []model.Contact
	index := map[int64]int{}
	for rows.Next() {
		var pk int64
		var first, middle, last, nick, org sql.NullString
		var mod sql.NullFloat64
		if err := rows.Scan(&pk, &first, &middle, &last, &nick, &org, &mod); err != nil {
			return nil, fmt.Errorf("read ZABCDRECORD: %w", err)
		}
		index[pk] = len(cards)
		cards = append(cards, model.Contact{
			Source: SourceAddressBook, ID: idPrefix + strconv.FormatInt(pk, 10),
			First: str(first), Middle: str(middle), Last: str(last), Nickname: str(nick),
			Organization: str(org), Modified: appleTime(mod),
		})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read ZABCDRECORD: %w", err)
	}
	rows.Close()

	phones, err := readOwned(ctx, db, "ZABCDPHONENUMBER", "ZFULLNUMBER", index)
	if err != nil {
		return nil, err
	}
	emails, err := readOwned(ctx, db, "ZABCDEMAILADDRESS", "ZADDRESS", index)
	if err != nil {
		return nil, err
	}
	for i := range cards {
		cards[i].Phones = orderByLabel(phones[i])
		cards[i].Emails = orderByLabel(emails[i])
	}
	return cards, nil
}

// readOwned reads a multi-value table (phones, e-mails) keyed by ZOWNER and
// returns the values per card index, in the user's order. Rows owned by
// non-contact records are ignored; an absent table contributes nothing.
func readOwned(ctx context.Context, db *sql.DB, table, valueCol string, index map[int64]int) (map[int][]labelled, error) {
	cols, err := columns(ctx, db, table)
	if err != nil {
		return nil, err
	}
	out := map[int][]labelled{}
	if !cols["ZOWNER"] || !cols[valueCol] {
		return out, nil
	}
	order := "ZOWNER, " + colOr(cols, "ZORDERINGINDEX", "ZORDERINGINDEX") + ", " + colOr(cols, "Z_PK", "Z_PK")
	q := `SELECT ZOWNER, ` + valueCol + `, ` + colOr(cols, "ZLABEL", "ZLABEL") + ` FROM ` + table +
		` WHERE ZOWNER IS NOT NULL ORDER BY ` + order
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var owner int64
		var value, label sql.NullString
		if err := rows.Scan(&owner, &value, &label); err != nil {
			return nil, fmt.Errorf("read %s: %w", table, err)
		}
		i, ok := index[owner]
		v := str(value)
		if !ok || v == "" || len(out[i]) >= maxPerCard {
			continue
		}
		out[i] = append(out[i], labelled{v, labelRank(nil, str(label))})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", table, err)
	}
	return out, nil
}

// ReadIOSAddressBook reads the people of an iOS AddressBook.sqlitedb (as
// found in a device backup): ABPerson names and modification date, and the
// ABMultiValue rows with property 3 (phone) and 4 (e-mail), labels from
// ABMultiValueLabel. IDs are the ABPerson ROWID.
func ReadIOSAddressBook(ctx context.Context, path string) ([]model.Contact, error) {
	db, err := openReadOnly(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("ios address book: %w", err)
	}
	defer db.Close()
	cards, err := readIOSAddressBook(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("ios address book %s: %w", path, err)
	}
	return cards, nil
}

// iOS ABMultiValue property numbers.
const (
	iosPropertyPhone = 3
	iosPropertyEmail = 4
)

func readIOSAddressBook(ctx context.Context, db *sql.DB) ([]model.Contact, error) {
	pc, err := columns(ctx, db, "ABPerson")
	if err != nil {
		return nil, err
	}
	if len(pc) == 0 {
		return nil, errors.New("table ABPerson is missing")
	}
	q := `SELECT ROWID, ` + colOr(pc, "First", "First") + `, ` + colOr(pc, "Middle", "Middle") + `, ` +
		colOr(pc, "Last", "Last") + `, ` + colOr(pc, "Nickname", "Nickname") + `, ` +
		colOr(pc, "Organization", "Organization") + `, ` + colOr(pc, "ModificationDate", "ModificationDate") +
		` FROM ABPerson ORDER BY ROWID`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read ABPerson: %w", err)
	}
	defer rows.Close()
	var cards []model.Contact
	index := map[int64]int{}
	for rows.Next() {
		var id int64
		var first, middle, last, nick, org sql.NullString
		var mod sql.NullFloat64
		if err := rows.Scan(&id, &first, &middle, &last, &nick, &org, &mod); err != nil {
			return nil, fmt.Errorf("read ABPerson: %w", err)
		}
		index[id] = len(cards)
		cards = append(cards, model.Contact{
			Source: SourceIOSAddressBook, ID: strconv.FormatInt(id, 10),
			First: str(first), Middle: str(middle), Last: str(last), Nickname: str(nick),
			Organization: str(org), Modified: appleTime(mod),
		})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read ABPerson: %w", err)
	}
	rows.Close()

	mc, err := columns(ctx, db, "ABMultiValue")
	if err != nil {
		return nil, err
	}
	if !mc["RECORD_ID"] || !mc["PROPERTY"] || !mc["VALUE"] {
		return cards, nil
	}
	lc, err := columns(ctx, db, "ABMultiValueLabel")
	if err != nil {
		return nil, err
	}
	label, join := "NULL", ""
	if mc["LABEL"] && lc["VALUE"] {
		label, join = "l.value", ` LEFT JOIN ABMultiValueLabel l ON l.ROWID = mv.label`
	}
	rows, err = db.QueryContext(ctx, `SELECT mv.record_id, mv.property, mv.value, `+label+
		` FROM ABMultiValue mv`+join+` WHERE mv.property IN (?, ?) ORDER BY mv.record_id, mv.ROWID`,
		iosPropertyPhone, iosPropertyEmail)
	if err != nil {
		return nil, fmt.Errorf("read ABMultiValue: %w", err)
	}
	defer rows.Close()
	phones, emails := map[int][]labelled{}, map[int][]labelled{}
	for rows.Next() {
		var rec, prop int64
		var value, lab sql.NullString
		if err := rows.Scan(&rec, &prop, &value, &lab); err != nil {
			return nil, fmt.Errorf("read ABMultiValue: %w", err)
		}
		i, ok := index[rec]
		v := str(value)
		if !ok || v == "" {
			continue
		}
		m := phones
		if prop == iosPropertyEmail {
			m = emails
		}
		if len(m[i]) < maxPerCard {
			m[i] = append(m[i], labelled{v, labelRank(nil, str(lab))})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read ABMultiValue: %w", err)
	}
	for i := range cards {
		cards[i].Phones = orderByLabel(phones[i])
		cards[i].Emails = orderByLabel(emails[i])
	}
	return cards, nil
}

// AddressBookExtra is what the Contacts service needs beyond ReadAddressBook
// to write a person through Contacts.app (docs/tools.md, "Contacts"): the
// record's ZUNIQUEID, which is Contacts.app's person id, and its note.
type AddressBookExtra struct {
	UniqueID string
	Note     string
}

// ReadAddressBookExtras reads, keyed by the ids ReadAddressBook gives, the
// unique id and note of every record of one AddressBook-v22.abcddb (read
// only, like ReadAddressBook). A record without a unique id is left out; a
// store without a ZABCDNOTE table has no notes.
func ReadAddressBookExtras(ctx context.Context, path string) (map[string]AddressBookExtra, error) {
	db, err := openReadOnly(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("address book: %w", err)
	}
	defer db.Close()
	rc, err := columns(ctx, db, "ZABCDRECORD")
	if err != nil {
		return nil, err
	}
	if !rc["Z_PK"] || !rc["ZUNIQUEID"] {
		return nil, fmt.Errorf("address book %s: ZABCDRECORD has no ZUNIQUEID column", path)
	}
	nc, err := columns(ctx, db, "ZABCDNOTE")
	if err != nil {
		return nil, err
	}
	note := "NULL"
	if nc["ZCONTACT"] && nc["ZTEXT"] {
		note = "(SELECT n.ZTEXT FROM ZABCDNOTE n WHERE n.ZCONTACT = r.Z_PK ORDER BY n.Z_PK LIMIT 1)"
	}
	rows, err := db.QueryContext(ctx, `SELECT r.Z_PK, r.ZUNIQUEID, `+note+` FROM ZABCDRECORD r WHERE ifnull(r.ZUNIQUEID,'') != ''`)
	if err != nil {
		return nil, fmt.Errorf("address book %s: %w", path, err)
	}
	defer rows.Close()
	prefix := addressBookIDPrefix(path)
	out := map[string]AddressBookExtra{}
	for rows.Next() {
		var pk int64
		var uid, text sql.NullString
		if err := rows.Scan(&pk, &uid, &text); err != nil {
			return nil, fmt.Errorf("address book %s: %w", path, err)
		}
		out[prefix+strconv.FormatInt(pk, 10)] = AddressBookExtra{UniqueID: str(uid), Note: text.String}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("address book %s: %w", path, err)
	}
	return out, nil
}
