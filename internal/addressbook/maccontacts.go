package addressbook

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/send"
)

// MacContacts is a [[contacts.accounts]] entry of kind "mac-contacts": the
// Mac's own address book (docs/tools.md, "Contacts"). Its cards are read
// from the AddressBook store through internal/contacts' read source (read
// only, never written); on macOS a write goes through Contacts.app — one
// constant AppleScript, every value an argument, run by osascript with a
// bounded wait (the pattern of internal/calendar's Calendar.app writes) —
// and is then read back from the store. Groups of the Mac's address book
// are not read, so they are edited in Contacts.
type MacContacts struct {
	name, root string
	// writes is true on macOS (maccontacts_darwin.go).
	writes bool
	// Runner runs osascript; nil means send.ExecRunner (tests fake it).
	Runner send.Runner
	// Osascript is the program; "" means /usr/bin/osascript.
	Osascript string
	// pause is the wait between read-back tries (tests shorten it).
	pause time.Duration

	mu sync.Mutex
	// stale maps a person's id to the ETag an update replaced, until the
	// store shows the change (Contacts.app saves asynchronously).
	stale map[string]string
}

// MacContactsRunTimeout bounds one osascript run: a stuck osascript (most
// often an unanswered Automation consent prompt) is stopped, not waited on.
const MacContactsRunTimeout = 30 * time.Second

// macReadBackTries bounds how long a read-back waits for Contacts.app to
// store a write: this many reads, pause apart.
const macReadBackTries = 10

// macHref prefixes a person's id to make its href.
const macHref = "contacts-app:"

//go:embed scripts/write_person.applescript
var writePersonScript string

var (
	errMacReadOnly = errors.New("the Mac's address book is written through the Contacts app, on macOS only; off macOS it is read-only")
	errMacGroups   = errors.New("groups of the Mac's address book are edited in the Contacts app")
)

// NewMacContacts returns the backend of the AddressBook folder (or one
// AddressBook-v22.abcddb) at root.
func NewMacContacts(name, root string) *MacContacts {
	return &MacContacts{name: name, root: root, writes: macContactsWrites, pause: 300 * time.Millisecond, stale: map[string]string{}}
}

// DefaultMacAddressBook is where macOS keeps the user's address book.
func DefaultMacAddressBook() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "Library", "Application Support", "AddressBook")
}

// Account implements Backend.
func (m *MacContacts) Account() string { return m.name }

// Kind implements Backend.
func (m *MacContacts) Kind() string { return "mac-contacts" }

// Books implements Backend: the Mac's address book is one book.
func (m *MacContacts) Books(context.Context) ([]Book, error) {
	return []Book{{Account: m.name, Name: "Contacts", Href: macHref}}, nil
}

// Objects implements Backend.
func (m *MacContacts) Objects(ctx context.Context, _ Book) ([]Object, error) {
	return m.read(ctx)
}

// read turns every person of the store with a unique id into a vCard 3.0
// card (UID = Contacts.app's person id); the ETag is the card's SHA-256.
func (m *MacContacts) read(ctx context.Context) ([]Object, error) {
	dbs, err := contacts.FindAddressBooks(m.root)
	if err != nil {
		return nil, fmt.Errorf("contacts account %q: %w", m.name, err)
	}
	var out []Object
	for _, db := range dbs {
		people, err := contacts.ReadAddressBook(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("contacts account %q: %w", m.name, err)
		}
		extras, err := contacts.ReadAddressBookExtras(ctx, db)
		if err != nil {
			return nil, fmt.Errorf("contacts account %q: %w", m.name, err)
		}
		for _, p := range people {
			ex, ok := extras[p.ID]
			if !ok {
				continue
			}
			data := macCard(p, ex)
			sum := sha256.Sum256(data)
			out = append(out, Object{Href: macHref + ex.UniqueID, ETag: hex.EncodeToString(sum[:]), Data: data})
		}
	}
	slices.SortFunc(out, func(a, b Object) int { return strings.Compare(a.Href, b.Href) })
	return out, nil
}

func macCard(p model.Contact, ex contacts.AddressBookExtra) []byte {
	c := &Card{}
	c.Add("VERSION", "", "3.0")
	c.Add("PRODID", "", "-//Tidings//Mac Contacts//EN")
	c.Add("UID", "", Escape(ex.UniqueID))
	c.Add("FN", "", Escape(p.Name()))
	c.Add("N", "", Escape(p.Last)+";"+Escape(p.First)+";"+Escape(p.Middle)+";;")
	if p.Nickname != "" {
		c.Add("NICKNAME", "", Escape(p.Nickname))
	}
	if p.Organization != "" {
		c.Add("ORG", "", Escape(p.Organization))
	}
	for _, v := range p.Phones {
		c.Add("TEL", "", Escape(v))
	}
	for _, v := range p.Emails {
		c.Add("EMAIL", "", Escape(v))
	}
	if ex.Note != "" {
		c.Add("NOTE", "", Escape(ex.Note))
	}
	return c.Encode()
}

// current reads the object at href now (no waiting).
func (m *MacContacts) current(ctx context.Context, href string) (Object, bool, error) {
	objs, err := m.read(ctx)
	if err != nil {
		return Object{}, false, err
	}
	for _, o := range objs {
		if o.Href == href {
			return o, true, nil
		}
	}
	return Object{}, false, nil
}

// Get implements Backend. After a write it waits, a bounded time, for the
// store to show it: a new person to appear, an updated one to change.
func (m *MacContacts) Get(ctx context.Context, href string) (Object, error) {
	id, ok := strings.CutPrefix(href, macHref)
	if !ok || id == "" {
		return Object{}, ErrNotFound
	}
	m.mu.Lock()
	old, waiting := m.stale[id]
	m.mu.Unlock()
	for try := 0; ; try++ {
		o, found, err := m.current(ctx, href)
		if err != nil {
			return Object{}, err
		}
		if found && (!waiting || o.ETag != old) {
			m.mu.Lock()
			delete(m.stale, id)
			m.mu.Unlock()
			return o, nil
		}
		if try+1 >= macReadBackTries {
			if found {
				return Object{}, errors.New("the Contacts app has not stored the change yet; read the card again with contacts_get shortly")
			}
			return Object{}, ErrNotFound
		}
		select {
		case <-ctx.Done():
			return Object{}, ctx.Err()
		case <-time.After(m.pause):
		}
	}
}

// macPerson is what the script writes: the fields Contacts.app is given.
type macPerson struct {
	first, middle, last, nickname, org, note string
	phones, emails                           []Typed
}

// macWritable lists the properties a card written through Contacts.app
// may hold: a card with anything else (an address, a birthday, a photo,
// an X- field) is refused rather than written without it.
var macWritable = []string{"VERSION", "PRODID", "UID", "FN", "N", "NICKNAME", "ORG", "TEL", "EMAIL", "NOTE", "REV"}

// macPersonOf reads the writable fields of a card.
func macPersonOf(c *Card) (macPerson, error) {
	for _, p := range c.Props {
		if !slices.Contains(macWritable, p.Name) {
			return macPerson{}, fmt.Errorf("the Mac's Contacts app is given names, organisation, phones, e-mail addresses and a note only (not %s): set the others in Contacts", p.Name)
		}
	}
	v := c.View()
	n := SplitValue(c.Raw("N"), ';')
	for i := range n {
		n[i] = strings.TrimSpace(Unescape(n[i]))
	}
	if at(n, 3) != "" || at(n, 4) != "" {
		return macPerson{}, errors.New("the Mac's Contacts app is given no name prefix or suffix through Tidings: set them in Contacts")
	}
	p := macPerson{first: v.Given, middle: at(n, 2), last: v.Family, nickname: v.Nickname, org: v.Org, note: v.Note, phones: v.Phones, emails: v.Emails}
	if p.first == "" && p.last == "" && p.org == "" {
		p.first = v.FullName
	}
	return p, nil
}

// writeCommand builds the osascript run of one operation. Everything
// variable is an argument (`on run argv`), never script source. With cur
// (an update), phones or e-mail addresses whose values did not change are
// passed as "keep", so their labels in Contacts stay.
func (m *MacContacts) writeCommand(scriptPath, op, id string, p macPerson, cur *macPerson) send.Command {
	prog := m.Osascript
	if prog == "" {
		prog = "/usr/bin/osascript"
	}
	args := []string{scriptPath, op, id}
	if op != "delete" {
		args = append(args, p.first, p.middle, p.last, p.nickname, p.org, p.note)
		list := func(now []Typed, before func(*macPerson) []Typed) {
			if cur != nil && slices.Equal(values(now), values(before(cur))) {
				args = append(args, "keep")
				return
			}
			args = append(args, strconv.Itoa(len(now)))
			for _, t := range now {
				label := t.Type
				if label == "" {
					label = "other"
				}
				args = append(args, label, t.Value)
			}
		}
		list(p.phones, func(q *macPerson) []Typed { return q.phones })
		list(p.emails, func(q *macPerson) []Typed { return q.emails })
	}
	return send.Command{Path: prog, Args: args, Timeout: MacContactsRunTimeout}
}

func values(ts []Typed) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Value
	}
	return out
}

// run writes the script to a private temporary file and runs one
// operation; it returns the person's id the script printed.
func (m *MacContacts) run(ctx context.Context, op, id string, p macPerson, cur *macPerson) (string, error) {
	dir, err := os.MkdirTemp("", "tidings-contacts-")
	if err != nil {
		return "", fmt.Errorf("contacts: %w", err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "write_person.applescript")
	if err := os.WriteFile(script, []byte(writePersonScript), 0o600); err != nil {
		return "", fmt.Errorf("contacts: write script: %w", err)
	}
	cmd := m.writeCommand(script, op, id, p, cur)
	runner := m.Runner
	if runner == nil {
		runner = send.ExecRunner{}
	}
	res, err := runner.Run(ctx, cmd)
	switch {
	case err != nil:
		return "", fmt.Errorf("contacts: osascript could not run: %w", err)
	case res.TimedOut:
		return "", fmt.Errorf("the Contacts app did not answer within %s; if macOS is asking whether Tidings may control Contacts, allow it (System Settings → Privacy & Security → Automation) and try again", cmd.Timeout)
	case res.ExitCode != 0:
		return "", fmt.Errorf("the Contacts app refused the change: %s", contactsScriptError(res.Stderr))
	}
	got := strings.TrimSpace(res.Stdout)
	if got == "" || strings.ContainsAny(got, "\r\n") {
		return "", errors.New("the Contacts app made the change but did not say which person; check Contacts")
	}
	return got, nil
}

// contactsScriptError is one clipped line of osascript's stderr; -1743
// (Automation not allowed) gets its fix. Only the number osascript writes
// at the very end is read, never one quoted from the card's text.
func contactsScriptError(stderr string) string {
	s := strings.TrimSpace(stderr)
	if strings.HasSuffix(s, "(-1743)") {
		return "macOS has not allowed Tidings to control Contacts (error -1743); allow it in System Settings → Privacy & Security → Automation"
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "osascript failed without a message"
	}
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}

// Put implements Backend: a new person (If-None-Match) or an update of one
// (If-Match, compared with the store just before the run) through
// Contacts.app. The href of a new person is its Contacts.app id.
func (m *MacContacts) Put(ctx context.Context, _ Book, _, href string, data []byte, cond Cond) (string, error) {
	if !m.writes {
		return "", errMacReadOnly
	}
	cards, err := ParseCards(data)
	if err != nil || len(cards) != 1 {
		return "", errors.New("the Contacts app is given one card at a time")
	}
	if cards[0].GroupKind() != "" {
		return "", errMacGroups
	}
	p, err := macPersonOf(cards[0])
	if err != nil {
		return "", err
	}
	switch {
	case cond.IfNoneMatch && href == "":
		id, err := m.run(ctx, "create", "", p, nil)
		if err != nil {
			return "", err
		}
		return macHref + id, nil
	case href != "" && cond.IfMatch != "":
		id := strings.TrimPrefix(href, macHref)
		cur, found, err := m.current(ctx, href)
		switch {
		case err != nil:
			return "", err
		case !found:
			return "", ErrNotFound
		case cur.ETag != cond.IfMatch:
			return "", ErrPrecondition
		}
		curCards, err := ParseCards(cur.Data)
		if err != nil || len(curCards) != 1 {
			return "", errors.New("the Mac's address book holds this person in a form Tidings cannot read back")
		}
		was, err := macPersonOf(curCards[0])
		if err != nil {
			return "", err
		}
		if p.first == was.first && p.middle == was.middle && p.last == was.last && p.nickname == was.nickname && p.org == was.org &&
			p.note == was.note && slices.Equal(values(p.phones), values(was.phones)) && slices.Equal(values(p.emails), values(was.emails)) {
			return href, nil // nothing Contacts holds changes
		}
		if _, err := m.run(ctx, "update", id, p, &was); err != nil {
			return "", err
		}
		m.mu.Lock()
		m.stale[id] = cur.ETag
		m.mu.Unlock()
		return href, nil
	}
	return "", errors.New("the Contacts app is given a new person or an update of one read just before")
}

// Delete implements Backend: If-Match against the store, then
// Contacts.app deletes the person; the store is read until it is gone.
func (m *MacContacts) Delete(ctx context.Context, href, etag string) error {
	if !m.writes {
		return errMacReadOnly
	}
	cur, found, err := m.current(ctx, href)
	switch {
	case err != nil:
		return err
	case !found:
		return ErrNotFound
	case etag != "" && cur.ETag != etag:
		return ErrPrecondition
	}
	if _, err := m.run(ctx, "delete", strings.TrimPrefix(href, macHref), macPerson{}, nil); err != nil {
		return err
	}
	for try := 0; ; try++ {
		if _, found, err := m.current(ctx, href); err != nil || !found {
			return err
		}
		if try+1 >= macReadBackTries {
			return errors.New("the Contacts app has not removed the card yet; check Contacts")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(m.pause):
		}
	}
}

// UIDOf implements uidAssigner: Contacts.app gives a new person its own
// id, which is the card's UID when read back.
func (m *MacContacts) UIDOf(href string) string { return strings.TrimPrefix(href, macHref) }
