package config

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/testclock"
)

const fullAccounts = `
contacts = ["/home/me/contacts.vcf"]
timezone = "Europe/Berlin"

[[mail.accounts]]
name = "work"
imap = "imaps://imap.example.org"
smtp = "smtp+starttls://smtp.example.org"
username = "me@example.org"
password_cmd = ["pass", "show", "mail/work"]
from = ["me@example.org", "team@example.org"]
ca_file = "/etc/ssl/work-ca.pem"

[[mail.accounts]]
name = "Archive"
maildir = "/home/me/Maildir"

[[mail.accounts]]
name = "gmail"
imap = "imaps://imap.gmail.com"
username = "me@gmail.com"
auth = "xoauth2"
password_env = "GMAIL_TOKEN"

[[mail.accounts]]
name = "mac"
applemail = "/Users/me/Library/Mail/V10"
applemail_account = "6A1F3C2E-0B7D-4E59-9C1A-2F8E5D4B3A21"

[[calendar.accounts]]
name = "home"
url = "https://dav.example.org/calendars/me/"
username = "me"
password_env = "DAV_PASSWORD"

[[calendar.files]]
name = "holidays"
path = "/home/me/holidays.ics"

[[calendar.files]]
name = "team"
url = "http://127.0.0.1:8080/team.ics"
`

// TestAccountTablesParseFromTheFile: [[mail.accounts]],
// [[calendar.accounts]], [[calendar.files]] and [[contacts.accounts]] are
// read from config.toml with every field; the top-level contacts list keeps
// working next to the mail and calendar tables, and [[contacts.accounts]]
// parses when written without it (docs/configuration.md "Accounts").
func TestAccountTablesParseFromTheFile(t *testing.T) {
	c, err := load(t, "linux", nil, fullAccounts)
	if err != nil {
		t.Fatal(err)
	}
	want := []MailAccount{
		{Name: "work", IMAP: "imaps://imap.example.org", SMTP: "smtp+starttls://smtp.example.org", Username: "me@example.org",
			PasswordCmd: []string{"pass", "show", "mail/work"}, From: []string{"me@example.org", "team@example.org"}, CAFile: "/etc/ssl/work-ca.pem"},
		{Name: "Archive", Maildir: "/home/me/Maildir"},
		{Name: "gmail", IMAP: "imaps://imap.gmail.com", Username: "me@gmail.com", Auth: "xoauth2", PasswordEnv: "GMAIL_TOKEN"},
		{Name: "mac", AppleMail: "/Users/me/Library/Mail/V10", AppleMailAccount: "6A1F3C2E-0B7D-4E59-9C1A-2F8E5D4B3A21"},
	}
	if !reflect.DeepEqual(c.Mail.Accounts, want) {
		t.Errorf("mail accounts:\n got %+v\nwant %+v", c.Mail.Accounts, want)
	}
	eq(t, c.Origins["mail.accounts"], "file")
	eq(t, len(c.Calendar.Accounts), 1)
	eq(t, c.Calendar.Accounts[0].PasswordEnv, "DAV_PASSWORD")
	eq(t, c.Calendar.Files[1], CalendarFile{Name: "team", URL: "http://127.0.0.1:8080/team.ics"})
	eqs(t, c.Contacts, []string{"/home/me/contacts.vcf"})
	eq(t, c.Origins["contacts"], "file")
	eq(t, len(c.ContactAccounts), 0)
	pw := c.Mail.Accounts[0].Password()
	eq(t, pw.Account, `mail account "work"`)
	eqs(t, pw.Cmd, []string{"pass", "show", "mail/work"})

	// [[contacts.accounts]] alone: the table form; the macOS default
	// contacts list is left as it was.
	c, err = load(t, "darwin", map[string]string{"HOME": "/Users/u"}, `
[[contacts.accounts]]
name = "icloud"
url = "https://contacts.example.org/me/"
username = "me"
password_cmd = ["security", "find-generic-password", "-s", "carddav", "-w"]

[[contacts.accounts]]
name = "local"
url = "http://[::1]:5232/me/"
`)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, len(c.ContactAccounts), 2)
	eq(t, c.ContactAccounts[1].URL, "http://[::1]:5232/me/")
	eq(t, c.Origins["contacts.accounts"], "file")
	eqs(t, c.Contacts, []string{"/Users/u/Library/Application Support/AddressBook"})
	eq(t, c.Origins["contacts"], "default")

	// No accounts: nothing configured, nothing in Origins.
	c, err = load(t, "linux", nil, `region = "DE"`)
	if err != nil {
		t.Fatal(err)
	}
	if c.Mail.Accounts != nil || c.ContactAccounts != nil || c.Origins["mail.accounts"] != "" {
		t.Errorf("accounts without a file entry: %+v %+v", c.Mail, c.ContactAccounts)
	}
}

// TestBadAccountsAreRefusedNamingTheAccount: every account mistake stops
// the load with one sentence naming the account (or its entry number):
// unknown keys (listing the table's keys), a missing, slashed, padded or
// duplicate name (duplicates ignore case, per service), a missing or
// doubled password source, a password_cmd written as a shell line, a bad
// auth, URLs breaking the URL rule, relative paths, and both forms of
// contacts at once. No error echoes a password.
func TestBadAccountsAreRefusedNamingTheAccount(t *testing.T) {
	const okIMAP = "imap = \"imaps://m.example.org\"\nusername = \"u\"\npassword_env = \"PW\"\n"
	tests := []struct {
		name, file, wantErr string
	}{
		{"unknown account key", "[[mail.accounts]]\nname = \"a\"\n" + okIMAP + "pasword_cmd = [\"x\"]\n",
			`unknown key "mail.accounts.pasword_cmd" (keys of [[mail.accounts]]: name, imap, smtp, username, password_env, password_cmd`},
		{"unknown contacts account key", "[[contacts.accounts]]\nname = \"a\"\nurl = \"https://d.example.org\"\nuser = \"u\"\n",
			`unknown key "contacts.accounts.user" (keys of [[contacts.accounts]]: name, url, username`},
		{"unknown key in the contacts table", "[contacts]\nsync = true\n", `unknown key "contacts.sync"`},
		{"unknown mail key", "[mail]\nsync = true\n", `unknown key "mail.sync"`},
		{"name required", "[[mail.accounts]]\n" + okIMAP, `[[mail.accounts]] entry 1: name is required`},
		{"name required, second file", "[[calendar.files]]\nname = \"a\"\npath = \"/a.ics\"\n[[calendar.files]]\nname = \" \"\npath = \"/b.ics\"\n",
			`[[calendar.files]] entry 2: name is required`},
		{"no slash", "[[mail.accounts]]\nname = \"a/b\"\n" + okIMAP, `mail account "a/b": a name must not contain "/"`},
		{"no padding", "[[mail.accounts]]\nname = \"a \"\n" + okIMAP, `mail account "a ": a name must not start or end with spaces`},
		{"unique per service ignoring case", "[[mail.accounts]]\nname = \"Work\"\n" + okIMAP + "[[mail.accounts]]\nname = \"wORK\"\n" + okIMAP,
			`mail account "wORK": the name is already used by mail account "Work"`},
		{"calendar files share the calendar names", "[[calendar.accounts]]\nname = \"home\"\nurl = \"https://d.example.org\"\n[[calendar.files]]\nname = \"Home\"\npath = \"/h.ics\"\n",
			`calendar file "Home": the name is already used by calendar account "home"`},
		{"password required", "[[mail.accounts]]\nname = \"a\"\nimap = \"imaps://m.example.org\"\nusername = \"u\"\n",
			`mail account "a": set password_env (a variable's name) or password_cmd`},
		{"username required", "[[mail.accounts]]\nname = \"a\"\nsmtp = \"smtps://m.example.org\"\npassword_env = \"PW\"\n",
			`mail account "a": username is required`},
		{"not both", "[[mail.accounts]]\nname = \"a\"\n" + okIMAP + "password_cmd = [\"pass\"]\n", `mail account "a": set password_env or password_cmd, not both`},
		{"unused password", "[[mail.accounts]]\nname = \"a\"\nmaildir = \"/m\"\npassword_env = \"PW\"\n",
			`mail account "a": a password is set but no imap or smtp server would use it`},
		{"dav password without username", "[[calendar.accounts]]\nname = \"c\"\nurl = \"https://d.example.org\"\npassword_env = \"PW\"\n",
			`calendar account "c": a password is set but username is empty`},
		{"password in password_env", "[[mail.accounts]]\nname = \"a\"\nimap = \"imaps://m.example.org\"\nusername = \"u\"\npassword_env = \"hunter2!\"\n",
			`mail account "a": password_env must be the name of an environment variable`},
		{"password_cmd as a shell line", "[[mail.accounts]]\nname = \"a\"\nimap = \"imaps://m.example.org\"\nusername = \"u\"\npassword_cmd = \"pass show hunter2\"\n",
			`password_cmd is a list of arguments run without a shell`},
		{"empty password_cmd", "[[mail.accounts]]\nname = \"a\"\nimap = \"imaps://m.example.org\"\nusername = \"u\"\npassword_cmd = []\n",
			`mail account "a": password_cmd is empty`},
		{"auth values", "[[mail.accounts]]\nname = \"a\"\n" + okIMAP + "auth = \"oauth\"\n", `mail account "a": auth "oauth": want "password" or "xoauth2"`},
		{"nothing to reach", "[[mail.accounts]]\nname = \"a\"\n", `mail account "a": set imap, smtp, maildir or applemail`},
		{"relative applemail", "[[mail.accounts]]\nname = \"a\"\napplemail = \"Library/Mail/V10\"\napplemail_account = \"X\"\n", `mail account "a": applemail "Library/Mail/V10" must be an absolute path`},
		{"applemail without its account", "[[mail.accounts]]\nname = \"a\"\napplemail = \"/Users/me/Library/Mail/V10\"\n", `mail account "a": applemail and applemail_account go together`},
		{"applemail account alone", "[[mail.accounts]]\nname = \"a\"\nimap = \"imaps://m.example.org\"\nusername = \"u\"\npassword_env = \"PW\"\napplemail_account = \"X\"\n", `mail account "a": applemail and applemail_account go together`},
		{"applemail account climbing out", "[[mail.accounts]]\nname = \"a\"\napplemail = \"/V10\"\napplemail_account = \"..\"\n", `applemail_account ".." must be a folder name`},
		{"applemail account with a slash", "[[mail.accounts]]\nname = \"a\"\napplemail = \"/V10\"\napplemail_account = \"a/b\"\n", `applemail_account "a/b" must be a folder name`},
		{"maildir and applemail", "[[mail.accounts]]\nname = \"a\"\nmaildir = \"/m\"\napplemail = \"/V10\"\napplemail_account = \"X\"\n", `mail account "a": set maildir or applemail, not both`},
		{"plain imap off loopback", "[[mail.accounts]]\nname = \"a\"\nimap = \"imap://m.example.org\"\nusername = \"u\"\npassword_env = \"PW\"\n",
			`mail account "a": imap: plain imap:// is allowed only to a loopback host`},
		{"smtp scheme on imap", "[[mail.accounts]]\nname = \"a\"\nimap = \"smtps://m.example.org\"\nusername = \"u\"\npassword_env = \"PW\"\n",
			`mail account "a": imap: scheme "smtps" is not allowed here`},
		{"password in URL", "[[mail.accounts]]\nname = \"a\"\nimap = \"imaps://u:hunter2@m.example.org\"\nusername = \"u\"\npassword_env = \"PW\"\n",
			`mail account "a": imap: URL must not hold a user name or password`},
		{"plain http dav", "[[contacts.accounts]]\nname = \"c\"\nurl = \"http://dav.example.org/\"\n", `contacts account "c": url: plain http:// is allowed only to a loopback host`},
		{"dav url required", "[[calendar.accounts]]\nname = \"c\"\n", `calendar account "c": url is required`},
		{"calendar file both", "[[calendar.files]]\nname = \"f\"\npath = \"/f.ics\"\nurl = \"https://x.example.org/f.ics\"\n", `calendar file "f": set exactly one of path and url`},
		{"calendar file plain url", "[[calendar.files]]\nname = \"f\"\nurl = \"http://x.example.org/f.ics\"\n", `calendar file "f": url: plain http://`},
		{"calendar email not an address", "[[calendar.accounts]]\nname = \"c\"\nurl = \"https://d.example.org\"\nemail = \"Me <me@example.org>\"\n",
			`calendar account "c": email "Me <me@example.org>" must be a bare address such as ana@example.org`},
		{"calendar file relative", "[[calendar.files]]\nname = \"f\"\npath = \"f.ics\"\n", `calendar file "f": path "f.ics" must be an absolute path`},
		{"calendar file unknown kind", "[[calendar.files]]\nname = \"f\"\nkind = \"outlook\"\npath = \"/f.db\"\n", `calendar file "f": kind "outlook" is not "ics" or "apple-calendar"`},
		{"mac calendar store with url", "[[calendar.files]]\nname = \"f\"\nkind = \"apple-calendar\"\nurl = \"https://x.example.org/f\"\n", `calendar file "f": kind "apple-calendar" needs path (the Calendar.sqlitedb file) and no url`},
		{"mac calendar store relative", "[[calendar.files]]\nname = \"f\"\nkind = \"apple-calendar\"\npath = \"Calendar.sqlitedb\"\n", `calendar file "f": path "Calendar.sqlitedb" must be an absolute path`},
		{"relative maildir", "[[mail.accounts]]\nname = \"a\"\nmaildir = \"Maildir\"\n", `mail account "a": maildir "Maildir" must be an absolute path`},
		{"relative ca_file", "[[mail.accounts]]\nname = \"a\"\n" + okIMAP + "ca_file = \"ca.pem\"\n", `mail account "a": ca_file "ca.pem" must be an absolute path`},
		{"bad from", "[[mail.accounts]]\nname = \"a\"\n" + okIMAP + "from = [\"Me <me@example.org>\"]\n", `mail account "a": from "Me <me@example.org>" is not a bare e-mail address`},
		{"both contacts forms, table", "contacts = [\"/a.vcf\"]\n[[contacts.accounts]]\nname = \"c\"\nurl = \"https://d.example.org\"\n",
			`contacts = [...] and a [contacts] table cannot both be in the file`},
		{"both contacts forms, header", "contacts = [\"/a.vcf\"]\n[contacts]\n", `move the paths into the table as [contacts] sources = [...]`},
		{"contacts of the wrong type", "contacts = 3\n", `contacts: want a [contacts] table (sources = [...], [[contacts.accounts]]) or the old list of paths`},
		{"accounts not a table", "[mail]\naccounts = \"work\"\n", `mail.accounts`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, "linux", nil, tt.file)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error echoes a password: %v", err)
			}
		})
	}
}

// TestContactsPathsStillComeFromEnvAndFlags: with [[contacts.accounts]] in
// the file, the contacts paths come from TIDINGS_CONTACTS or --contacts as
// before (the fix the both-forms error names).
func TestContactsPathsStillComeFromEnvAndFlags(t *testing.T) {
	file := "[[contacts.accounts]]\nname = \"c\"\nurl = \"https://d.example.org\"\n"
	c, err := load(t, "linux", map[string]string{"TIDINGS_CONTACTS": "/a.vcf"}, file)
	if err != nil {
		t.Fatal(err)
	}
	eqs(t, c.Contacts, []string{"/a.vcf"})
	eq(t, len(c.ContactAccounts), 1)
	c, err = load(t, "linux", nil, file, "--contacts", "/b.vcf")
	if err != nil {
		t.Fatal(err)
	}
	eqs(t, c.Contacts, []string{"/b.vcf"})
}

// TestTimezoneSettingIsTheOneLocation: Location is the system's zone when
// timezone is unset, the file's timezone, or TIDINGS_TIMEZONE over it; an
// unknown or path-like name stops the load naming where it came from; a
// Config not made by Load answers time.Local.
func TestTimezoneSettingIsTheOneLocation(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		file    string
		want    string
		wantErr string
	}{
		{name: "unset is the system's", want: time.Local.String()},
		{name: "file", file: `timezone = "Asia/Tokyo"`, want: "Asia/Tokyo"},
		{name: "env beats file", env: map[string]string{"TIDINGS_TIMEZONE": "America/New_York"}, file: `timezone = "Asia/Tokyo"`, want: "America/New_York"},
		{name: "UTC", env: map[string]string{"TIDINGS_TIMEZONE": "UTC"}, want: "UTC"},
		{name: "invalid env", env: map[string]string{"TIDINGS_TIMEZONE": "Mars/Olympus"}, wantErr: `timezone "Mars/Olympus" (TIDINGS_TIMEZONE) is not an IANA time zone name`},
		{name: "invalid file", file: `timezone = "CEST+2"`, wantErr: `timezone "CEST+2" (timezone in config.toml) is not an IANA time zone name`},
		{name: "no paths", env: map[string]string{"TIDINGS_TIMEZONE": "/etc/localtime"}, wantErr: "not an IANA time zone name"},
		{name: "no traversal", env: map[string]string{"TIDINGS_TIMEZONE": "../../etc/passwd"}, wantErr: "not an IANA time zone name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(t, "linux", tt.env, tt.file)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eq(t, c.Location().String(), tt.want)
		})
	}
	// The zone is applied, not just named: noon UTC is 21:00 in Tokyo.
	c, err := load(t, "linux", nil, `timezone = "Asia/Tokyo"`)
	if err != nil {
		t.Fatal(err)
	}
	noon := testclock.Anchor() // 12:00 UTC
	eq(t, noon.In(c.Location()).Hour(), 21)
	eq(t, (&Config{}).Location(), time.Local)
	var nilConfig *Config
	eq(t, nilConfig.Location(), time.Local)
}

// TestContactsSourcesMoveIntoTheContactsTable: the read sources are
// [contacts] sources = [...], next to [[contacts.accounts]] (a CardDAV url
// or a vCard folder); the old top-level list keeps working and logs one
// notice naming the new form (docs/configuration.md, "Contacts").
func TestContactsSourcesMoveIntoTheContactsTable(t *testing.T) {
	var logged strings.Builder
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	defer slog.SetDefault(prev)

	c, err := load(t, "linux", nil, `
[contacts]
sources = ["/home/me/contacts.vcf", "/home/me/AddressBook"]

[[contacts.accounts]]
name = "icloud"
url = "https://contacts.example.org/me/"
username = "me"
password_env = "CARDDAV_PW"

[[contacts.accounts]]
name = "Local"
folder = "/home/me/cards"
`)
	if err != nil {
		t.Fatal(err)
	}
	eqs(t, c.Contacts, []string{"/home/me/contacts.vcf", "/home/me/AddressBook"})
	eq(t, c.Origins["contacts"], "file")
	eq(t, len(c.ContactAccounts), 2)
	eq(t, c.ContactAccounts[1].Folder, "/home/me/cards")
	eq(t, c.ContactAccounts[0].PasswordEnv, "CARDDAV_PW")
	if logged.Len() != 0 {
		t.Errorf("the new form logged %q", logged.String())
	}

	c, err = load(t, "linux", nil, "contacts = [\"/old.vcf\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	eqs(t, c.Contacts, []string{"/old.vcf"})
	if n := strings.Count(logged.String(), "\n"); n != 1 || !strings.Contains(logged.String(), "[contacts] sources") {
		t.Errorf("the old form logged %d lines: %q; want one notice naming [contacts] sources", n, logged.String())
	}

	// The environment and the flag still beat the file's sources.
	c, err = load(t, "linux", map[string]string{"TIDINGS_CONTACTS": "/env.vcf"}, "[contacts]\nsources = [\"/file.vcf\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	eqs(t, c.Contacts, []string{"/env.vcf"})
}

// TestContactAccountFolderRules: a contacts account is a CardDAV url or a
// vCard folder, never both; the folder is absolute and takes no password.
func TestContactAccountFolderRules(t *testing.T) {
	for _, tt := range []struct{ name, file, wantErr string }{
		{"both", "[[contacts.accounts]]\nname = \"c\"\nurl = \"https://d.example.org\"\nfolder = \"/c\"\n", `contacts account "c": set exactly one of url and folder`},
		{"neither", "[[contacts.accounts]]\nname = \"c\"\n", `contacts account "c": set exactly one of url and folder`},
		{"relative", "[[contacts.accounts]]\nname = \"c\"\nfolder = \"cards\"\n", `contacts account "c": folder "cards" must be an absolute path`},
		{"password on a folder", "[[contacts.accounts]]\nname = \"c\"\nfolder = \"/c\"\nusername = \"u\"\npassword_env = \"PW\"\n", `contacts account "c": a folder takes no username or password`},
		{"unknown key", "[contacts]\nsource = [\"/x.vcf\"]\n", `unknown key "contacts.source" (keys of [contacts]: sources, accounts)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, "linux", nil, tt.file)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
