package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// Profile narrows what a server exposes (--profile FILE). It can only take
// away: a profile never enables a tool that other settings removed.
//
//	allowed_tools  = ["get_status", "search_messages"]  # absent = every tool
//	access         = "read"                             # "read" drops write tools; "write" (default) keeps them
//	allow_external = false                              # false drops open-world tools (default true)
//	file_dirs      = ["~/Downloads/tidings"]            # folders file-writing tools may write into
type Profile struct {
	// Path is the file the profile came from.
	Path string `toml:"-"`
	// AllowedTools, when non-nil, is the complete list of tools to keep.
	AllowedTools []string `toml:"allowed_tools"`
	// Access is "read" or "write".
	Access string `toml:"access"`
	// AllowExternal keeps tools whose openWorldHint is true.
	AllowExternal bool `toml:"allow_external"`
	// FileDirs are absolute, cleaned folders.
	FileDirs []string `toml:"file_dirs"`
	// WebAllowHosts are "host:port" destinations web_fetch may reach even
	// though the SSRF guard refuses loopback and private addresses
	// (docs/security.md).
	WebAllowHosts []string `toml:"web_allow_hosts"`

	// Seed 002's scope fields (internal/scope): each value is an
	// "Account/Name" path or an account name, matched whole after folding.
	// Nil = the field does not narrow.
	MailAccounts     []string `toml:"mail_accounts"`
	MailMailboxes    []string `toml:"mail_mailboxes"`
	CalendarAccounts []string `toml:"calendar_accounts"`
	Calendars        []string `toml:"calendars"`
	ReminderAccounts []string `toml:"reminder_accounts"`
	ReminderLists    []string `toml:"reminder_lists"`
	ContactAccounts  []string `toml:"contact_accounts"`
	ContactGroups    []string `toml:"contact_groups"`
}

// LoadProfile reads and validates a profile. Unknown keys, a bad access
// value and relative folders are errors that name the problem.
func LoadProfile(path string) (*Profile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	p := &Profile{Path: path, Access: "write", AllowExternal: true}
	md, err := toml.Decode(string(data), p)
	if err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("profile %s: unknown key %q (known: allowed_tools, access, allow_external, file_dirs, web_allow_hosts, mail_accounts, mail_mailboxes, calendar_accounts, calendars, reminder_accounts, reminder_lists, contact_accounts, contact_groups)", path, und[0].String())
	}
	if md.IsDefined("allowed_tools") && p.AllowedTools == nil {
		p.AllowedTools = []string{} // an explicit empty list allows nothing
	}
	switch p.Access {
	case "read", "write":
	default:
		return nil, fmt.Errorf("profile %s: access = %q, want \"read\" or \"write\"", path, p.Access)
	}
	for i, d := range p.FileDirs {
		if rest, ok := strings.CutPrefix(d, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("profile %s: expand %q: %w", path, d, err)
			}
			d = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("profile %s: file_dirs entry %q must be an absolute path", path, p.FileDirs[i])
		}
		p.FileDirs[i] = filepath.Clean(d)
	}
	return p, nil
}
