//go:build unix

package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// seedBlocklist is the bridge protocol's example blocklist (the format is
// in docs/security.md, "Files and entries").
const seedBlocklist = `# Therapist
+15551234567

# Attorney
lawyer@example.com

# Family group chat
chat123456789
`

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // WriteFile's mode is masked by umask
		t.Fatal(err)
	}
}

func TestLoadSeedExample(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, Path(dir, Blocked), seedBlocklist, 0o600)
	p, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode() != ModeBlocklist {
		t.Errorf("mode = %s, want blocklist (no read_policy.txt)", p.Mode())
	}
	for _, h := range []string{"+1-555-123-4567", "5551234567", "(555) 123-4567"} {
		if d := p.AllowThread(Thread{Identifier: h}); d.Allowed {
			t.Errorf("%s not blocked", h)
		}
	}
	if d := p.AllowThread(Thread{Identifier: "chat123456789", GUID: "iMessage;+;chat123456789", Participants: []string{"a@b.c", "d@e.f"}}); d.Allowed {
		t.Error("family group chat not blocked")
	}
	if d := p.AllowThread(Thread{Identifier: "LAWYER@EXAMPLE.COM"}); d.Allowed {
		t.Error("attorney not blocked")
	}
	if d := p.AllowThread(Thread{Identifier: "+14155550001"}); !d.Allowed {
		t.Error("unrelated thread blocked")
	}
	info := p.Info()
	if info.BlockedEntries != 3 || info.Files.Blocked != Path(dir, Blocked) || info.Files.ReadPolicy != ModePath(dir) {
		t.Errorf("Info = %+v", info)
	}
}

func TestLoadEmptyFolderIsBlocklistWithNothingBlocked(t *testing.T) {
	p, err := Load(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode() != ModeBlocklist || p.Info().BlockedEntries != 0 || !p.AllowThread(Thread{Identifier: "+14155550001"}).Allowed {
		t.Errorf("empty folder: %+v", p.Info())
	}
}

func TestLoadModes(t *testing.T) {
	tests := []struct {
		content string
		want    Mode
		err     string
	}{
		{"allowlist\n", ModeAllowlist, ""},
		{"  AllowList  \n", ModeAllowlist, ""},
		{"# comment\n\nblocklist\n", ModeBlocklist, ""},
		{"", ModeBlocklist, ""},
		{"# only a comment\n", ModeBlocklist, ""},
		{"allowlist # hardened later\n", ModeAllowlist, ""},
		{"whitelist\n", "", "unknown mode"},
		{"allowlist\nblocklist\n", "", "more than one mode"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		writeFile(t, ModePath(dir), tt.content, 0o600)
		p, err := Load(dir, Options{})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || p != nil {
				t.Errorf("mode file %q: policy %v, err %v; want error %q", tt.content, p, err, tt.err)
			}
			continue
		}
		if err != nil || p.Mode() != tt.want {
			t.Errorf("mode file %q: %v, %v; want %s", tt.content, p.Mode(), err, tt.want)
		}
	}
}

func TestAllowlistModeFromFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, ModePath(dir), "allowlist\n", 0o600)
	writeFile(t, Path(dir, Allowed), "# partner\n+1 (415) 555-0001\n", 0o600)
	writeFile(t, Path(dir, Blocked), "+14155550001 # blocked wins\n", 0o600)
	p, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.AllowThread(Thread{Identifier: "+14155550001"}); d.Allowed || d.Reason != ReasonBlocked {
		t.Errorf("blocklist precedence: %+v", d)
	}
	writeFile(t, Path(dir, Blocked), "", 0o600)
	p, err = Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.AllowThread(Thread{Identifier: "4155550001"}).Allowed || p.AllowThread(Thread{Identifier: "+12125550000"}).Allowed {
		t.Error("allowlist mode decisions wrong")
	}
	writeFile(t, Path(dir, Allowed), "", 0o600)
	p, err = Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.AllowThread(Thread{Identifier: "+14155550001"}).Allowed {
		t.Error("an empty allowlist allowed a thread")
	}
}

// TestLoadFailsClosed: every problem is an error and no policy.
func TestLoadFailsClosed(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"invalid entry names its line", func(t *testing.T, dir string) {
			writeFile(t, Path(dir, Blocked), "# ok\n+15551234567\nmom\n", 0o600)
		}, "line 3"},
		{"invalid allowlist entry", func(t *testing.T, dir string) {
			writeFile(t, Path(dir, Allowed), "a@b@c\n", 0o600)
		}, "not an email address"},
		{"symlinked blocklist", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "elsewhere.txt"), "", 0o600)
			if err := os.Symlink(filepath.Join(dir, "elsewhere.txt"), Path(dir, Blocked)); err != nil {
				t.Fatal(err)
			}
		}, "symlink"},
		{"dangling symlink", func(t *testing.T, dir string) {
			if err := os.Symlink(filepath.Join(dir, "missing.txt"), Path(dir, Blocked)); err != nil {
				t.Fatal(err)
			}
		}, "symlink"},
		{"group-writable blocklist", func(t *testing.T, dir string) {
			writeFile(t, Path(dir, Blocked), "+15551234567\n", 0o620)
		}, "writable by group or others"},
		{"world-writable mode file", func(t *testing.T, dir string) {
			writeFile(t, ModePath(dir), "blocklist\n", 0o606)
		}, "writable by group or others"},
		{"blocklist is a directory", func(t *testing.T, dir string) {
			if err := os.MkdirAll(Path(dir, Blocked), 0o700); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"blocklist is a FIFO", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(Path(dir, Blocked), 0o600); err != nil {
				t.Skip("mkfifo:", err)
			}
		}, "not a regular file"},
		{"symlinked contacts dir", func(t *testing.T, dir string) {
			other := t.TempDir()
			if err := os.Remove(filepath.Join(dir, ContactsDir)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, filepath.Join(dir, ContactsDir)); err != nil {
				t.Fatal(err)
			}
		}, "symlink"},
		{"world-writable contacts dir", func(t *testing.T, dir string) {
			if err := os.Chmod(filepath.Join(dir, ContactsDir), 0o777); err != nil {
				t.Fatal(err)
			}
		}, "writable by group or others"},
		{"oversized blocklist", func(t *testing.T, dir string) {
			writeFile(t, Path(dir, Blocked), strings.Repeat("# padding\n", maxPolicyFileSz/10+1), 0o600)
		}, "larger than"},
		{"blocklist owned by another user", func(t *testing.T, dir string) {
			writeFile(t, Path(dir, Blocked), "+15551234567\n", 0o600)
			if os.Geteuid() != 0 {
				t.Skip("needs root to chown")
			}
			if err := os.Chown(Path(dir, Blocked), 4242, 4242); err != nil {
				t.Fatal(err)
			}
		}, "owned by uid 4242"},
		{"unreadable blocklist", func(t *testing.T, dir string) {
			writeFile(t, Path(dir, Blocked), "+15551234567\n", 0o000)
			if os.Geteuid() == 0 {
				t.Skip("root reads mode-000 files")
			}
		}, "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, ContactsDir), 0o700); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, dir)
			p, err := Load(dir, Options{})
			if err == nil || p != nil {
				t.Fatalf("Load = %v, %v; want an error", p, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

// hardenedFixture builds a root-owned-looking hierarchy under a temp dir
// and points the ancestor check at it. Ownership is the test process's
// euid, which the hook accepts as the hardened owner.
func hardenedFixture(t *testing.T) (trust, list string) {
	t.Helper()
	oldOwner, oldRoot := hardenedOwner, hardenedTrustRoot
	t.Cleanup(func() { hardenedOwner, hardenedTrustRoot = oldOwner, oldRoot })
	hardenedOwner = uint32(os.Geteuid())
	trust = t.TempDir()
	if err := os.Chmod(trust, 0o755); err != nil {
		t.Fatal(err)
	}
	hardenedTrustRoot = trust
	conf := filepath.Join(trust, "etc", "tidings")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(trust, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	list = filepath.Join(conf, "allowed_chats.txt")
	writeFile(t, list, "# managed by root\n+1 415 555 0001\n", 0o644)
	return trust, list
}

func TestHardenedMode(t *testing.T) {
	_, list := hardenedFixture(t)
	dir := t.TempDir()
	writeFile(t, ModePath(dir), "blocklist\n", 0o600)               // overridden
	writeFile(t, Path(dir, Allowed), "+12125550000\n", 0o600)       // ignored
	writeFile(t, Path(dir, Blocked), "friend@example.com\n", 0o600) // still applies
	p, err := Load(dir, Options{HardenedAllowlist: list})
	if err != nil {
		t.Fatal(err)
	}
	if p.Mode() != ModeAllowlist || !p.Hardened() {
		t.Fatalf("mode %s hardened %v, want allowlist, true", p.Mode(), p.Hardened())
	}
	if !p.AllowThread(Thread{Identifier: "+14155550001"}).Allowed {
		t.Error("root-allowed number refused")
	}
	if p.AllowThread(Thread{Identifier: "+12125550000"}).Allowed {
		t.Error("the user's allowed_chats.txt was used in hardened mode")
	}
	if p.AllowThread(Thread{Identifier: "friend@example.com"}).Allowed {
		t.Error("blocklist ignored in hardened mode")
	}
	info := p.Info()
	if info.Files.HardenedAllowlist != list || info.Files.Allowed != "" || info.AllowedEntries != 1 {
		t.Errorf("Info = %+v", info)
	}
}

func TestHardenedRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, trust, list string) string
		want  string
	}{
		{"missing", func(t *testing.T, trust, list string) string {
			os.Remove(list)
			return list
		}, "does not exist"},
		{"symlink", func(t *testing.T, trust, list string) string {
			link := filepath.Join(filepath.Dir(list), "link.txt")
			if err := os.Symlink(list, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, "symlink"},
		{"group-writable", func(t *testing.T, trust, list string) string {
			if err := os.Chmod(list, 0o664); err != nil {
				t.Fatal(err)
			}
			return list
		}, "writable by group or others"},
		{"hard link", func(t *testing.T, trust, list string) string {
			if err := os.Link(list, filepath.Join(filepath.Dir(list), "second")); err != nil {
				t.Fatal(err)
			}
			return list
		}, "hard links"},
		{"writable parent", func(t *testing.T, trust, list string) string {
			if err := os.Chmod(filepath.Dir(list), 0o777); err != nil {
				t.Fatal(err)
			}
			return list
		}, "writable by group or others"},
		{"writable grandparent", func(t *testing.T, trust, list string) string {
			if err := os.Chmod(filepath.Join(trust, "etc"), 0o775); err != nil {
				t.Fatal(err)
			}
			return list
		}, "writable by group or others"},
		{"owned by someone else", func(t *testing.T, trust, list string) string {
			hardenedOwner = uint32(os.Geteuid()) + 1
			return list
		}, "not by root"},
		{"invalid entry", func(t *testing.T, trust, list string) string {
			writeFile(t, list, "bob\n", 0o644)
			return list
		}, "too short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trust, list := hardenedFixture(t)
			path := tt.setup(t, trust, list)
			p, err := Load(t.TempDir(), Options{HardenedAllowlist: path})
			if err == nil || p != nil {
				t.Fatalf("Load = %v, %v; want an error", p, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestHardenedRealRoot checks the production owner (uid 0) without test
// hooks: a list under the temp dir fails because /tmp is world-writable.
func TestHardenedRealRoot(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "allowed.txt")
	writeFile(t, list, "+14155550001\n", 0o644)
	_, err := Load(t.TempDir(), Options{HardenedAllowlist: list})
	if err == nil {
		t.Fatal("a hardened list in a temp dir was accepted")
	}
	if !errors.Is(err, ErrUnsafeFile) {
		t.Errorf("error %v does not wrap ErrUnsafeFile", err)
	}
}
