package mcpserver

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/scope"
)

func TestLoadProfileChecksScopeFieldsAndWebAllowHosts(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) (*Profile, error) {
		p := filepath.Join(dir, "p.toml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return LoadProfile(p)
	}
	// admitted
	for _, body := range []string{
		`calendar_accounts = ["iCloud"]` + "\n" + `calendars = ["iCloud/Work", "Exchange/Work"]`,
		`mail_accounts = ["Straße"]` + "\n" + `mail_mailboxes = ["Straße/Projects/2026"]`,
		`contact_groups = ["iCloud/Family / Close"]`,
		`reminder_lists = ["Default/Groceries"]` + "\n" + `reminder_accounts = ["Default"]`,
		`web_allow_hosts = ["127.0.0.1:8080", "localhost:1", "[::1]:65535", "printer.lan:631"]`,
	} {
		if _, err := load(body); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
	// refused, each naming the value
	for body, want := range map[string]string{
		`mail_accounts = ["Work/Inbox"]`:         `mail_accounts entry "Work/Inbox"`,
		`mail_accounts = [""]`:                   `mail_accounts entry ""`,
		`calendar_accounts = ["  "]`:             `calendar_accounts entry "  "`,
		`calendars = ["Work"]`:                   `calendars entry "Work"`,
		`mail_mailboxes = ["/INBOX"]`:            `mail_mailboxes entry "/INBOX"`,
		`reminder_lists = ["Default/"]`:          `reminder_lists entry "Default/"`,
		`contact_groups = ["iCloud/\u0007"]`:     `contact_groups entry`,
		`contact_accounts = ["a\uff0fb"]`:        `contact_accounts entry "a／b"`,
		`web_allow_hosts = ["localhost"]`:        `web_allow_hosts entry "localhost"`,
		`web_allow_hosts = ["localhost:http"]`:   `web_allow_hosts entry "localhost:http"`,
		`web_allow_hosts = ["localhost:0"]`:      `web_allow_hosts entry "localhost:0"`,
		`web_allow_hosts = ["localhost:65536"]`:  `web_allow_hosts entry "localhost:65536"`,
		`web_allow_hosts = ["localhost:+80"]`:    `web_allow_hosts entry "localhost:+80"`,
		`web_allow_hosts = ["::1:8080"]`:         `web_allow_hosts entry "::1:8080"`,
		`web_allow_hosts = ["[localhost]:8080"]`: `web_allow_hosts entry "[localhost]:8080"`,
		`web_allow_hosts = [":8080"]`:            `web_allow_hosts entry ":8080"`,
		`web_allow_hosts = ["http://x:80"]`:      `web_allow_hosts entry "http://x:80"`,
		`web_allow_hosts = ["a b:80"]`:           `web_allow_hosts entry "a b:80"`,
	} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want it to name %q", body, err, want)
		}
	}
}

// TestProfileEmptyScopeFieldReachesNothing: an explicit empty list is a
// field in force with no values (reaches nothing), never "not set".
func TestProfileEmptyScopeFieldReachesNothing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.toml")
	os.WriteFile(p, []byte("calendars = []\n"), 0o600)
	prof, err := LoadProfile(p)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := prof.Scope()
	if err != nil {
		t.Fatal(err)
	}
	if vals, inForce := sc.Values(scope.Calendars); !inForce || len(vals) != 0 {
		t.Fatalf("calendars = %v (in force %v), want in force and empty", vals, inForce)
	}
	if vals, inForce := sc.Values(scope.MailAccounts); inForce {
		t.Errorf("unset mail_accounts in force: %v", vals)
	}
	if !reflect.DeepEqual(prof.Calendars, []string{}) {
		t.Errorf("Calendars = %#v", prof.Calendars)
	}
}
