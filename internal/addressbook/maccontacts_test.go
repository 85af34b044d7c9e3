package addressbook

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/send"
)

// macStore writes a synthetic AddressBook store (the read source's
// fixture schema, internal/contacts/testdata) holding one person, Ana
// Lima, with a labelled phone, an e-mail and a note; it returns the
// AddressBook folder.
func macStore(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	ddl, err := os.ReadFile(filepath.Join("..", "contacts", "testdata", "addressbook-v22.synthetic.sql"))
	must(t, err)
	db, err := sql.Open("sqlite", filepath.Join(root, "AddressBook-v22.abcddb"))
	must(t, err)
	defer db.Close()
	for _, s := range []string{string(ddl),
		`INSERT INTO Z_PRIMARYKEY VALUES (1,'ABCDRecord',0,20),(19,'ABCDContact',1,20),(20,'ABCDGroup',1,20)`,
		`INSERT INTO ZABCDRECORD (Z_PK, Z_ENT, ZFIRSTNAME, ZLASTNAME, ZORGANIZATION, ZUNIQUEID) VALUES (1, 19, 'Ana', 'Lima', 'Lima Export', 'A1:ABPerson')`,
		`INSERT INTO ZABCDRECORD (Z_PK, Z_ENT, ZNAME, ZUNIQUEID) VALUES (2, 20, 'Family', 'G1:ABGroup')`,
		`INSERT INTO ZABCDPHONENUMBER (Z_PK, ZOWNER, ZORDERINGINDEX, ZFULLNUMBER, ZLABEL) VALUES (10, 1, 0, '+55 11 91234 5678', '_$!<Mobile>!$_')`,
		`INSERT INTO ZABCDEMAILADDRESS (Z_PK, ZOWNER, ZORDERINGINDEX, ZADDRESS) VALUES (20, 1, 0, 'ana@example.com.br')`,
		`INSERT INTO ZABCDNOTE (Z_PK, ZCONTACT, ZTEXT) VALUES (30, 1, 'met in São Paulo')`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("fixture: %v\n%s", err, s)
		}
	}
	return filepath.Join(root)
}

// contactsApp is a fake Contacts.app behind osascript: it checks the
// script it is given is the constant one, applies the argv to the store
// as Contacts would, and prints the person's id. res, when set, is
// returned instead (a refusal, a timeout).
type contactsApp struct {
	t    *testing.T
	root string
	res  *send.RunResult
	cmds []send.Command
	next int
}

func (a *contactsApp) Run(_ context.Context, c send.Command) (send.RunResult, error) {
	a.cmds = append(a.cmds, c)
	if a.res != nil {
		return *a.res, nil
	}
	script, err := os.ReadFile(c.Args[0])
	if err != nil || string(script) != writePersonScript || c.Timeout != MacContactsRunTimeout {
		a.t.Errorf("osascript got another script or no timeout: %v %s", err, c.Timeout)
	}
	db, err := sql.Open("sqlite", filepath.Join(a.root, "AddressBook-v22.abcddb"))
	must(a.t, err)
	defer db.Close()
	exec := func(q string, args ...any) {
		if _, err := db.Exec(q, args...); err != nil {
			a.t.Fatalf("contacts app: %v", err)
		}
	}
	op, id, argv := c.Args[1], c.Args[2], c.Args[3:]
	var pk int64
	switch op {
	case "delete":
		must(a.t, db.QueryRow(`SELECT Z_PK FROM ZABCDRECORD WHERE ZUNIQUEID = ?`, id).Scan(&pk))
		exec(`DELETE FROM ZABCDRECORD WHERE Z_PK = ?`, pk)
		return send.RunResult{Stdout: id + "\n"}, nil
	case "create":
		a.next++
		id = fmt.Sprintf("NEW-%d:ABPerson", a.next)
		pk = int64(100 + a.next)
		exec(`INSERT INTO ZABCDRECORD (Z_PK, Z_ENT, ZUNIQUEID) VALUES (?, 19, ?)`, pk, id)
	default:
		must(a.t, db.QueryRow(`SELECT Z_PK FROM ZABCDRECORD WHERE ZUNIQUEID = ?`, id).Scan(&pk))
	}
	exec(`UPDATE ZABCDRECORD SET ZFIRSTNAME = ?, ZMIDDLENAME = ?, ZLASTNAME = ?, ZNICKNAME = ?, ZORGANIZATION = ? WHERE Z_PK = ?`,
		argv[0], argv[1], argv[2], argv[3], argv[4], pk)
	exec(`DELETE FROM ZABCDNOTE WHERE ZCONTACT = ?`, pk)
	exec(`INSERT INTO ZABCDNOTE (ZCONTACT, ZTEXT) VALUES (?, ?)`, pk, argv[5])
	rest := argv[6:]
	for _, tbl := range []struct{ table, col string }{{"ZABCDPHONENUMBER", "ZFULLNUMBER"}, {"ZABCDEMAILADDRESS", "ZADDRESS"}} {
		if rest[0] == "keep" {
			rest = rest[1:]
			continue
		}
		n, _ := strconv.Atoi(rest[0])
		exec(`DELETE FROM `+tbl.table+` WHERE ZOWNER = ?`, pk)
		for i := range n {
			exec(`INSERT INTO `+tbl.table+` (ZOWNER, ZORDERINGINDEX, `+tbl.col+`, ZLABEL) VALUES (?, ?, ?, ?)`, pk, i, rest[2+2*i], rest[1+2*i])
		}
		rest = rest[1+2*n:]
	}
	return send.RunResult{Stdout: id + "\n"}, nil
}

func macBackend(t *testing.T) (*MacContacts, *contactsApp) {
	root := macStore(t)
	b := NewMacContacts("Mac", root)
	b.writes, b.pause = true, time.Millisecond
	app := &contactsApp{t: t, root: root}
	b.Runner = app
	return b, app
}

// TestMacContactsCommandCarriesDataInArgv: the script is a constant that
// reads argv; every value — a name holding AppleScript, labels, a note —
// is one argument; an update passes unchanged phones or e-mail addresses
// as "keep" (their labels in Contacts stay); a delete passes only the id.
func TestMacContactsCommandCarriesDataInArgv(t *testing.T) {
	b := NewMacContacts("Mac", "/x")
	hostile := `Lena" & do shell script "rm -rf ~`
	p := macPerson{first: hostile, last: "Fischer", note: "line one\nline two", phones: []Typed{{"mobile", "030 1234567"}, {"", "+49 30 7654321"}},
		emails: []Typed{{"work", "lena@example.de"}}}
	tests := []struct {
		promise string
		op, id  string
		cur     *macPerson
		want    []string
	}{
		{"a create carries every field as one argument", "create", "", nil,
			[]string{"/s", "create", "", hostile, "", "Fischer", "", "", "line one\nline two", "2", "mobile", "030 1234567", "other", "+49 30 7654321", "1", "work", "lena@example.de"}},
		{"an update keeps unchanged lists", "update", "A1:ABPerson", &macPerson{phones: []Typed{{"", "030 1234567"}, {"", "+49 30 7654321"}}},
			[]string{"/s", "update", "A1:ABPerson", hostile, "", "Fischer", "", "", "line one\nline two", "keep", "1", "work", "lena@example.de"}},
		{"a delete is the id alone", "delete", "A1:ABPerson", nil, []string{"/s", "delete", "A1:ABPerson"}},
	}
	for _, tc := range tests {
		cmd := b.writeCommand("/s", tc.op, tc.id, p, tc.cur)
		if cmd.Path != "/usr/bin/osascript" || cmd.Timeout != MacContactsRunTimeout || !slices.Equal(cmd.Args, tc.want) {
			t.Errorf("%s: command = %s %q (timeout %s), want %q", tc.promise, cmd.Path, cmd.Args, cmd.Timeout, tc.want)
		}
	}
	if strings.Contains(writePersonScript, "%") || !strings.Contains(writePersonScript, "on run argv") {
		t.Error("the write script is not a constant reading argv")
	}
}

// TestMacContactsWritesThroughContactsApp: the ten tools on the Mac's
// address book through a real MCP client: cards read from the store, a
// create, an update and a delete run the script and are read back from
// the store; a stale etag or a field Contacts is not given is refused
// before osascript runs; groups are refused.
func TestMacContactsWritesThroughContactsApp(t *testing.T) {
	b, app := macBackend(t)
	cs := clients(t, nil, ContactsService(testStore(policyHome(t, false), b)))["stdio"]
	const anaID = "Mac/A1:ABPerson"

	var got cardResult
	ok(t, cs, "contacts_get", map[string]any{"id": anaID}, &got)
	if c := got.Contact; c.Name != "Ana Lima" || c.Org != "Lima Export" || len(c.Phones) != 1 || !strings.Contains(c.Note, "met in São Paulo") {
		t.Fatalf("ana from the store: %+v", c)
	}
	anaTag := got.Contact.ETag

	ok(t, cs, "contacts_create", map[string]any{"name": "Lena Fischer", "phones": []string{"mobile: 030 1234567"}, "note": "met in Berlin"}, &got)
	if c := got.Contact; c.ID != "Mac/NEW-1:ABPerson" || c.Name != "Lena Fischer" || len(c.Phones) != 1 || c.Phones[0].Value != "030 1234567" || !strings.Contains(c.Note, "met in Berlin") {
		t.Errorf("created and read back: %+v", c)
	}

	ran := len(app.cmds)
	for _, tc := range []struct {
		promise string
		args    map[string]any
		want    string
	}{
		{"a stale etag", map[string]any{"id": anaID, "etag": "stale", "note": "x"}, "changed"},
		{"an address", map[string]any{"id": anaID, "addresses": []string{"Rua A 1"}}, "set the others in Contacts"},
		{"a birthday", map[string]any{"id": anaID, "birthday": "1990-01-01"}, "set the others in Contacts"},
	} {
		if msg, _, _ := call(t, cs, "contacts_update", tc.args, nil); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q, want %q", tc.promise, msg, tc.want)
		}
	}
	if len(app.cmds) != ran {
		t.Errorf("osascript ran for a refused update: %q", app.cmds[ran:])
	}

	ok(t, cs, "contacts_update", map[string]any{"id": anaID, "etag": anaTag, "note": "now in Lisbon"}, &got)
	if c := got.Contact; !strings.Contains(c.Note, "now in Lisbon") || len(c.Phones) != 1 || c.ETag == anaTag {
		t.Errorf("updated and read back: %+v", c)
	}
	if last := app.cmds[len(app.cmds)-1].Args; !slices.Equal(last[len(last)-2:], []string{"keep", "keep"}) {
		t.Errorf("an update of the note rewrote phones or e-mails (their labels): %q", last)
	}

	if msg, _, _ := call(t, cs, "contacts_create_group", map[string]any{"name": "Friends"}, nil); !strings.Contains(msg, "edited in the Contacts app") {
		t.Errorf("create_group: %q", msg)
	}

	var d deleteOut
	ok(t, cs, "contacts_delete", map[string]any{"id": anaID}, &d)
	if msg, _, _ := call(t, cs, "contacts_get", map[string]any{"id": anaID}, nil); !strings.Contains(msg, "there is no contact") {
		t.Errorf("get after delete: %q", msg)
	}
}

// TestMacContactsRefusalsAreOneSentence: off macOS the store is read-only;
// a stuck osascript names the consent prompt, -1743 the Automation grant,
// and a number quoted from the card's text is not taken for the code.
func TestMacContactsRefusalsAreOneSentence(t *testing.T) {
	ctx := context.Background()
	card := NewCard(false)
	card.Set("FN", "", "Lena")
	card.Set("N", "", ";Lena;;;")
	tests := []struct {
		promise string
		writes  bool
		res     *send.RunResult
		want    string
	}{
		{"read-only off macOS", false, nil, "read-only"},
		{"a stuck osascript", true, &send.RunResult{TimedOut: true}, "Automation"},
		{"-1743", true, &send.RunResult{ExitCode: 1, Stderr: "execution error: Not authorized to send Apple events to Contacts. (-1743)\n"}, "has not allowed Tidings to control Contacts"},
		{"a quoted (-1743)", true, &send.RunResult{ExitCode: 1, Stderr: "execution error: Can’t get \"(-1743) x\". (-1728)\n"}, "the Contacts app refused the change: execution error"},
	}
	for _, tc := range tests {
		b, app := macBackend(t)
		b.writes, app.res = tc.writes, tc.res
		_, err := b.Put(ctx, Book{}, "", "", card.Encode(), Cond{IfNoneMatch: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.promise == "a quoted (-1743)" && strings.Contains(err.Error(), "not allowed")) {
			t.Errorf("%s: err = %v, want %q", tc.promise, err, tc.want)
		}
	}
}
