package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Command-line plumbing shared by the commands: flag sets, argument
// parsing and the --json output.

// newFlagSet returns the flag set of a command. Parse errors and the usage
// (usage, then the flags' defaults) go to m.Stderr.
func newFlagSet(m *Main, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() { fmt.Fprint(m.Stderr, usage); fs.PrintDefaults() }
	return fs
}

// parseFlags parses a command's flags. help is true when -h or --help
// asked for the usage, which the flag set has printed: the command then
// returns nil. Any other parse error is a usageError.
func parseFlags(fs *flag.FlagSet, args []string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, usageError{err.Error()}
	}
	return false, nil
}

// parseNoArgs is parseFlags for a command that takes no arguments, only
// flags: an argument is a usageError naming the command.
func parseNoArgs(fs *flag.FlagSet, args []string) (help bool, err error) {
	if help, err := parseFlags(fs, args); help || err != nil {
		return help, err
	}
	if fs.NArg() > 0 {
		return false, usageError{fmt.Sprintf("%s takes no arguments (got %q)", fs.Name(), fs.Args())}
	}
	return false, nil
}

// parseWords is parseFlags for a command with one free-text argument (a
// query, a contact) whose words may come before, between or after the
// flags. It returns the words joined by spaces, trimmed.
func parseWords(fs *flag.FlagSet, args []string) (text string, help bool, err error) {
	var words []string
	for {
		if help, err := parseFlags(fs, args); help || err != nil {
			return "", help, err
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return strings.TrimSpace(strings.Join(words, " ")), false, nil
}

// printJSON writes v as indented JSON: the --json output of the commands.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
