package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/policy"
)

func init() {
	register(command{
		name:    "policy",
		summary: "edit the read policy: block|unblock|allow|disallow|list|mode (contacts/*.txt)",
		run:     runPolicy,
	})
}

const policyUsage = `Usage: tidings policy VERB [--home DIR] [ARGS]

Edits the read policy in DIR/contacts/ (DIR defaults to $TIDINGS_HOME; pass
the bridge folder to edit a bridge helper's policy):

  block ENTRY... [--comment TEXT]   never read or send to these
  unblock ENTRY...                  remove matching blocklist entries (any format of a number)
  allow ENTRY... [--comment TEXT]   may be read in allowlist mode
  disallow ENTRY...                 remove matching allowlist entries
  list [--json]                     show the mode and both lists
  mode [blocklist|allowlist]        show or set the mode

An ENTRY is a phone number in any format (matched by its last 10 digits), an
email address (case-insensitive), a chat id such as chat123456789, or a
distinctive part of a chat id or guid (at least 6 characters).
`

func runPolicy(ctx context.Context, m *Main, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(m.Stdout, policyUsage)
		return nil
	}
	// --home may come before the verb ("policy --home D block …") or
	// after it. --dir is its former name, kept as a hidden alias (the
	// usage shows --home only).
	top := flag.NewFlagSet("policy", flag.ContinueOnError)
	top.SetOutput(m.Stderr)
	top.Usage = func() { fmt.Fprint(m.Stderr, policyUsage) }
	topDir := top.String("home", "", "folder that holds contacts/ (default: $TIDINGS_HOME)")
	top.StringVar(topDir, "dir", "", "alias of --home")
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if top.NArg() == 0 {
		return usageError{"policy needs a verb: block, unblock, allow, disallow, list or mode"}
	}
	verb, rest := top.Arg(0), top.Args()[1:]
	fs := flag.NewFlagSet("policy "+verb, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = top.Usage
	dir := fs.String("home", *topDir, "folder that holds contacts/ (default: $TIDINGS_HOME)")
	fs.StringVar(dir, "dir", *topDir, "alias of --home")
	var comment *string
	var asJSON *bool
	switch verb {
	case "block", "allow":
		comment = fs.String("comment", "", "a comment line written above the new entries")
	case "list":
		asJSON = fs.Bool("json", false, "print JSON")
	case "unblock", "disallow", "mode":
	default:
		return usageError{fmt.Sprintf("unknown policy verb %q (want block, unblock, allow, disallow, list or mode)", verb)}
	}
	pos, err := parseInterleaved(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	home := *dir
	if home == "" {
		home = m.Getenv("TIDINGS_HOME")
	}
	if home == "" {
		home = config.DefaultHome(runtime.GOOS, m.Getenv)
	}

	switch verb {
	case "block", "allow":
		err = policyAdd(m.Stdout, home, verb, pos, *comment)
	case "unblock", "disallow":
		err = policyRemove(m.Stdout, home, verb, pos)
	case "list":
		if len(pos) != 0 {
			return usageError{"policy list takes no arguments"}
		}
		return policyList(m.Stdout, home, *asJSON)
	default: // mode
		if len(pos) == 0 {
			return policyMode(m.Stdout, home, pos)
		}
		err = policyMode(m.Stdout, home, pos)
	}
	if err != nil {
		return err
	}
	policyApplyNow(ctx, m, home)
	return nil
}

// policyApplyNow purges, right after an edit, what the edited policy
// hides from the index of the folder it governs, so a block takes effect
// in the index at once, not at the next sync (docs/security.md, "Editing:
// `tidings policy`"). A running server may hold the same index: both may
// purge, which is safe (SQLite serialises the writes, and each purge
// re-reads what another process changed). When the index cannot be opened
// here the edit stands, the reads filter by it, and a server or the next
// read purges; the command says so and succeeds.
func policyApplyNow(ctx context.Context, m *Main, home string) {
	getenv := func(k string) string {
		if k == "TIDINGS_HOME" {
			return home
		}
		return m.Getenv(k)
	}
	cfg, err := config.Bind(flag.NewFlagSet("policy", flag.ContinueOnError), "home").Load(getenv)
	if err != nil {
		fmt.Fprintf(m.Stderr, "note: the index was not purged now (%v); the next read or a running server will\n", err)
		return
	}
	n, err := applyHomePolicy(ctx, cfg, getenv, newLogger(m.Stderr, cfg.LogLevel))
	switch {
	case errors.Is(err, errNoIndex):
	case err != nil:
		fmt.Fprintf(m.Stderr, "note: the index was not purged now (%v); the next read or a running server will\n", err)
	case n > 0:
		fmt.Fprintf(m.Stdout, "index: purged %d conversation(s) the policy now hides\n", n)
	default:
		fmt.Fprintln(m.Stdout, "index: checked against the new policy (nothing stored is hidden by it)")
	}
}

// parseInterleaved parses flags that may come before, between or after
// the positional arguments ("block +1555… --comment mom"); everything after
// "--" is positional.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func listOf(verb string) policy.List {
	if verb == "allow" || verb == "disallow" {
		return policy.Allowed
	}
	return policy.Blocked
}

func describe(e policy.Entry) string {
	switch e.Kind {
	case policy.KindPhone:
		return fmt.Sprintf("%s (phone, matched by digits %s)", e.Text, e.Key)
	case policy.KindSubstring:
		return fmt.Sprintf("%s (part of a chat id or guid)", e.Text)
	}
	return fmt.Sprintf("%s (%s)", e.Text, e.Kind)
}

func policyAdd(w io.Writer, home, verb string, entries []string, comment string) error {
	if len(entries) == 0 {
		return usageError{fmt.Sprintf("policy %s needs at least one entry", verb)}
	}
	for _, e := range entries {
		if _, err := policy.ParseEntry(e); err != nil {
			return usageError{err.Error()}
		}
	}
	list := listOf(verb)
	added, err := policy.AddEntries(home, list, entries, comment)
	if err != nil {
		return fmt.Errorf("policy %s: %w", verb, err)
	}
	past := map[string]string{"block": "blocked", "allow": "allowed"}[verb]
	isNew := map[string]bool{}
	for _, e := range added {
		isNew[e.Text] = true
		fmt.Fprintf(w, "%s: %s\n", past, describe(e))
	}
	for _, t := range entries {
		e, _ := policy.ParseEntry(t)
		if !isNew[e.Text] {
			fmt.Fprintf(w, "already %s: %s\n", past, e.Text)
		}
	}
	fmt.Fprintf(w, "file: %s\n", policy.Path(home, list))
	if list == policy.Allowed {
		if mode, err := policy.ReadMode(home); err == nil && mode != policy.ModeAllowlist {
			fmt.Fprintln(w, "note: the allowlist is used only in allowlist mode (tidings policy mode allowlist)")
		}
	}
	return nil
}

func policyRemove(w io.Writer, home, verb string, entries []string) error {
	if len(entries) == 0 {
		return usageError{fmt.Sprintf("policy %s needs at least one entry", verb)}
	}
	for _, e := range entries {
		if _, err := policy.ParseEntry(e); err != nil {
			return usageError{err.Error()}
		}
	}
	list := listOf(verb)
	removed, err := policy.RemoveEntries(home, list, entries)
	if err != nil {
		return fmt.Errorf("policy %s: %w", verb, err)
	}
	name := map[policy.List]string{policy.Blocked: "blocklist", policy.Allowed: "allowlist"}[list]
	if len(removed) == 0 {
		fmt.Fprintf(w, "nothing to remove: no %s entry matches %s\n", name, strings.Join(entries, ", "))
	}
	for _, e := range removed {
		fmt.Fprintf(w, "removed from the %s (line %d): %s\n", name, e.Line, e.Text)
	}
	if list == policy.Blocked {
		// Say so when another entry (a group's chat id, a substring) still
		// blocks the handle.
		p, err := policy.Load(home, policy.Options{})
		if err != nil {
			return fmt.Errorf("policy %s: the edit was saved but the policy no longer loads: %w", verb, err)
		}
		for _, t := range entries {
			if e, _ := policy.ParseEntry(t); (e.Kind == policy.KindPhone || e.Kind == policy.KindEmail) &&
				p.AllowHandle(t).Reason == policy.ReasonBlocked {
				fmt.Fprintf(w, "note: %s is still blocked by another entry (run tidings policy list)\n", t)
			}
		}
	}
	return nil
}

type policyListing struct {
	Mode    policy.Mode        `json:"mode"`
	Blocked []policyListedItem `json:"blocked"`
	Allowed []policyListedItem `json:"allowed"`
	Files   policy.Files       `json:"files"`
}

type policyListedItem struct {
	Entry string `json:"entry"`
	Kind  string `json:"kind"`
	Line  int    `json:"line"`
}

func policyList(w io.Writer, home string, asJSON bool) error {
	p, err := policy.Load(home, policy.Options{})
	if err != nil {
		return fmt.Errorf("policy list: %w", err)
	}
	out := policyListing{Mode: p.Mode(), Files: p.Info().Files, Blocked: []policyListedItem{}, Allowed: []policyListedItem{}}
	for _, l := range []policy.List{policy.Blocked, policy.Allowed} {
		es, err := policy.Entries(home, l)
		if err != nil {
			return fmt.Errorf("policy list: %w", err)
		}
		for _, e := range es {
			item := policyListedItem{Entry: e.Text, Kind: e.Kind.String(), Line: e.Line}
			if l == policy.Blocked {
				out.Blocked = append(out.Blocked, item)
			} else {
				out.Allowed = append(out.Allowed, item)
			}
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(w, "mode: %s\n", out.Mode)
	for _, sec := range []struct {
		name  string
		path  string
		items []policyListedItem
	}{{"blocked", out.Files.Blocked, out.Blocked}, {"allowed", out.Files.Allowed, out.Allowed}} {
		fmt.Fprintf(w, "\n%s (%d) — %s\n", sec.name, len(sec.items), sec.path)
		for _, it := range sec.items {
			fmt.Fprintf(w, "  %-40s %s\n", it.Entry, it.Kind)
		}
	}
	if out.Mode == policy.ModeAllowlist && len(out.Allowed) == 0 {
		fmt.Fprintln(w, "\nnote: allowlist mode with an empty allowlist: no conversation is readable")
	}
	return nil
}

func policyMode(w io.Writer, home string, args []string) error {
	switch len(args) {
	case 0:
		mode, err := policy.ReadMode(home)
		if err != nil {
			return fmt.Errorf("policy mode: %w", err)
		}
		fmt.Fprintln(w, mode)
		return nil
	case 1:
	default:
		return usageError{"policy mode takes at most one argument: blocklist or allowlist"}
	}
	mode := policy.Mode(strings.ToLower(args[0]))
	if mode != policy.ModeBlocklist && mode != policy.ModeAllowlist {
		return usageError{fmt.Sprintf("unknown mode %q (want blocklist or allowlist)", args[0])}
	}
	if err := policy.SetMode(home, mode); err != nil {
		return fmt.Errorf("policy mode: %w", err)
	}
	fmt.Fprintf(w, "mode: %s\nfile: %s\n", mode, policy.ModePath(home))
	if mode == policy.ModeAllowlist {
		if es, err := policy.Entries(home, policy.Allowed); err == nil && len(es) == 0 {
			fmt.Fprintln(w, "note: the allowlist is empty, so no conversation is readable until you run tidings policy allow ENTRY")
		}
	}
	return nil
}
