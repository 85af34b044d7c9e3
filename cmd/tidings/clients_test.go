package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runClientsCLI(t *testing.T, home string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	env := map[string]string{"HOME": home}
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] }}
	err := m.Run(context.Background(), append([]string{"clients"}, args...))
	return out.String(), err
}

// `tidings clients` writes the client's file only when asked to, prints the
// change, says what it did, and list reflects it.
func TestClientsCommandInstallsWhereTheClientReads(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, "bin", "tidings")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cursor := filepath.Join(home, ".cursor", "mcp.json")

	out, err := runClientsCLI(t, home, "install", "cursor", "--dry-run", "--read-only", "--command", bin)
	if err != nil || !strings.Contains(out, `"--read-only"`) || !strings.Contains(out, "dry run") {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	if _, err := os.Stat(cursor); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dry run wrote %s", cursor)
	}

	if out, err = runClientsCLI(t, home, "install", "cursor", "--command", bin); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(cursor)
	if !bytes.Contains(data, []byte(bin)) || !strings.Contains(out, "restart Cursor") {
		t.Fatalf("install wrote %s; said %s", data, out)
	}
	if out, _ = runClientsCLI(t, home, "list"); !strings.Contains(out, "tidings configured ("+bin+")") {
		t.Errorf("list after install:\n%s", out)
	}
	if out, err = runClientsCLI(t, home, "uninstall", "cursor"); err != nil || !strings.Contains(out, "backed up the original") {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	if out, _ = runClientsCLI(t, home, "list"); !strings.Contains(out, "installed, tidings not configured") {
		t.Errorf("list after uninstall:\n%s", out)
	}
}

// Mistakes are usage errors, and a binary that `go run` built is refused
// because it disappears when the command exits.
func TestClientsCommandRefusals(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"install"}, "needs one CLIENT"},
		{[]string{"install", "notepad"}, `unknown client "notepad"`},
		{[]string{"frobnicate"}, "unknown verb"},
		{[]string{"install", "cursor", "--command", filepath.Join(home, "missing")}, "not an executable file"},
	} {
		if _, err := runClientsCLI(t, home, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
	for exe, want := range map[string]bool{
		"/tmp/go-build1234/b001/exe/tidings": true,
		"/home/me/go/bin/tidings":            false,
		"/usr/local/bin/tidings":             false,
	} {
		if got := isTemporaryBuild(exe); got != want {
			t.Errorf("isTemporaryBuild(%s) = %v", exe, got)
		}
	}
}

// `tidings` alone in a terminal says what to do next in a few lines, and
// every command it suggests exists; outside a terminal it prints the usage.
func TestNoArgumentsInATerminalPrintsNextSteps(t *testing.T) {
	var out bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Terminal: true}
	if err := m.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if n := strings.Count(text, "\n"); n > 12 || !strings.Contains(text, "Next steps") {
		t.Errorf("first run output (%d lines):\n%s", n, text)
	}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "tidings" && !strings.HasSuffix(f[1], ":") {
			if _, ok := commands[f[1]]; !ok {
				t.Errorf("suggests unknown command %q", f[1])
			}
		}
	}
	out.Reset()
	m.Terminal = false
	if err := m.Run(context.Background(), nil); err != nil || !strings.Contains(out.String(), "Commands:") {
		t.Errorf("outside a terminal: %v\n%s", err, out.String())
	}
}

// doctor --open-settings opens the Full Disk Access pane with `open` and
// that URL exactly (a recording `open` first on PATH stands in for macOS's),
// and elsewhere says there is nothing to open.
func TestDoctorOpenSettingsOpensTheFullDiskAccessPane(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "argv")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + record + "\n"
	if err := os.WriteFile(filepath.Join(dir, "open"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	if err := openFullDiskAccessPane(context.Background(), "darwin", &out); err != nil {
		t.Fatal(err)
	}
	argv, _ := os.ReadFile(record)
	if string(argv) != fullDiskAccessPane+"\n" || !strings.Contains(out.String(), "Full Disk Access") {
		t.Errorf("open got %q; said %q", argv, out.String())
	}
	if err := openFullDiskAccessPane(context.Background(), "linux", &out); err == nil || !strings.Contains(err.Error(), "macOS") {
		t.Errorf("linux: err = %v", err)
	}
}
