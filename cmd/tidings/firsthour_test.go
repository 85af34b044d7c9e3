package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// run runs one command line on a Main that shares vars (its environment)
// and returns stdout, stderr and the error.
func run(t *testing.T, vars map[string]string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
	err := m.Run(context.Background(), args)
	return out.String(), errb.String(), err
}

// TestContactSourcesAreRemembered: contacts given once to `tidings index`
// are written to the home's config.toml, so `tidings dossier Linda` works
// afterwards without --contacts; Linda's iMessage and SMS threads are one
// person to dossier; a name that matches no card is an error.
func TestContactSourcesAreRemembered(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "tidings")
	vars := map[string]string{"HOME": root, "TIDINGS_HOME": home, "TIDINGS_NOW": anchorRFC3339}
	demoDir := filepath.Join(root, "demo")
	if _, _, err := run(t, vars, "demo", "--dir", demoDir, "--messages", "4000"); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := run(t, vars, "index", "--no-embed", "--imessage", filepath.Join(demoDir, "chat.db"), "--contacts", filepath.Join(demoDir, "contacts.vcf")); err != nil {
		t.Fatalf("index: %v\n%s", err, stderr)
	}
	cfg, err := config.Bind(nil).Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Contacts) != 1 || cfg.Contacts[0] != filepath.Join(demoDir, "contacts.vcf") || cfg.Origins["contacts"] != "file" {
		t.Errorf("contacts after index: %v (from %s), want the vcf remembered in config.toml", cfg.Contacts, cfg.Origins["contacts"])
	}
	out, stderr, err := run(t, vars, "dossier", "Linda")
	if err != nil || !strings.HasPrefix(out, "Linda Morgan") {
		t.Fatalf("dossier Linda: %v\n%s%s", err, out, stderr)
	}
	// One person across her iMessage and SMS threads.
	out, _, err = run(t, vars, "dossier", "Linda", "--json")
	if err != nil || !strings.Contains(out, "iMessage;-;+16175550192") || !strings.Contains(out, "SMS;-;+16175550192") {
		t.Errorf("dossier Linda --json does not span both threads: %v\n%.600s", err, out)
	}
	if _, _, err := run(t, vars, "dossier", "Zzyzx"); err == nil {
		t.Error("dossier of a name no card matches: no error")
	}
	// A second index without --contacts keeps them.
	if _, stderr, err := run(t, vars, "index", "--no-embed", "--imessage", filepath.Join(demoDir, "chat.db")); err != nil || !strings.Contains(stderr, "contacts: ") {
		t.Errorf("second index: %v\n%s", err, stderr)
	}
}

// TestBuildCacheBinaryIsNotSuggested: under `go run` the binary lives in
// a go-build folder that is deleted afterwards: the snippets name the
// path `go install` uses instead, and say how to get it.
func TestBuildCacheBinaryIsNotSuggested(t *testing.T) {
	m, _, _ := testMain(t, nil)
	cfg := mustConfig(t, m)
	var b bytes.Buffer
	printTTYHint(&b, mcpserver.DataSet{Kind: "personal"}, cfg, "/tmp/go-build1234/b001/exe/tidings")
	if strings.Contains(b.String(), "go-build") || !strings.Contains(b.String(), "go install ./cmd/tidings") {
		t.Errorf("hint under go run:\n%s", b.String())
	}
	if isBuildCache("/usr/local/bin/tidings") || !isBuildCache("/var/folders/x/T/go-build99/b001/exe/tidings") {
		t.Error("isBuildCache")
	}
}

// TestDemoNextStepsWorkAsPrinted: every command the serve --demo hint
// suggests runs as printed (after the program name) against the demo
// home, and the Claude Desktop snippet keeps --demo.
func TestDemoNextStepsWorkAsPrinted(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "tidings")
	vars := map[string]string{"HOME": root, "TIDINGS_HOME": home, "TIDINGS_NOW": anchorRFC3339}
	c := startClient(t, vars, "--demo")
	c.mustCall("get_status", nil)
	m, _, _ := testMain(t, vars)
	cfg := mustConfig(t, m)
	cfg.Demo = true
	cfg.Home = filepath.Join(home, "demo")
	var b bytes.Buffer
	printTTYHint(&b, mcpserver.DataSet{Kind: "demo", Note: "demo data set"}, cfg, "/usr/local/bin/tidings")
	hint := b.String()
	if !strings.Contains(hint, `"args": ["serve", "--demo"]`) || !strings.Contains(hint, "-- /usr/local/bin/tidings serve --demo") {
		t.Errorf("the client snippets drop --demo:\n%s", hint)
	}
	var cmds []string
	for _, line := range strings.Split(hint, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "$ /usr/local/bin/tidings "); ok {
			cmds = append(cmds, rest)
		}
	}
	if len(cmds) < 3 {
		t.Fatalf("the hint suggests %d commands:\n%s", len(cmds), hint)
	}
	for _, cmd := range cmds {
		args, err := splitShell(cmd)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		out, stderr, err := run(t, vars, args...)
		if err != nil {
			t.Errorf("tidings %s: %v\n%s%s", cmd, err, out, stderr)
		}
	}
}

// splitShell splits a command line the way a POSIX shell would for the
// words the hint prints: spaces, single and double quotes.
func splitShell(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}

// TestEveryCommandHasARealUsage: `tidings CMD -h` prints "Usage: tidings
// CMD", then its flags, each on a line of its own name and at most one
// argument word (a usage text in backquotes would be taken for the
// argument's name and garble the line: "-no-embed tidings serve").
func TestEveryCommandHasARealUsage(t *testing.T) {
	for name := range commands {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, err := run(t, map[string]string{"HOME": t.TempDir()}, name, "-h")
			if err != nil {
				t.Fatalf("%s -h: %v", name, err)
			}
			stderr += stdout // a command with verbs prints its usage as its answer
			if !strings.HasPrefix(stderr, "Usage: tidings "+name) && !strings.HasPrefix(stderr, "Usage:\n  tidings "+name) {
				t.Errorf("%s -h does not start with a usage line:\n%s", name, stderr)
			}
			for _, line := range strings.Split(stderr, "\n") {
				if !strings.HasPrefix(line, "  -") {
					continue
				}
				if f := strings.Fields(line); len(f) > 2 {
					t.Errorf("%s -h: garbled flag line %q", name, line)
				}
			}
		})
	}
}

// TestDoctorFixesNameOnlyItsFlags: a fix doctor prints never suggests a
// flag doctor does not take, unless it names the command the flag belongs
// to ("tidings serve --demo").
func TestDoctorFixesNameOnlyItsFlags(t *testing.T) {
	_, usage, _ := run(t, map[string]string{"HOME": t.TempDir()}, "doctor", "-h")
	has := map[string]bool{}
	for _, line := range strings.Split(usage, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(line, "  -") {
			has["--"+strings.TrimPrefix(f[0], "-")] = true
		}
	}
	flagRE := regexp.MustCompile(`(^|[^\w-])(--[a-z][a-z-]*)`)
	for _, env := range []map[string]string{
		{},
		{"ENABLE_MCP_SEND_MESSAGE": "true"},
		{"TIDINGS_IMESSAGE": "/nonexistent/chat.db", "TIDINGS_CONTACTS": "/nonexistent/contacts.vcf"},
	} {
		env["HOME"] = t.TempDir()
		env["TIDINGS_HOME"] = filepath.Join(env["HOME"], "tidings")
		m, _, _ := testMain(t, env)
		for _, r := range runChecks(t.Context(), mustConfig(t, m)) {
			for _, sentence := range strings.Split(r.Fix, ", ") {
				for _, mm := range flagRE.FindAllStringSubmatchIndex(sentence, -1) {
					flag := sentence[mm[4]:mm[5]]
					if !has[flag] && !strings.Contains(sentence[:mm[4]], "tidings ") {
						t.Errorf("%s: fix %q suggests %s, which doctor does not take", r.Name, r.Fix, flag)
					}
				}
			}
		}
	}
}

// TestSearchDaysZeroIsAnError: `tidings search --days 0` is refused as
// search_messages refuses days 0, not silently read as "any time".
func TestSearchDaysZeroIsAnError(t *testing.T) {
	for _, days := range []string{"0", "-1", "0.0"} {
		_, _, err := run(t, map[string]string{"HOME": t.TempDir()}, "search", "--days", days, "dinner")
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--days") {
			t.Errorf("--days %s: err = %v, want a usage error naming --days", days, err)
		}
	}
}
