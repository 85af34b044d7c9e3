// Package scope is the generic machinery behind the profile's scope fields
// (docs/security.md, "Scope fields"; docs/configuration.md, "Profiles"):
// which field governs which resources, how an Account/Name path is parsed
// and compared, and ScopedRows, the pure seam every service that reaches
// accounts of resources (mail, calendars, reminders, contacts) decides its
// calls through. It imports no MCP code; internal/mcpserver turns the
// profile and a call's _meta["tidings/scope"] into a Scope in the call's
// context (FromContext), and turns a Violation into the result's
// _meta {"scope_violation": true}.
package scope

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Field is the name of one profile scope field, as written in a profile
// and in _meta["tidings/scope"].
type Field string

// The eight scope fields. Each account field bounds which accounts of a
// service a client reaches; each name field bounds which resources inside
// them, as Account/Name paths.
const (
	MailAccounts     Field = "mail_accounts"
	MailMailboxes    Field = "mail_mailboxes"
	CalendarAccounts Field = "calendar_accounts"
	Calendars        Field = "calendars"
	ReminderAccounts Field = "reminder_accounts"
	ReminderLists    Field = "reminder_lists"
	ContactAccounts  Field = "contact_accounts"
	ContactGroups    Field = "contact_groups"
)

// Spec says what one field governs.
type Spec struct {
	Field Field
	// Service is the toolset whose tools the field governs ("mail",
	// "calendar", "reminders", "addressbook").
	Service string
	// Noun names one thing the field's values name, for sentences
	// ("mail account", "mailbox").
	Noun string
	// Account is, for a name field, the account field it is ANDed with;
	// "" for an account field.
	Account Field
}

// IsAccount reports whether the field's values are account names (no
// "/") rather than Account/Name paths.
func (s Spec) IsAccount() bool { return s.Account == "" }

// Specs lists the eight fields in the order profiles document them.
// contact_accounts bounds cards and groups by account; contact_groups
// bounds only groups, because a card need not be in any group
// (docs/security.md, "Scope fields").
var Specs = []Spec{
	{MailAccounts, "mail", "mail account", ""},
	{MailMailboxes, "mail", "mailbox", MailAccounts},
	{CalendarAccounts, "calendar", "calendar account", ""},
	{Calendars, "calendar", "calendar", CalendarAccounts},
	{ReminderAccounts, "reminders", "reminder account", ""},
	{ReminderLists, "reminders", "reminder list", ReminderAccounts},
	{ContactAccounts, "addressbook", "contact account", ""},
	{ContactGroups, "addressbook", "contact group", ContactAccounts},
}

// Lookup returns the spec of a field name.
func Lookup(name string) (Spec, bool) {
	for _, s := range Specs {
		if string(s.Field) == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Pair is a service's two fields: its account field and its name field.
// ScopedRows ANDs them.
type Pair struct{ Account, Name Field }

// The four pairs.
var (
	Mail      = Pair{MailAccounts, MailMailboxes}
	Calendar  = Pair{CalendarAccounts, Calendars}
	Reminders = Pair{ReminderAccounts, ReminderLists}
	Contacts  = Pair{ContactAccounts, ContactGroups}
)

// Fold is the one comparison key of account names and paths: Unicode
// compatibility caseless matching (Unicode's D146: NFKD(casefold(NFKD(
// casefold(NFD(s)))))), recomposed to NFC. Case folding is full, so
// "Straße" matches "STRASSE"; canonical normalization makes a composed
// "é" match "e" + U+0301, which clients, file systems and sync servers
// spell either way; compatibility normalization makes a ligature or a
// full-width letter match its plain spelling. A coarser fold cannot widen
// a scope: ScopedRows counts the carriers of a value under this same fold,
// so two resources it merges make the value misconfigured (refused), never
// admit one silently.
func Fold(s string) string {
	f := cases.Fold()
	return norm.NFKC.String(f.String(norm.NFKD.String(f.String(norm.NFD.String(s)))))
}

// Path is an Account/Name path. An account name never contains "/"; a
// resource name may ("Projects/2026"), so a path splits at its first "/"
// and the name is matched whole, never split again.
type Path struct{ Account, Name string }

func (p Path) String() string { return p.Account + "/" + p.Name }

// ParsePath parses an Account/Name path: both halves non-empty and not
// blank, valid UTF-8, no control characters.
func ParsePath(s string) (Path, error) {
	if err := checkText(s); err != nil {
		return Path{}, err
	}
	acct, name, ok := strings.Cut(s, "/")
	switch {
	case !ok:
		return Path{}, fmt.Errorf("%q is not an Account/Name path", s)
	case strings.TrimSpace(acct) == "":
		return Path{}, fmt.Errorf("%q has no account before the first \"/\"", s)
	case strings.TrimSpace(name) == "":
		return Path{}, fmt.Errorf("%q has no name after the first \"/\"", s)
	case strings.Contains(Fold(acct), "/"):
		return Path{}, fmt.Errorf("%q: the account %q folds to a name containing \"/\"", s, acct)
	}
	return Path{acct, name}, nil
}

// CheckAccount checks an account name: not blank, no "/", valid UTF-8, no
// control characters.
func CheckAccount(s string) error {
	if err := checkText(s); err != nil {
		return err
	}
	if strings.TrimSpace(s) == "" {
		return errors.New("an account name may not be blank")
	}
	if strings.Contains(Fold(s), "/") {
		return fmt.Errorf("account name %q may not contain \"/\" (or a character that folds to it)", s)
	}
	return nil
}

// CheckValue checks one value of a field: an account name for an account
// field, an Account/Name path for a name field.
func CheckValue(f Field, v string) error {
	spec, ok := Lookup(string(f))
	if !ok {
		return fmt.Errorf("unknown scope field %q", f)
	}
	if spec.IsAccount() {
		return CheckAccount(v)
	}
	_, err := ParsePath(v)
	return err
}

func checkText(s string) error {
	if s == "" {
		return errors.New("a value may not be empty")
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%q is not valid UTF-8", s)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return fmt.Errorf("%q contains a control character", s)
	}
	return nil
}
