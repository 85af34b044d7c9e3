package clients

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// place copies a fixture to the client's path in a temporary home and
// returns the client.
func place(t *testing.T, id, fixture string) (Client, Env) {
	t.Helper()
	env := Env{Home: t.TempDir(), GOOS: "linux"}
	c, err := Find(env, id)
	if err != nil {
		t.Fatal(err)
	}
	if fixture != "" {
		data, err := os.ReadFile(filepath.Join("testdata", fixture))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(c.Path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.Path, data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return c, env
}

// servers decodes the client's file into its servers map, whatever the
// format, so assertions read the file as the client would.
func servers(t *testing.T, c Client, data []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	switch c.Format {
	case JSON:
		std, err := hujson.Standardize(bytes.Clone(data)) // Standardize blanks comments in place
		if err != nil {
			t.Fatalf("result is not JSON with comments: %v\n%s", err, data)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(std, &m); err != nil {
			t.Fatal(err)
		}
		if raw, ok := m[c.Key]; ok {
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatal(err)
			}
		}
	case CodexTOML:
		var m struct {
			Servers map[string]map[string]any `toml:"mcp_servers"`
		}
		if _, err := toml.Decode(string(data), &m); err != nil {
			t.Fatalf("result does not parse: %v\n%s", err, data)
		}
		out = m.Servers
	}
	return out
}

var srv = Server{Command: "/usr/local/bin/tidings", Args: []string{"serve", "--read-only"}}

// Install keeps everything the user had (other servers, settings, comments),
// writes exactly one tidings entry with our command, and uninstall takes
// only that entry away again.
func TestInstallKeepsTheUsersFileAndUninstallUndoesIt(t *testing.T) {
	for _, tc := range []struct {
		client, fixture string
		keep            []string // other servers that must survive
		keepText        []string // bytes (comments, settings) that must survive
		roundTrip       bool     // uninstall(install(x)) == x byte for byte
	}{
		{"claude-desktop", "desktop-others.json", []string{"filesystem"}, []string{`"globalShortcut": "Alt+Space"`}, true},
		{"claude-desktop", "", nil, nil, false},
		{"vscode", "vscode-comments.jsonc", []string{"github"}, []string{"// VS Code user MCP servers", "// the GitHub server, kept by the user"}, true},
		{"cursor", "desktop-others.json", []string{"filesystem"}, nil, true},
		{"claude-code", "claude-code-big.json", []string{"other"}, []string{`"numStartups": 42`, `"/home/me/src/app"`}, false},
		{"codex", "codex-others.toml", []string{"docs"}, []string{"# my Codex settings", "# keep this comment", "[profiles.fast]"}, true},
		{"codex", "codex-old-tidings.toml", []string{"docs"}, []string{`model = "o4-mini"`}, false},
		{"codex", "", nil, nil, false},
	} {
		t.Run(tc.client+"/"+tc.fixture, func(t *testing.T) {
			c, _ := place(t, tc.client, tc.fixture)
			ch, err := PlanInstall(c, srv)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Diff == "" || !strings.Contains(ch.Diff, "/usr/local/bin/tidings") {
				t.Fatalf("diff does not show the new entry:\n%s", ch.Diff)
			}
			if _, err := Apply(ch, testclock.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(c.Path)
			got := servers(t, c, after)
			e := got[ServerName]
			if e == nil || e["command"] != srv.Command {
				t.Fatalf("tidings entry = %v in\n%s", e, after)
			}
			if args, _ := json.Marshal(e["args"]); string(args) != `["serve","--read-only"]` {
				t.Errorf("args = %s", args)
			}
			if c.TypeStdio && e["type"] != "stdio" {
				t.Errorf("type = %v, want stdio", e["type"])
			}
			for _, k := range tc.keep {
				if got[k] == nil {
					t.Errorf("server %q lost:\n%s", k, after)
				}
			}
			for _, s := range tc.keepText {
				if !bytes.Contains(after, []byte(s)) {
					t.Errorf("%q lost:\n%s", s, after)
				}
			}
			if st := Status(c); !st.Configured || st.Command != srv.Command || !st.Installed {
				t.Errorf("Status after install = %+v", st)
			}
			// Installing again changes nothing.
			if again, err := PlanInstall(c, srv); err != nil || again.Diff != "" {
				t.Errorf("second install: diff %q, err %v", again.Diff, err)
			}
			un, err := PlanUninstall(c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Apply(un, testclock.Date(2026, 3, 4, 5, 6, 8, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			final, _ := os.ReadFile(c.Path)
			rest := servers(t, c, final)
			if rest[ServerName] != nil {
				t.Errorf("tidings still configured after uninstall:\n%s", final)
			}
			for _, k := range tc.keep {
				if rest[k] == nil {
					t.Errorf("uninstall lost server %q", k)
				}
			}
			for _, s := range tc.keepText {
				if !bytes.Contains(final, []byte(s)) {
					t.Errorf("uninstall lost %q", s)
				}
			}
			if tc.roundTrip {
				orig, _ := os.ReadFile(filepath.Join("testdata", tc.fixture))
				if !bytes.Equal(final, orig) {
					t.Errorf("uninstall(install(x)) != x:\n%s", final)
				}
			}
		})
	}
}

// A file that does not parse is never touched: the plan fails with a
// sentence saying nothing changed, and the bytes stay as they were.
func TestUnparseableFileIsRefusedUntouched(t *testing.T) {
	for _, tc := range []struct{ client, fixture string }{
		{"claude-desktop", "broken.json"},
		{"vscode", "broken.json"},
		{"codex", "broken.json"}, // JSON is not TOML either
	} {
		t.Run(tc.client, func(t *testing.T) {
			c, _ := place(t, tc.client, tc.fixture)
			orig, _ := os.ReadFile(c.Path)
			for name, plan := range map[string]func() (Change, error){
				"install":   func() (Change, error) { return PlanInstall(c, srv) },
				"uninstall": func() (Change, error) { return PlanUninstall(c) },
			} {
				if _, err := plan(); err == nil || !strings.Contains(err.Error(), "nothing was changed") {
					t.Errorf("%s: err = %v, want a refusal saying nothing was changed", name, err)
				}
			}
			now, _ := os.ReadFile(c.Path)
			if !bytes.Equal(orig, now) {
				t.Error("file changed")
			}
			if st := Status(c); st.Problem == "" {
				t.Error("Status does not report the problem")
			}
		})
	}
}

// Apply backs up the original with its permissions before replacing it,
// and a first install creates the file (and its folder) private.
func TestApplyBacksUpTheOriginal(t *testing.T) {
	c, _ := place(t, "claude-desktop", "desktop-others.json")
	orig, _ := os.ReadFile(c.Path)
	ch, err := PlanInstall(c, srv)
	if err != nil {
		t.Fatal(err)
	}
	backup, err := Apply(ch, testclock.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(backup, ".tidings-backup-"+testclock.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).UTC().Format("20060102T150405")) {
		t.Errorf("backup name %q", backup)
	}
	b, err := os.ReadFile(backup)
	if err != nil || !bytes.Equal(b, orig) {
		t.Fatalf("backup = %q, %v", b, err)
	}
	if fi, _ := os.Stat(c.Path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the original's 0640", fi.Mode().Perm())
	}

	fresh, _ := place(t, "cursor", "")
	ch, err = PlanInstall(fresh, srv)
	if err != nil {
		t.Fatal(err)
	}
	if backup, err := Apply(ch, time.Time{}); err != nil || backup != "" {
		t.Fatalf("first install: backup %q, err %v", backup, err)
	}
	if fi, _ := os.Stat(fresh.Path); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
	}
}

// The paths are the ones each client reads, per OS.
func TestClientPathsPerOS(t *testing.T) {
	for _, tc := range []struct {
		goos, id, want string
	}{
		{"darwin", "claude-desktop", "/h/Library/Application Support/Claude/claude_desktop_config.json"},
		{"linux", "claude-desktop", "/h/.config/Claude/claude_desktop_config.json"},
		{"darwin", "vscode", "/h/Library/Application Support/Code/User/mcp.json"},
		{"linux", "vscode", "/h/.config/Code/User/mcp.json"},
		{"linux", "claude-code", "/h/.claude.json"},
		{"darwin", "codex", "/h/.codex/config.toml"},
		{"linux", "cursor", "/h/.cursor/mcp.json"},
	} {
		c, err := Find(Env{Home: "/h", GOOS: tc.goos}, tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if c.Path != tc.want {
			t.Errorf("%s on %s: %s, want %s", tc.id, tc.goos, c.Path, tc.want)
		}
	}
	if _, err := Find(Env{Home: "/h"}, "notepad"); err == nil || !strings.Contains(err.Error(), "claude-desktop") {
		t.Errorf("unknown client error = %v", err)
	}
}
