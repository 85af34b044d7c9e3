package config

import (
	"fmt"
	"net/mail"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/tidings-mcp/tidings/internal/account"
)

// Mail is the [mail] table.
type Mail struct {
	Accounts []MailAccount `toml:"accounts"`
}

// MailAccount is one [[mail.accounts]] entry (docs/configuration.md
// "Accounts"). It reads from IMAP or a Maildir and sends through SMTP.
type MailAccount struct {
	// Name is the account half of every "Account/Mailbox" path.
	Name string `toml:"name"`
	// IMAP and SMTP are URLs under the URL rule (internal/account).
	IMAP string `toml:"imap"`
	SMTP string `toml:"smtp"`
	// Username logs in to IMAP and SMTP.
	Username string `toml:"username"`
	// PasswordEnv names a variable holding the password; PasswordCmd is
	// the argv of a command printing it. Exactly one when a server is set.
	PasswordEnv string   `toml:"password_env"`
	PasswordCmd []string `toml:"password_cmd"`
	// Auth is "password" (default) or "xoauth2" (the password source then
	// prints an OAuth access token).
	Auth string `toml:"auth"`
	// From lists the addresses this account may send as.
	From []string `toml:"from"`
	// Maildir is a local Maildir folder read instead of (or besides) IMAP.
	Maildir string `toml:"maildir"`
	// AppleMail is Mail.app's store folder on a Mac (~/Library/Mail/V10)
	// and AppleMailAccount the account's folder name there; read without
	// credentials, never written (docs/configuration.md "Accounts").
	AppleMail        string `toml:"applemail"`
	AppleMailAccount string `toml:"applemail_account"`
	// CAFile is an absolute path to PEM CA certificates trusted instead of
	// the system's for this account's servers.
	CAFile string `toml:"ca_file"`
	// SentCopy = false stops mail_send from appending the sent message to
	// the account's Sent mailbox (for servers that file it themselves,
	// as Gmail does); unset means true.
	SentCopy *bool `toml:"sent_copy"`
}

// KeepsSentCopy reports whether mail_send appends to Sent.
func (a MailAccount) KeepsSentCopy() bool { return a.SentCopy == nil || *a.SentCopy }

// Password is the account's password source.
func (a MailAccount) Password() account.PasswordSource {
	return account.PasswordSource{Account: fmt.Sprintf("mail account %q", a.Name), Env: a.PasswordEnv, Cmd: a.PasswordCmd}
}

// Calendar is the [calendar] table: CalDAV accounts and ICS files or URLs.
type Calendar struct {
	Accounts []DAVAccount   `toml:"accounts"`
	Files    []CalendarFile `toml:"files"`
}

// DAVAccount is one [[calendar.accounts]] (CalDAV) or [[contacts.accounts]]
// (CardDAV) entry.
type DAVAccount struct {
	Name string `toml:"name"`
	// URL is the server's https:// URL (http:// to loopback only).
	URL      string `toml:"url"`
	Username string `toml:"username"`
	// Exactly one of PasswordEnv and PasswordCmd when Username is set.
	PasswordEnv string   `toml:"password_env"`
	PasswordCmd []string `toml:"password_cmd"`
	CAFile      string   `toml:"ca_file"`
	// Email is the user's own address on a calendar account: the
	// ORGANIZER of events created with attendees (default: the username
	// when it is an address). Unused by contacts accounts.
	Email string `toml:"email"`
}

// ContactAccount is one [[contacts.accounts]] entry: a CardDAV account
// (URL, with the DAVAccount fields) or a local folder of vCard files, one
// card per .vcf (Folder) — exactly one of the two (docs/configuration.md,
// "Contacts").
type ContactAccount struct {
	Name string `toml:"name"`
	// URL is the CardDAV server's https:// URL (http:// to loopback only).
	URL      string `toml:"url"`
	Username string `toml:"username"`
	// Exactly one of PasswordEnv and PasswordCmd when Username is set.
	PasswordEnv string   `toml:"password_env"`
	PasswordCmd []string `toml:"password_cmd"`
	CAFile      string   `toml:"ca_file"`
	// Folder is an absolute path to a folder of .vcf files; with Kind
	// "mac-contacts" the AddressBook folder (default: the user's).
	Folder string `toml:"folder"`
	// Kind "mac-contacts" is the Mac's own address book, read from its
	// store and written through Contacts.app on macOS; "" is CardDAV (URL)
	// or a vCard folder.
	Kind string `toml:"kind"`
}

// KindMacContacts is the ContactAccount kind of the Mac's address book.
const KindMacContacts = "mac-contacts"

// DAV is the CardDAV half of the entry.
func (a ContactAccount) DAV() DAVAccount {
	return DAVAccount{Name: a.Name, URL: a.URL, Username: a.Username, PasswordEnv: a.PasswordEnv, PasswordCmd: a.PasswordCmd, CAFile: a.CAFile}
}

// CalendarFile is one [[calendar.files]] entry: an ICS file (Path) or URL,
// or with Kind "apple-calendar" the Mac's own Calendar.sqlitedb (Path),
// read-only (docs/tools.md, "The Mac's own Calendar store").
type CalendarFile struct {
	Name string `toml:"name"`
	Path string `toml:"path"`
	URL  string `toml:"url"`
	// Kind is "" or "ics" (an ICS file or URL) or "apple-calendar".
	Kind string `toml:"kind"`
}

// CalendarKindApple is the [[calendar.files]] kind of the Mac's Calendar store.
const CalendarKindApple = "apple-calendar"

// envName is what password_env may hold: a portable variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// foldName is the form names are compared in for uniqueness: the same
// folding the scope fields match with, so two names a profile could not
// tell apart are refused here.
func foldName(s string) string { return cases.Fold().String(norm.NFC.String(s)) }

// validateAccounts checks every account table; each error is one sentence
// naming the account (or its position when the name is missing).
func (c *Config) validateAccounts() error {
	var names nameSet
	for i, a := range c.Mail.Accounts {
		id, err := names.check("mail", "mail account", i, a.Name)
		if err != nil {
			return err
		}
		if err := checkMail(id, a); err != nil {
			return err
		}
	}
	names = nameSet{}
	for i, a := range c.Calendar.Accounts {
		id, err := names.check("calendar", "calendar account", i, a.Name)
		if err != nil {
			return err
		}
		if err := checkDAV(id, a); err != nil {
			return err
		}
	}
	for i, f := range c.Calendar.Files {
		id, err := names.check("calendar", "calendar file", i, f.Name)
		if err != nil {
			return err
		}
		switch {
		case f.Kind != "" && f.Kind != "ics" && f.Kind != CalendarKindApple:
			return fmt.Errorf("%s: kind %q is not \"ics\" or %q", id, f.Kind, CalendarKindApple)
		case f.Kind == CalendarKindApple && (f.Path == "" || f.URL != ""):
			return fmt.Errorf("%s: kind %q needs path (the Calendar.sqlitedb file) and no url", id, CalendarKindApple)
		case (f.Path == "") == (f.URL == ""):
			return fmt.Errorf("%s: set exactly one of path and url", id)
		case f.URL != "":
			if _, err := account.ParseEndpoint(f.URL, account.HTTP); err != nil {
				return fmt.Errorf("%s: url: %w", id, err)
			}
		case !filepath.IsAbs(f.Path):
			return fmt.Errorf("%s: path %q must be an absolute path", id, f.Path)
		}
	}
	names = nameSet{}
	for i, a := range c.ContactAccounts {
		id, err := names.check("contacts", "contacts account", i, a.Name)
		if err != nil {
			return err
		}
		switch {
		case a.Kind != "" && a.Kind != KindMacContacts:
			return fmt.Errorf("%s: kind %q: want %q (the Mac's address book) or no kind", id, a.Kind, KindMacContacts)
		case a.Kind == KindMacContacts && (a.URL != "" || a.Username != "" || a.PasswordEnv != "" || a.PasswordCmd != nil || a.CAFile != ""):
			return fmt.Errorf("%s: the Mac's address book takes no url, username or password (only folder, its AddressBook folder)", id)
		case a.Kind == KindMacContacts && a.Folder != "" && !filepath.IsAbs(a.Folder):
			return fmt.Errorf("%s: folder %q must be an absolute path", id, a.Folder)
		case a.Kind == KindMacContacts:
			continue
		case (a.URL == "") == (a.Folder == ""):
			return fmt.Errorf("%s: set exactly one of url and folder", id)
		case a.Folder != "" && !filepath.IsAbs(a.Folder):
			return fmt.Errorf("%s: folder %q must be an absolute path", id, a.Folder)
		case a.Folder != "" && (a.Username != "" || a.PasswordEnv != "" || a.PasswordCmd != nil || a.CAFile != ""):
			return fmt.Errorf("%s: a folder takes no username or password (or ca_file)", id)
		case a.Folder != "":
			continue
		}
		if err := checkDAV(id, a.DAV()); err != nil {
			return err
		}
	}
	return nil
}

// nameSet holds the folded names of one service's accounts.
type nameSet map[string]string

// check validates one account name and returns how errors name the
// account: `mail account "work"`.
func (s *nameSet) check(service, kind string, i int, name string) (string, error) {
	if *s == nil {
		*s = nameSet{}
	}
	table := "[[" + service + ".accounts]]"
	if kind == "calendar file" {
		table = "[[calendar.files]]"
	}
	switch {
	case strings.TrimSpace(name) == "":
		return "", fmt.Errorf("%s entry %d: name is required", table, i+1)
	case strings.Contains(name, "/"):
		return "", fmt.Errorf("%s %q: a name must not contain \"/\" (it is the account half of Account/Name paths)", kind, name)
	case strings.TrimSpace(name) != name || strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", fmt.Errorf("%s %q: a name must not start or end with spaces or hold control characters", kind, name)
	}
	id := fmt.Sprintf("%s %q", kind, name)
	if prev, dup := (*s)[foldName(name)]; dup {
		return "", fmt.Errorf("%s: the name is already used by %s (names are unique per service, ignoring case)", id, prev)
	}
	(*s)[foldName(name)] = id
	return id, nil
}

func checkMail(id string, a MailAccount) error {
	if a.IMAP == "" && a.SMTP == "" && a.Maildir == "" && a.AppleMail == "" {
		return fmt.Errorf("%s: set imap, smtp, maildir or applemail", id)
	}
	if a.IMAP != "" {
		if _, err := account.ParseEndpoint(a.IMAP, account.IMAP); err != nil {
			return fmt.Errorf("%s: imap: %w", id, err)
		}
	}
	if a.SMTP != "" {
		if _, err := account.ParseEndpoint(a.SMTP, account.SMTP); err != nil {
			return fmt.Errorf("%s: smtp: %w", id, err)
		}
	}
	switch a.Auth {
	case "", "password", "xoauth2":
	default:
		return fmt.Errorf("%s: auth %q: want \"password\" or \"xoauth2\"", id, a.Auth)
	}
	if a.Maildir != "" && !filepath.IsAbs(a.Maildir) {
		return fmt.Errorf("%s: maildir %q must be an absolute path", id, a.Maildir)
	}
	if a.Maildir != "" && a.AppleMail != "" {
		return fmt.Errorf("%s: set maildir or applemail, not both", id)
	}
	if a.AppleMail != "" && !filepath.IsAbs(a.AppleMail) {
		return fmt.Errorf("%s: applemail %q must be an absolute path such as /Users/me/Library/Mail/V10", id, a.AppleMail)
	}
	if (a.AppleMail != "") != (a.AppleMailAccount != "") {
		return fmt.Errorf("%s: applemail and applemail_account go together (the account's folder name inside the applemail folder)", id)
	}
	if s := a.AppleMailAccount; s != "" && (s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00")) {
		return fmt.Errorf("%s: applemail_account %q must be a folder name inside the applemail folder", id, s)
	}
	for _, f := range a.From {
		if addr, err := mail.ParseAddress(f); err != nil || addr.Address != f {
			return fmt.Errorf("%s: from %q is not a bare e-mail address such as me@example.org", id, f)
		}
	}
	if err := checkPassword(id, a.IMAP != "" || a.SMTP != "", "no imap or smtp server would use it", a.Username, a.PasswordEnv, a.PasswordCmd); err != nil {
		return err
	}
	return checkCAFile(id, a.CAFile)
}

func checkDAV(id string, a DAVAccount) error {
	if a.URL == "" {
		return fmt.Errorf("%s: url is required", id)
	}
	if _, err := account.ParseEndpoint(a.URL, account.HTTP); err != nil {
		return fmt.Errorf("%s: url: %w", id, err)
	}
	if err := checkPassword(id, a.Username != "", "username is empty", a.Username, a.PasswordEnv, a.PasswordCmd); err != nil {
		return err
	}
	if e := strings.TrimSpace(a.Email); e != "" {
		if m, err := mail.ParseAddress(e); err != nil || m.Address != e {
			return fmt.Errorf("%s: email %q must be a bare address such as ana@example.org", id, a.Email)
		}
	}
	return checkCAFile(id, a.CAFile)
}

// checkPassword: with needed, a username and exactly one password source;
// without, no password source (it would be silently unused; unused says
// why).
func checkPassword(id string, needed bool, unused, username, env string, cmd []string) error {
	hasCmd := cmd != nil
	switch {
	case env != "" && hasCmd:
		return fmt.Errorf("%s: set password_env or password_cmd, not both", id)
	case !needed && (env != "" || hasCmd):
		return fmt.Errorf("%s: a password is set but %s", id, unused)
	case needed && username == "":
		return fmt.Errorf("%s: username is required", id)
	case needed && env == "" && !hasCmd:
		return fmt.Errorf("%s: set password_env (a variable's name) or password_cmd (a command printing the password); a password never sits in config.toml", id)
	case env != "" && !envName.MatchString(env):
		// Not quoted: a password pasted here by mistake must not be echoed.
		return fmt.Errorf("%s: password_env must be the name of an environment variable (letters, digits, _), not the password itself", id)
	case hasCmd && (len(cmd) == 0 || cmd[0] == ""):
		return fmt.Errorf("%s: password_cmd is empty: give the command and its arguments, e.g. [\"pass\", \"show\", \"mail/work\"]", id)
	}
	return nil
}

func checkCAFile(id, path string) error {
	if path != "" && !filepath.IsAbs(path) {
		return fmt.Errorf("%s: ca_file %q must be an absolute path", id, path)
	}
	return nil
}
