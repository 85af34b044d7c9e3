package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/clients"
)

func init() {
	register(command{
		name:    "clients",
		summary: "set Tidings up in an MCP client: list | install CLIENT | uninstall CLIENT",
		run:     runClients,
	})
}

const clientsUsage = `Usage:
  tidings clients list
  tidings clients install CLIENT [--read-only] [--dry-run] [--command PATH]
  tidings clients uninstall CLIENT [--dry-run]

CLIENT is claude-desktop, claude-code, codex, cursor or vscode. install adds a
"tidings" server to the client's own configuration file, keeping your other
servers and your comments; the original is backed up next to it and the change
is printed as a diff. A file Tidings cannot parse is left alone. Restart the
client afterwards.
`

// clientsEnv is where the clients live for this process.
func clientsEnv(m *Main) clients.Env {
	home := m.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return clients.Env{Home: home, GOOS: runtime.GOOS, AppData: m.Getenv("APPDATA")}
}

func runClients(ctx context.Context, m *Main, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(m.Stdout, clientsUsage)
		return nil
	}
	env := clientsEnv(m)
	verb, rest := args[0], args[1:]
	switch verb {
	case "list":
		fs := newFlagSet(m, "clients list", clientsUsage)
		if help, err := parseNoArgs(fs, rest); help || err != nil {
			return err
		}
		for _, c := range clients.Known(env) {
			st := clients.Status(c)
			state := "not installed"
			switch {
			case st.Problem != "":
				state = "cannot read its config: " + st.Problem
			case st.Configured:
				state = "tidings configured (" + st.Command + ")"
			case st.Installed:
				state = "installed, tidings not configured"
			}
			fmt.Fprintf(m.Stdout, "%-15s %-60s %s\n", c.ID, c.Path, state)
		}
		return nil
	case "install", "uninstall":
	default:
		return usageError{fmt.Sprintf("clients: unknown verb %q (want list, install or uninstall)", verb)}
	}
	fs := newFlagSet(m, "clients "+verb, clientsUsage)
	dry := fs.Bool("dry-run", false, "print the change, write nothing")
	readOnly, command := new(bool), new(string)
	if verb == "install" {
		readOnly = fs.Bool("read-only", false, "serve without write tools (tidings serve --read-only)")
		command = fs.String("command", "", "the tidings binary the client runs (default: this one)")
	}
	id, help, err := parseWords(fs, rest)
	if help || err != nil {
		return err
	}
	if id == "" || strings.Contains(id, " ") {
		return usageError{fmt.Sprintf("clients %s needs one CLIENT: %s", verb, strings.Join(clients.IDs(env), ", "))}
	}
	c, err := clients.Find(env, id)
	if err != nil {
		return usageError{err.Error()}
	}
	var ch clients.Change
	if verb == "install" {
		bin, err := clientBinary(*command)
		if err != nil {
			return err
		}
		s := clients.Server{Command: bin, Args: []string{"serve"}}
		if *readOnly {
			s.Args = append(s.Args, "--read-only")
		}
		ch, err = clients.PlanInstall(c, s)
		if err != nil {
			return err
		}
	} else {
		if ch, err = clients.PlanUninstall(c); err != nil {
			return err
		}
	}
	if ch.Diff == "" {
		fmt.Fprintf(m.Stdout, "%s: nothing to change in %s\n", c.Name, c.Path)
		return nil
	}
	fmt.Fprint(m.Stdout, ch.Diff)
	if *dry {
		fmt.Fprintln(m.Stdout, "(dry run: nothing written)")
		return nil
	}
	backup, err := clients.Apply(ch, time.Now())
	if err != nil {
		return err
	}
	if backup != "" {
		fmt.Fprintf(m.Stdout, "backed up the original to %s\n", backup)
	}
	fmt.Fprintf(m.Stdout, "%s updated: restart %s to pick it up.\n", c.Path, c.Name)
	return nil
}

// clientBinary is the absolute path a client should run. A binary that
// `go run` built lives in a temporary build folder that is gone when it
// exits, so it is refused with the way to get a stable one.
func clientBinary(flagValue string) (string, error) {
	bin := flagValue
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find this binary: %w (pass --command PATH)", err)
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		if isTemporaryBuild(exe) {
			return "", fmt.Errorf("this tidings was built by `go run` into a temporary folder (%s) that disappears when it exits: run `go install ./cmd/tidings` and use the installed binary (usually $(go env GOPATH)/bin/tidings), or pass --command PATH", filepath.Dir(exe))
		}
		bin = exe
	}
	if !filepath.IsAbs(bin) {
		abs, err := filepath.Abs(bin)
		if err != nil {
			return "", fmt.Errorf("--command %q: %w", bin, err)
		}
		bin = abs
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return "", fmt.Errorf("--command %s: not an executable file", bin)
	}
	return bin, nil
}

// isTemporaryBuild reports whether exe is a `go run` or `go test` build:
// those live in a go-build folder under the temporary directory.
func isTemporaryBuild(exe string) bool {
	for _, part := range strings.Split(filepath.ToSlash(exe), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	return false
}
