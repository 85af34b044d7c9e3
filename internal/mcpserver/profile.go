package mcpserver

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
	"github.com/tidings-mcp/tidings/internal/scope"
)

// Profile narrows what a server exposes (--profile FILE). It can only take
// away: a profile never enables a tool that other settings removed.
//
//	allowed_tools  = ["get_status", "search_messages"]  # absent = every tool
//	access         = "read"                             # "read" drops write tools; "write" (default) keeps them
//	allow_external = false                              # false drops open-world tools (default true)
//	file_dirs      = ["~/Downloads/tidings"]            # folders file-writing tools may write into
//	web_allow_hosts = ["127.0.0.1:8080"]                # private destinations web_fetch may reach
//	calendar_accounts = ["iCloud"]                      # scope fields (internal/scope): account names,
//	calendars      = ["iCloud/Work"]                    # and Account/Name paths; ANDed per service
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
	// Scope fields (docs/configuration.md, "Profiles"): account fields hold
	// account names, name fields Account/Name paths. An explicit empty list
	// stays in force and reaches nothing.
	fields := p.scopeFields()
	for _, spec := range scope.Specs {
		f := spec.Field
		for _, v := range fields[f] {
			if err := scope.CheckValue(f, v); err != nil {
				return nil, fmt.Errorf("profile %s: %s entry %q: %w", path, f, v, err)
			}
		}
	}
	for _, h := range p.WebAllowHosts {
		if err := checkHostPort(h); err != nil {
			return nil, fmt.Errorf("profile %s: web_allow_hosts entry %q %w", path, h, err)
		}
	}
	return p, nil
}

// checkHostPort accepts "host:port" with a port of 1-65535 written in
// digits and an IPv6 address in brackets ("[::1]:8080"); the web service
// compares destinations against these entries (docs/security.md).
func checkHostPort(s string) error {
	const want = `must be "host:port" with a numeric port (IPv6 in brackets, e.g. "[::1]:8080")`
	host, port, err := net.SplitHostPort(s)
	if err != nil || host == "" {
		return errors.New(want)
	}
	if n, err := strconv.Atoi(port); err != nil || strings.TrimLeft(port, "0123456789") != "" || n < 1 || n > 65535 {
		return fmt.Errorf("%s: port %q is not 1-65535", want, port)
	}
	if strings.HasPrefix(s, "[") {
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return fmt.Errorf("%s: only an IPv6 address goes in brackets", want)
		}
		return nil
	}
	if strings.ContainsAny(host, " \t/@?#[]%") || strings.IndexFunc(host, unicode.IsControl) >= 0 {
		return fmt.Errorf("%s: %q is not a host name or address", want, host)
	}
	return nil
}
