package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestREADMEPathFollowedLiterally follows the shell commands of README.md's
// first section (before "## What it is") as a new user on a fresh Linux
// machine would — only HOME and PATH set — as far as a test can: `go run
// ./cmd/tidings` and `tidings` are the built binary (`go install` is that
// build), `serve --demo` gets one stdio request and then end of input (a
// terminal would wait for a client), `~` is HOME, and ./scripts/test is the
// suite this test runs in. Every command must succeed.
func TestREADMEPathFollowedLiterally(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and generates the demo data")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the README's paths are a Linux machine's ($HOME/.local/share/tidings)")
	}
	bin := tidingsBinary(t)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(readme), "\n## ")
	var cmds []string
	in := false
	for _, line := range strings.Split(first, "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in:
			if c, _, _ := strings.Cut(line, "  #"); strings.TrimSpace(c) != "" {
				cmds = append(cmds, strings.TrimSpace(c))
			}
		}
	}
	if len(cmds) < 4 {
		t.Fatalf("README's first section has %d commands: %q", len(cmds), cmds)
	}
	home := t.TempDir()
	ran := 0
	for _, c := range cmds {
		var args []string
		switch {
		case c == "./scripts/test", c == "go install ./cmd/tidings":
			continue // the suite itself; the build tidingsBinary made
		case strings.HasPrefix(c, "go run ./cmd/tidings "):
			args, _ = splitShell(strings.TrimPrefix(c, "go run ./cmd/tidings "))
		case strings.HasPrefix(c, "tidings "):
			args, _ = splitShell(strings.TrimPrefix(c, "tidings "))
		default:
			t.Fatalf("README command %q: the test does not know how to follow it", c)
		}
		for i, a := range args {
			if strings.HasPrefix(a, "~/") {
				args[i] = filepath.Join(home, a[2:])
			}
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if len(args) > 0 && args[0] == "serve" {
			cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_status","arguments":{},` + modernMeta + "}}\n")
		}
		if err := cmd.Run(); err != nil {
			t.Fatalf("README command %q: %v\n%s%s", c, err, stdout.String(), stderr.String())
		}
		t.Logf("$ %s → %d bytes", c, stdout.Len())
		if len(args) > 0 && args[0] == "serve" {
			sc := bufio.NewScanner(&stdout)
			sc.Buffer(nil, 4<<20)
			if !sc.Scan() || !strings.Contains(sc.Text(), `"kind":"demo"`) {
				t.Errorf("README command %q: no demo status on stdout:\n%.500s", c, stdout.String())
			}
		} else if stdout.Len() == 0 {
			t.Errorf("README command %q printed nothing", c)
		}
		ran++
	}
	if ran < 3 {
		t.Errorf("only %d README commands were followed", ran)
	}
}
