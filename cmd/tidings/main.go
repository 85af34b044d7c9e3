// Command tidings gives AI assistants safe, fast access to a person's
// messages over MCP and over a privilege-separated file bridge.
//
// Each subcommand lives in its own file and registers itself with
// register; Main.Run dispatches on the first argument, so every command is
// testable without a process (see main_test.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"syscall"

	"github.com/tidings-mcp/tidings/internal/policy/sanitize"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = defaultVersion

const defaultVersion = "0.1.0-dev"

// command is one subcommand. run receives the arguments after the command
// name; it writes human output to m.Stdout and diagnostics to m.Stderr.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, m *Main, args []string) error
}

var commands = map[string]command{}

// register adds a subcommand; it is called from the init function of the
// file that implements the command.
func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("duplicate command " + c.name)
	}
	commands[c.name] = c
}

// Main holds the process environment so commands can be run in tests.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string
	// Terminal makes Run treat Stdout as a terminal (tests); a real
	// terminal is detected.
	Terminal bool
}

// NewMain returns a Main bound to the real process.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

// usageError is a mistake on the command line; main prints it with a hint
// and exits with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Run executes the subcommand named by args[0].
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) == 0 && (m.Terminal || isTerminalWriter(m.Stdout)) {
		m.firstRun(m.Stdout)
		return nil
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		m.usage(m.Stdout)
		return nil
	}
	if args[0] == "version" || args[0] == "--version" {
		readBuildInfo(debug.ReadBuildInfo).write(m.Stdout)
		return nil
	}
	c, ok := commands[args[0]]
	if !ok {
		return usageError{fmt.Sprintf("unknown command %q (run 'tidings help' for the list)", args[0])}
	}
	if err := c.run(ctx, m, args[1:]); err != nil {
		return quotedError{err}
	}
	return nil
}

// quotedError is the CLI's catch-all for errors that quote input (a file's
// element name, a path read from a file): its text is escaped and bounded
// by sanitize.Message before anything prints it, so a file cannot drive
// the terminal (docs/security.md, "Errors that quote input"). errors.Is
// and errors.As see the original.
type quotedError struct{ err error }

func (e quotedError) Error() string { return sanitize.Message(e.err.Error()) }
func (e quotedError) Unwrap() error { return e.err }

// firstRun is what `tidings` alone prints in a terminal: the next steps,
// not the whole command list.
func (m *Main) firstRun(w io.Writer) {
	fmt.Fprintf(w, `tidings %s: your messages for AI assistants, safely.

Next steps:
  tidings serve --demo                       try it: an MCP server on made-up demo data (stdio)
  tidings doctor                             check what Tidings can read on this machine, with fixes
  tidings clients install claude-desktop     set it up in a client (also claude-code, codex, cursor, vscode)

'tidings help' lists every command.
`, Version)
}

func (m *Main) usage(w io.Writer) {
	fmt.Fprintf(w, "tidings %s: messages for AI assistants, safely.\n\nUsage: tidings COMMAND [flags]\n\nCommands:\n", Version)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'tidings COMMAND -h' for a command's flags.\n")
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := NewMain().Run(ctx, os.Args[1:])
	stop()
	if err == nil {
		return
	}
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(os.Stderr, "tidings: %v\n", err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "tidings: %v\n", err)
	os.Exit(1)
}
