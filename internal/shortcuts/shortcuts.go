// Package shortcuts is the Shortcuts service of seed 002 (docs/tools.md,
// "Shortcuts"): shortcuts_list and shortcuts_run over macOS's
// /usr/bin/shortcuts, run as argv through internal/proc. Other systems
// have no Shortcuts, and the service is absent there with that sentence.
// This file does not import the MCP SDK; tools.go does.
package shortcuts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/proc"
)

// Program is the Shortcuts command-line tool macOS ships.
const Program = "/usr/bin/shortcuts"

// Limits (docs/tools.md, "Shortcuts").
const (
	ListTimeout    = 20 * time.Second
	MaxInputBytes  = 64 << 10
	MaxOutputBytes = 64 << 10
)

// Find says whether Shortcuts can run here: the sentence is why not (""
// when it can), for get_status and permissions_check.
func Find(h proc.Host) (string, string) {
	if h.GOOS != "darwin" {
		return "", "Shortcuts exists only on macOS (/usr/bin/shortcuts); there is none on " + h.GOOS
	}
	p, err := h.LookPath(Program)
	if err != nil {
		return "", "no " + Program + " on this Mac (it ships with macOS 12 and later)"
	}
	return p, ""
}

// Runner lists and runs shortcuts with the program at Path.
type Runner struct {
	Path   string
	Runner proc.Runner
	// TempDir is where the private input and output files are made; empty
	// means os.TempDir().
	TempDir string
}

// ListCommand and RunCommand are the exact commands (tests pin them).
func (r *Runner) ListCommand() proc.Command {
	return proc.Command{Path: r.Path, Args: []string{"list"}, Timeout: ListTimeout}
}

// RunCommand runs name with the input file (optional) and writes its
// result as plain text to the output file.
func (r *Runner) RunCommand(name, input, out string, timeout time.Duration) proc.Command {
	args := []string{"run", name, "--output-path", out, "--output-type", "public.plain-text"}
	if input != "" {
		args = append(args, "--input-path", input)
	}
	return proc.Command{Path: r.Path, Args: args, Timeout: timeout}
}

// List returns the shortcuts' names as Shortcuts prints them (raw: the
// tool escapes them).
func (r *Runner) List(ctx context.Context) ([]string, error) {
	res, err := r.Runner.Run(ctx, r.ListCommand())
	if err != nil {
		return nil, fmt.Errorf("shortcuts list: %w", err)
	}
	if res.TimedOut || res.ExitCode != 0 {
		return nil, fmt.Errorf("shortcuts could not list the shortcuts (exit status %d%s)", res.ExitCode, firstLine(res.Stderr))
	}
	var names []string
	for _, l := range strings.Split(res.Stdout, "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			names = append(names, l)
		}
	}
	return names, nil
}

// Ran is what a shortcut returned: its text output (raw; the tool wraps
// it), whether it was cut at MaxOutputBytes.
type Ran struct {
	// Name is the shortcut's name as Shortcuts lists it.
	Name      string
	Output    string
	Truncated bool
}

// Run runs the shortcut called name — which must be one List returns
// exactly, so no caller string reaches the program that is not the name
// of a shortcut the person made — with input as its text input.
func (r *Runner) Run(ctx context.Context, name, input string, timeout time.Duration) (Ran, error) {
	if strings.TrimSpace(name) == "" {
		return Ran{}, errors.New("name is required: take it from shortcuts_list")
	}
	if len(input) > MaxInputBytes {
		return Ran{}, fmt.Errorf("input has %d bytes; at most %d are passed to a shortcut", len(input), MaxInputBytes)
	}
	names, err := r.List(ctx)
	if err != nil {
		return Ran{}, err
	}
	found := ""
	for _, form := range output.NameForms(name) {
		if slices.Contains(names, form) {
			found = form
			break
		}
	}
	if found == "" {
		return Ran{}, fmt.Errorf("there is no shortcut named %s: take the name from shortcuts_list", output.Name(name))
	}
	if strings.HasPrefix(found, "-") {
		return Ran{}, fmt.Errorf("the shortcut %s starts with '-', which the shortcuts program would read as an option; rename it in Shortcuts", output.Name(found))
	}
	tmp, err := os.MkdirTemp(r.TempDir, "tidings-shortcut-")
	if err != nil {
		return Ran{}, fmt.Errorf("shortcuts: private folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	in := ""
	if input != "" {
		in = filepath.Join(tmp, "input.txt")
		if err := os.WriteFile(in, []byte(input), 0o600); err != nil {
			return Ran{}, fmt.Errorf("shortcuts: input: %w", err)
		}
	}
	out := filepath.Join(tmp, "output.txt")
	res, err := r.Runner.Run(ctx, r.RunCommand(found, in, out, timeout))
	if err != nil {
		return Ran{}, fmt.Errorf("shortcuts run: %w", err)
	}
	switch {
	case res.TimedOut:
		return Ran{}, fmt.Errorf("the shortcut %s did not finish within %s, so it was stopped; it may have done part of its work", output.Name(found), timeout)
	case res.ExitCode != 0:
		return Ran{}, fmt.Errorf("the shortcut %s failed (exit status %d%s)", output.Name(found), res.ExitCode, firstLine(res.Stderr))
	}
	f, err := os.Open(out)
	if err != nil {
		return Ran{Name: found}, nil // a shortcut without output
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxOutputBytes+1))
	if err != nil {
		return Ran{}, fmt.Errorf("shortcuts: output: %w", err)
	}
	ran := Ran{Name: found, Output: string(b)}
	if len(b) > MaxOutputBytes {
		ran.Output, ran.Truncated = string(b[:MaxOutputBytes]), true
	}
	return ran, nil
}

func firstLine(stderr string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
	if line == "" {
		return ""
	}
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	return ": " + output.Name(line)
}
