package config

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// load runs the full resolution with a fake environment, an optional
// config.toml in a temporary home and the given command-line arguments.
func load(t *testing.T, goos string, env map[string]string, file string, args ...string) (*Config, error) {
	t.Helper()
	home := t.TempDir()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["TIDINGS_HOME"]; !ok {
		env["TIDINGS_HOME"] = home
	}
	if file != "" {
		if err := os.WriteFile(filepath.Join(env["TIDINGS_HOME"], FileName), []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	l := Bind(fs)
	l.GOOS = goos
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return l.Load(func(k string) string { return env[k] })
}

// TestFlagBeatsEnvBeatsFileBeatsDefault: each setting comes from the
// strongest source that sets it — flag, then environment, then config file,
// then default — and Origins names that source; an empty environment value
// sets nothing, and repeatable path flags replace the file's list
// (docs/configuration.md).
func TestFlagBeatsEnvBeatsFileBeatsDefault(t *testing.T) {
	file := `
region = "DE"
http = "127.0.0.1:1111"
toolsets = ["messages"]
log_level = "warn"
read_only = true
android_xml = ["/file/a.xml"]

[embedder]
name = "http"
url = "http://file.example/v1"
`
	tests := []struct {
		name string
		env  map[string]string
		args []string
		// want is checked field by field with the origin.
		check func(t *testing.T, c *Config)
	}{
		{"file beats default", nil, nil, func(t *testing.T, c *Config) {
			eq(t, c.Region, "DE")
			eq(t, c.Origins["region"], "file")
			eq(t, c.HTTP, "127.0.0.1:1111")
			eq(t, c.Embedder.URL, "http://file.example/v1")
			eq(t, c.Origins["embedder.url"], "file")
			eq(t, c.Embedder.Model, "")
			eq(t, c.ReadOnly, true)
			eqs(t, c.Toolsets, []string{"messages"})
		}},
		{"env beats file", map[string]string{"TIDINGS_REGION": "fr", "TIDINGS_TOOLSETS": "contacts, status", "TIDINGS_READ_ONLY": "false", "TIDINGS_EMBEDDER_URL": "http://env/v1"}, nil, func(t *testing.T, c *Config) {
			eq(t, c.Region, "FR")
			eq(t, c.Origins["region"], "env")
			eqs(t, c.Toolsets, []string{"contacts", "status"})
			eq(t, c.ReadOnly, false)
			eq(t, c.Embedder.URL, "http://env/v1")
			eq(t, c.Embedder.Name, "http") // still from the file
		}},
		{"flag beats env", map[string]string{"TIDINGS_REGION": "FR", "TIDINGS_HTTP": "127.0.0.1:2222"}, []string{"--region", "GB", "--http=127.0.0.1:3333", "--read-only=false", "--toolsets", "a,b", "--toolsets", "c"}, func(t *testing.T, c *Config) {
			eq(t, c.Region, "GB")
			eq(t, c.Origins["region"], "flag")
			eq(t, c.HTTP, "127.0.0.1:3333")
			eq(t, c.ReadOnly, false)
			eqs(t, c.Toolsets, []string{"a", "b", "c"})
		}},
		{"repeatable path flags replace the file's list", nil, []string{"--android-xml", "/x/one,two.xml", "--android-xml", "/x/three.xml"}, func(t *testing.T, c *Config) {
			eqs(t, c.AndroidXML, []string{"/x/one,two.xml", "/x/three.xml"})
		}},
		{"env path list uses the OS list separator", map[string]string{"TIDINGS_CONTACTS": "/a/b.vcf" + string(os.PathListSeparator) + "/c,d.vcf"}, nil, func(t *testing.T, c *Config) {
			eqs(t, c.Contacts, []string{"/a/b.vcf", "/c,d.vcf"})
		}},
		{"bare bool flag", nil, []string{"--demo"}, func(t *testing.T, c *Config) {
			eq(t, c.Demo, true)
			eq(t, c.Origins["demo"], "flag")
		}},
		{"empty env value does not override", map[string]string{"TIDINGS_REGION": ""}, nil, func(t *testing.T, c *Config) {
			eq(t, c.Region, "DE")
		}},
		{"send quarantine comes from its own variable only", map[string]string{"ENABLE_MCP_SEND_MESSAGE": "true"}, nil, func(t *testing.T, c *Config) {
			eq(t, c.EnableSend, true)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(t, "linux", tt.env, file, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

// TestNothingSetGivesThePlatformDefaults: with no file, environment or flag,
// the settings take their defaults (region US, log level info, the built-in
// embedder, sending off, not read-only, the real clock); on macOS the
// iMessage database and the AddressBook are found under the home folder, on
// Linux there is none.
func TestNothingSetGivesThePlatformDefaults(t *testing.T) {
	c, err := load(t, "linux", map[string]string{"HOME": "/home/u"}, "")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, c.Region, "US")
	eq(t, c.LogLevel, "info")
	eq(t, c.Embedder.Name, "builtin")
	eq(t, c.IMessage, "")
	eq(t, c.EnableSend, false)
	eq(t, c.ReadOnly, false)
	eq(t, c.ConfigFile, "")
	if d := time.Since(c.Now()); d < 0 || d > time.Minute {
		t.Errorf("Now() is %v away from the real clock", d)
	}

	mac, err := load(t, "darwin", map[string]string{"HOME": "/Users/u"}, "")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, mac.IMessage, "/Users/u/Library/Messages/chat.db")
	eqs(t, mac.Contacts, []string{"/Users/u/Library/Application Support/AddressBook"})
}

func TestDefaultHome(t *testing.T) {
	tests := []struct {
		goos string
		env  map[string]string
		want string
	}{
		{"darwin", map[string]string{"HOME": "/Users/u"}, "/Users/u/Library/Application Support/Tidings"},
		{"linux", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/tidings"},
		{"linux", map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "/data"}, "/data/tidings"},
		{"linux", map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "relative"}, "/home/u/.local/share/tidings"},
	}
	for _, tt := range tests {
		got := DefaultHome(tt.goos, func(k string) string { return tt.env[k] })
		eq(t, got, tt.want)
	}
}

func TestHomeSelectsConfigFile(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, FileName), []byte(`region = "DE"`), 0o600)
	os.WriteFile(filepath.Join(b, FileName), []byte(`region = "FR"`), 0o600)
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	l := Bind(fs, "home")
	if err := fs.Parse([]string{"--home", b}); err != nil {
		t.Fatal(err)
	}
	c, err := l.Load(func(k string) string { return map[string]string{"TIDINGS_HOME": a}[k] })
	if err != nil {
		t.Fatal(err)
	}
	eq(t, c.Home, b)
	eq(t, c.Region, "FR")
	eq(t, c.ConfigFile, filepath.Join(b, FileName))
}

func TestNowPinsTheClock(t *testing.T) {
	c, err := load(t, "linux", map[string]string{"TIDINGS_NOW": "2026-11-30T09:15:00+01:00"}, "")
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 30, 8, 15, 0, 0, time.UTC) // literal date: parsed from a literal TIDINGS_NOW
	if got := c.Now(); !got.Equal(want) {
		t.Errorf("Now() = %v, want %v", got, want)
	}
	if got := c.Now(); !got.Equal(want) {
		t.Errorf("second Now() = %v, want the same pinned time", got)
	}
}

// TestBadSettingsAreRefusedNamingTheSetting: a bad setting from any source
// (an unknown or misspelt file key, a wrong type, unparsable TOML, a bad
// clock, bool, log level, region or embedder) stops the load with an error
// naming the key or value at fault (docs/configuration.md).
func TestBadSettingsAreRefusedNamingTheSetting(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		file    string
		args    []string
		wantErr string
	}{
		{"unknown key names the key", nil, "region = \"US\"\nregoin = \"DE\"\n", nil, `unknown key "regoin"`},
		{"unknown nested key", nil, "[embedder]\nurl = \"x\"\nmodle = \"m\"\n", nil, `unknown key "embedder.modle"`},
		{"home is not a file key", nil, "home = \"/x\"\n", nil, `unknown key "home"`},
		{"send switch is not a file key", nil, "enable_send = true\n", nil, `unknown key "enable_send"`},
		{"wrong type in file", nil, "read_only = \"yes\"\n", nil, "read_only"},
		{"bad toml", nil, "region = \n", nil, "parse"},
		{"bad clock", map[string]string{"TIDINGS_NOW": "yesterday"}, "", nil, "RFC 3339"},
		{"bad bool env", map[string]string{"TIDINGS_READ_ONLY": "maybe"}, "", nil, "TIDINGS_READ_ONLY"},
		{"bad bool flag", nil, "", []string{"--demo=perhaps"}, "perhaps"},
		{"bad log level", map[string]string{"TIDINGS_LOG_LEVEL": "loud"}, "", nil, "log level"},
		{"bad region", nil, "", []string{"--region", "USA"}, "region"},
		{"bad embedder", map[string]string{"TIDINGS_EMBEDDER": "gpt"}, "", nil, "embedder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, "linux", tt.env, tt.file, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestBindOnlyNamedFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	Bind(fs, "http", "read-only")
	if err := fs.Parse([]string{"--demo"}); err == nil {
		t.Fatal("--demo accepted by a command that did not bind it")
	}
	defer func() {
		if recover() == nil {
			t.Error("Bind with an unknown flag name did not panic")
		}
	}()
	Bind(nil, "no-such-flag")
}

// TestKeysDocumented pins that every setting is reachable somehow and that
// every flag has usage text, so `-h` never shows a bare name.
func TestKeysDocumented(t *testing.T) {
	for _, k := range Keys() {
		if k.TOML == "" && k.Env == "" && k.Flag == "" {
			t.Errorf("setting %+v cannot be set from anywhere", k)
		}
		if k.Flag != "" && k.Usage == "" {
			t.Errorf("flag --%s has no usage text", k.Flag)
		}
		if k.Env != "" && !strings.HasPrefix(k.Env, "TIDINGS_") && k.Env != "ENABLE_MCP_SEND_MESSAGE" && k.Env != "ENABLE_MCP_SEND_MAIL" {
			t.Errorf("environment variable %s lacks the TIDINGS_ prefix", k.Env)
		}
	}
}

func eq[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func eqs(t *testing.T, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// allow_external defaults to true and is settable from config.toml and
// TIDINGS_ALLOW_EXTERNAL (docs/configuration.md); hardened_allowlist from
// the file, the environment and --hardened-allowlist.
func TestAllowExternalAndHardenedAllowlistSources(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      map[string]string
		file     string
		args     []string
		allow    bool
		hardened string
	}{
		{"defaults", nil, "", nil, true, ""},
		{"file", nil, "allow_external = false\nhardened_allowlist = \"/etc/tidings/allowed.txt\"\n", nil, false, "/etc/tidings/allowed.txt"},
		{"environment", map[string]string{"TIDINGS_ALLOW_EXTERNAL": "false", "TIDINGS_HARDENED_ALLOWLIST": "/etc/a"}, "", nil, false, "/etc/a"},
		{"flag", nil, "", []string{"--hardened-allowlist", "/etc/b"}, true, "/etc/b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, "linux", tc.env, tc.file, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, c.AllowExternal, tc.allow)
			eq(t, c.HardenedAllowlist, tc.hardened)
		})
	}
}

// TestRememberWritesATopLevelKeyOnce: Remember adds key = values before
// the first table of config.toml (where a top-level key must be), keeps
// the rest of the file, reads back exactly, and never overrides a key the
// file already sets.
func TestRememberWritesATopLevelKeyOnce(t *testing.T) {
	odd := `/tmp/a "quoted" \ path` + "\t.vcf"
	for _, tc := range []struct {
		name, before string
		wrote        bool
	}{
		{"no file", "", true},
		{"keys only, no final newline", `region = "FR"`, true},
		{"before the first table", "region = \"FR\"\n[embedder]\nname = \"builtin\"\n", true},
		{"already set", "contacts = [\"/elsewhere.vcf\"]\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			if tc.before != "" {
				os.WriteFile(filepath.Join(home, FileName), []byte(tc.before), 0o600)
			}
			wrote, err := Remember(home, "contacts", []string{"/x/contacts.vcf", odd})
			if err != nil || wrote != tc.wrote {
				t.Fatalf("wrote %v, err %v", wrote, err)
			}
			cfg, err := Bind(nil).Load(func(k string) string { return map[string]string{"TIDINGS_HOME": home}[k] })
			if err != nil {
				t.Fatal(err)
			}
			if tc.wrote && (len(cfg.Contacts) != 2 || cfg.Contacts[1] != odd) {
				t.Errorf("contacts = %q", cfg.Contacts)
			}
			if !tc.wrote && (len(cfg.Contacts) != 1 || cfg.Contacts[0] != "/elsewhere.vcf") {
				t.Errorf("an existing key was changed: %q", cfg.Contacts)
			}
			if strings.Contains(tc.before, "[embedder]") && (cfg.Region != "FR" || cfg.Embedder.Name != "builtin") {
				t.Errorf("the rest of the file changed meaning: region %q, embedder %q", cfg.Region, cfg.Embedder.Name)
			}
			if fi, err := os.Stat(filepath.Join(home, FileName)); err == nil && fi.Mode().Perm() != 0o600 && tc.wrote {
				t.Errorf("config.toml mode %o", fi.Mode().Perm())
			}
		})
	}
}

// TestRememberWritesContactsSourcesInTheTable: remembered contacts go into
// [contacts] sources (the new form, docs/configuration.md "Contacts"):
// under an existing [contacts] header, or in a new table at the end (after
// [[contacts.accounts]] too), keeping the rest of the file; a file that
// already names sources, in either form, is left alone.
func TestRememberWritesContactsSourcesInTheTable(t *testing.T) {
	for _, tc := range []struct {
		name, before string
		wrote        bool
		accounts     int
	}{
		{"no file", "", true, 0},
		{"top-level keys", "region = \"FR\"\n", true, 0},
		{"after account tables", "region = \"FR\"\n[[contacts.accounts]]\nname = \"local\"\nfolder = \"/cards\"\n", true, 1},
		{"under an existing header", "[contacts]\n[[contacts.accounts]]\nname = \"local\"\nfolder = \"/cards\"\n", true, 1},
		{"new form already set", "[contacts]\nsources = [\"/elsewhere.vcf\"]\n", false, 0},
		{"old form already set", "contacts = [\"/elsewhere.vcf\"]\n", false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			if tc.before != "" {
				os.WriteFile(filepath.Join(home, FileName), []byte(tc.before), 0o600)
			}
			wrote, err := Remember(home, "contacts.sources", []string{"/x/contacts.vcf"})
			if err != nil || wrote != tc.wrote {
				t.Fatalf("wrote %v, err %v", wrote, err)
			}
			data, _ := os.ReadFile(filepath.Join(home, FileName))
			if tc.wrote && (!strings.Contains(string(data), "sources = [\"/x/contacts.vcf\"]") || strings.Contains(string(data), "\ncontacts = [")) {
				t.Errorf("not the [contacts] sources form:\n%s", data)
			}
			cfg, err := Bind(nil).Load(func(k string) string { return map[string]string{"TIDINGS_HOME": home}[k] })
			if err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			if tc.wrote && (len(cfg.Contacts) != 1 || cfg.Contacts[0] != "/x/contacts.vcf") {
				t.Errorf("contacts = %q", cfg.Contacts)
			}
			if !tc.wrote && (len(cfg.Contacts) != 1 || cfg.Contacts[0] != "/elsewhere.vcf") {
				t.Errorf("an existing key was changed: %q", cfg.Contacts)
			}
			if len(cfg.ContactAccounts) != tc.accounts || (strings.HasPrefix(tc.before, "region") && cfg.Region != "FR") {
				t.Errorf("the rest of the file changed meaning: %d accounts, region %q", len(cfg.ContactAccounts), cfg.Region)
			}
		})
	}
}
