// Package clients installs Tidings into the configuration files of the MCP
// clients people use (docs/clients.md): Claude Desktop, Claude Code, Codex,
// Cursor and VS Code. It edits a file only when it can parse it, keeps the
// user's other servers and, for JSON with comments, the comments and
// layout; it backs the original up before writing and reports the change as
// a unified diff.
package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/pmezard/go-difflib/difflib"
	"github.com/tailscale/hujson"
)

// ServerName is the key Tidings is installed under in every client.
const ServerName = "tidings"

// Format is how a client stores its MCP servers.
type Format int

const (
	// JSON is a JSON (or JSON-with-comments) file with an object of
	// servers under Key.
	JSON Format = iota
	// CodexTOML is Codex's config.toml: one [mcp_servers.NAME] table per
	// server.
	CodexTOML
)

// Client is one supported MCP client.
type Client struct {
	// ID is the name on the command line ("claude-desktop").
	ID   string
	Name string
	// Path is the configuration file; Markers are paths whose existence
	// means the client is installed (its config folder, its app bundle).
	Path    string
	Markers []string
	Format  Format
	// Key is the JSON member that holds the servers ("mcpServers" or
	// "servers"); TypeStdio adds "type": "stdio" to the entry (VS Code and
	// Claude Code require it).
	Key       string
	TypeStdio bool
}

// Env is where the clients live: the home folder, the OS and, on Windows,
// %APPDATA%. Tests give a temporary home.
type Env struct {
	Home    string
	GOOS    string
	AppData string
}

// Known lists the supported clients for env, in display order.
func Known(env Env) []Client {
	h := env.Home
	var desktop, vscode, desktopApp string
	switch env.GOOS {
	case "darwin":
		desktop = filepath.Join(h, "Library", "Application Support", "Claude", "claude_desktop_config.json")
		vscode = filepath.Join(h, "Library", "Application Support", "Code", "User", "mcp.json")
		desktopApp = "/Applications/Claude.app"
	case "windows":
		desktop = filepath.Join(env.AppData, "Claude", "claude_desktop_config.json")
		vscode = filepath.Join(env.AppData, "Code", "User", "mcp.json")
	default: // Linux and the BSDs: community builds of Claude Desktop read ~/.config/Claude
		desktop = filepath.Join(h, ".config", "Claude", "claude_desktop_config.json")
		vscode = filepath.Join(h, ".config", "Code", "User", "mcp.json")
	}
	desktopMarkers := []string{filepath.Dir(desktop)}
	if desktopApp != "" {
		desktopMarkers = append(desktopMarkers, desktopApp)
	}
	return []Client{
		{ID: "claude-desktop", Name: "Claude Desktop", Path: desktop, Markers: desktopMarkers, Format: JSON, Key: "mcpServers"},
		{ID: "claude-code", Name: "Claude Code", Path: filepath.Join(h, ".claude.json"), Markers: []string{filepath.Join(h, ".claude.json"), filepath.Join(h, ".claude")}, Format: JSON, Key: "mcpServers", TypeStdio: true},
		{ID: "codex", Name: "Codex", Path: filepath.Join(h, ".codex", "config.toml"), Markers: []string{filepath.Join(h, ".codex")}, Format: CodexTOML},
		{ID: "cursor", Name: "Cursor", Path: filepath.Join(h, ".cursor", "mcp.json"), Markers: []string{filepath.Join(h, ".cursor")}, Format: JSON, Key: "mcpServers"},
		{ID: "vscode", Name: "VS Code", Path: vscode, Markers: []string{filepath.Dir(vscode)}, Format: JSON, Key: "servers", TypeStdio: true},
	}
}

// Find returns the client with that ID.
func Find(env Env, id string) (Client, error) {
	all := Known(env)
	for _, c := range all {
		if c.ID == id {
			return c, nil
		}
	}
	ids := make([]string, len(all))
	for i, c := range all {
		ids[i] = c.ID
	}
	return Client{}, fmt.Errorf("unknown client %q (known: %s)", id, strings.Join(ids, ", "))
}

// Server is the entry to install: the command and its arguments.
type Server struct {
	Command string
	Args    []string
}

// State is what List reports for one client.
type State struct {
	Client    Client
	Installed bool
	// Configured is true when the file holds a "tidings" server; Command is
	// its command then.
	Configured bool
	Command    string
	// Problem is set when the file exists but cannot be read or parsed.
	Problem string
}

// Status reports whether c is installed and whether Tidings is configured
// in it. It never writes.
func Status(c Client) State {
	st := State{Client: c}
	for _, m := range c.Markers {
		if _, err := os.Stat(m); err == nil {
			st.Installed = true
		}
	}
	data, err := os.ReadFile(c.Path)
	if errors.Is(err, os.ErrNotExist) {
		return st
	}
	if err != nil {
		st.Problem = err.Error()
		return st
	}
	st.Installed = true
	cmd, ok, err := current(c, data)
	if err != nil {
		st.Problem = err.Error()
		return st
	}
	st.Configured, st.Command = ok, cmd
	return st
}

// Change is a planned edit of one client's file.
type Change struct {
	Client Client
	Before []byte // nil when the file does not exist
	After  []byte
	// Diff is a unified diff of Before → After ("" when nothing changes).
	Diff string
}

// PlanInstall computes the file content with s installed as "tidings",
// replacing an earlier Tidings entry and keeping everything else. A file
// that exists but does not parse is an error and nothing is planned.
func PlanInstall(c Client, s Server) (Change, error) {
	before, err := readExisting(c)
	if err != nil {
		return Change{}, err
	}
	var after []byte
	switch c.Format {
	case JSON:
		after, err = installJSON(c, before, s)
	case CodexTOML:
		after, err = installCodex(before, s)
	}
	if err != nil {
		return Change{}, fmt.Errorf("%s: %w", c.Path, err)
	}
	return newChange(c, before, after), nil
}

// PlanUninstall computes the file content without the "tidings" entry.
// A missing file or a file without the entry plans no change.
func PlanUninstall(c Client) (Change, error) {
	before, err := readExisting(c)
	if err != nil || before == nil {
		return Change{Client: c}, err
	}
	var after []byte
	switch c.Format {
	case JSON:
		after, err = uninstallJSON(c, before)
	case CodexTOML:
		after, err = uninstallCodex(before)
	}
	if err != nil {
		return Change{}, fmt.Errorf("%s: %w", c.Path, err)
	}
	return newChange(c, before, after), nil
}

func readExisting(c Client) ([]byte, error) {
	data, err := os.ReadFile(c.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", c.Path, err)
	}
	return data, nil
}

func newChange(c Client, before, after []byte) Change {
	ch := Change{Client: c, Before: before, After: after}
	if !bytes.Equal(before, after) {
		ch.Diff, _ = difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(string(before)), B: difflib.SplitLines(string(after)),
			FromFile: c.Path, ToFile: c.Path, Context: 3,
		})
	}
	return ch
}

// Apply writes the change: the original is copied to a backup next to it
// (PATH.tidings-backup-YYYYMMDDTHHMMSS, same permissions) and the new
// content replaces the file atomically. It returns the backup's path ("" when
// there was no original). A change without a diff writes nothing.
func Apply(ch Change, now time.Time) (backup string, err error) {
	if ch.Diff == "" {
		return "", nil
	}
	path := ch.Client.Path
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if ch.Before != nil {
		backup = path + ".tidings-backup-" + now.UTC().Format("20060102T150405")
		if err := writeAtomic(backup, ch.Before, mode); err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
	}
	if err := writeAtomic(path, ch.After, mode); err != nil {
		return backup, fmt.Errorf("write %s: %w", path, err)
	}
	return backup, nil
}

func writeAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// --- JSON (with comments) ---

func parseJSON(data []byte) (hujson.Value, error) {
	v, err := hujson.Parse(data)
	if err != nil {
		return v, fmt.Errorf("cannot parse it (%v): fix or move the file; nothing was changed", err)
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return v, errors.New("its top level is not a JSON object: fix or move the file; nothing was changed")
	}
	return v, nil
}

func jsonPointer(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("/")
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(p))
	}
	return b.String()
}

// entry is the server entry as written into JSON files, in the order a
// person would write it.
type entry struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

func entryFor(c Client, s Server) entry {
	e := entry{Command: s.Command, Args: s.Args}
	if e.Args == nil {
		e.Args = []string{}
	}
	if c.TypeStdio {
		e.Type = "stdio"
	}
	return e
}

// render lays e out as indented JSON whose continuation lines start with
// indent, one level being unit.
func render(e entry, indent, unit string) ([]byte, error) {
	raw, err := jsonMarshal(e)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, indent, unit); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// member finds the member called name in obj.
func member(obj *hujson.Object, name string) (int, bool) {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			return i, true
		}
	}
	return -1, false
}

// lineIndent is the indentation a member sits at: the blanks after the last
// line break before its name ("" when it shares a line with the brace).
func lineIndent(m hujson.ObjectMember) (string, bool) {
	extra := string(m.Name.BeforeExtra)
	i := strings.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	tail := extra[i+1:]
	if strings.Trim(tail, " \t") != "" {
		return "", false
	}
	return tail, true
}

// layout guesses the indentation of obj's members and the file's unit of
// indentation, given the indentation of obj itself.
func layout(obj *hujson.Object, outer string) (inner, unit string) {
	unit = "  "
	if len(obj.Members) > 0 {
		if ind, ok := lineIndent(obj.Members[0]); ok && len(ind) > len(outer) && strings.HasPrefix(ind, outer) {
			return ind, ind[len(outer):]
		}
	}
	return outer + unit, unit
}

// installJSON edits the text in place: the entry is written as the first
// member of the servers object (or replaces the old entry's value), laid
// out like its neighbours, and every other byte of the file is kept —
// comments, order, trailing commas. hujson parses the file and gives the
// offsets; it never re-serialises the user's content.
func installJSON(c Client, before []byte, s Server) ([]byte, error) {
	src := before
	if len(bytes.TrimSpace(src)) == 0 {
		src = []byte("{}\n")
	}
	v, err := parseJSON(src)
	if err != nil {
		return nil, err
	}
	top := v.Value.(*hujson.Object)
	topInner, unit := layout(top, "")
	e := entryFor(c, s)
	splice := func(at, end int, text []byte) []byte {
		out := append([]byte{}, src[:at]...)
		out = append(out, text...)
		return append(out, src[end:]...)
	}
	i, ok := member(top, c.Key)
	if !ok {
		body, err := render(e, topInner+unit, unit)
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("\n%s%q: {\n%s%q: %s\n%s}", topInner, c.Key, topInner+unit, ServerName, body, topInner)
		if len(top.Members) > 0 {
			text += ","
		} else {
			text += "\n"
		}
		at := v.StartOffset + 1
		return splice(at, at, []byte(text)), nil
	}
	servers := top.Members[i].Value
	obj, ok := servers.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%q is not an object: fix or move the file; nothing was changed", c.Key)
	}
	outer, _ := lineIndent(top.Members[i])
	inner, unit := layout(obj, outer)
	body, err := render(e, inner, unit)
	if err != nil {
		return nil, err
	}
	if j, ok := member(obj, ServerName); ok {
		old := obj.Members[j].Value
		if ind, ok := lineIndent(obj.Members[j]); ok {
			if body, err = render(e, ind, unit); err != nil {
				return nil, err
			}
		}
		return splice(old.StartOffset, old.EndOffset, body), nil
	}
	text := fmt.Sprintf("\n%s%q: %s", inner, ServerName, body)
	if len(obj.Members) > 0 {
		text += ","
	} else {
		text += "\n" + outer
	}
	at := servers.StartOffset + 1
	return splice(at, at, []byte(text)), nil
}

// uninstallJSON cuts the tidings member out of the text: from just after
// the brace or comma before it to just after its own comma (or, for a last
// member without one, from the comma before it), so an install followed by
// an uninstall gives back the original bytes.
func uninstallJSON(c Client, before []byte) ([]byte, error) {
	v, err := parseJSON(before)
	if err != nil {
		return nil, err
	}
	top := v.Value.(*hujson.Object)
	i, ok := member(top, c.Key)
	if !ok {
		return before, nil
	}
	obj, ok := top.Members[i].Value.Value.(*hujson.Object)
	if !ok {
		return before, nil
	}
	j, ok := member(obj, ServerName)
	if !ok {
		return before, nil
	}
	m := obj.Members[j]
	start := m.Name.StartOffset - len(m.Name.BeforeExtra)
	end := m.Value.EndOffset + len(m.Value.AfterExtra)
	switch {
	case end < len(before) && before[end] == ',':
		end++
	case j > 0:
		start-- // the comma before it
	}
	out := append([]byte{}, before[:start]...)
	return append(out, before[end:]...), nil
}

func currentJSON(c Client, data []byte) (string, bool, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return "", false, nil
	}
	v, err := parseJSON(data)
	if err != nil {
		return "", false, err
	}
	e := v.Find(jsonPointer(c.Key, ServerName))
	if e == nil {
		return "", false, nil
	}
	cmd := e.Find("/command")
	if cmd == nil {
		return "", true, nil
	}
	if lit, ok := cmd.Value.(hujson.Literal); ok {
		return lit.String(), true, nil
	}
	return "", true, nil
}

func current(c Client, data []byte) (string, bool, error) {
	if c.Format == CodexTOML {
		return currentCodex(data)
	}
	return currentJSON(c, data)
}

// --- Codex TOML ---
//
// Codex keeps servers as [mcp_servers.NAME] tables. The edit is textual so
// the user's comments and order survive: the lines of Tidings' own table
// (and its sub-tables) are replaced or removed, the rest is untouched, and
// the result must parse before it is written.

const codexHeader = "[mcp_servers." + ServerName + "]"

func parseCodex(data []byte) (map[string]any, error) {
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		return nil, fmt.Errorf("cannot parse it (%v): fix or move the file; nothing was changed", err)
	}
	return m, nil
}

// codexSpan returns the line range [start, end) of Tidings' table and its
// sub-tables, or -1, -1.
func codexSpan(lines []string) (int, int) {
	start := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if start < 0 {
			if t == codexHeader || strings.HasPrefix(t, codexHeader[:len(codexHeader)-1]+".") {
				start = i
			}
			continue
		}
		if strings.HasPrefix(t, "[") && !strings.HasPrefix(t, "[mcp_servers."+ServerName+".") && t != codexHeader {
			return start, i
		}
	}
	if start < 0 {
		return -1, -1
	}
	return start, len(lines)
}

func installCodex(before []byte, s Server) ([]byte, error) {
	m, err := parseCodex(before)
	if err != nil {
		return nil, err
	}
	if inline, ok := m["mcp_servers"].(map[string]any); ok {
		if _, ok := inline[ServerName]; ok && !bytes.Contains(before, []byte(codexHeader)) {
			return nil, errors.New("mcp_servers.tidings is written in a form this installer does not edit (not a [mcp_servers.tidings] table): edit it by hand; nothing was changed")
		}
	}
	var block bytes.Buffer
	block.WriteString(codexHeader + "\n")
	enc := toml.NewEncoder(&block)
	args := s.Args
	if args == nil {
		args = []string{}
	}
	if err := enc.Encode(struct {
		Command string   `toml:"command"`
		Args    []string `toml:"args"`
	}{s.Command, args}); err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(before), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start, end := codexSpan(lines)
	var out string
	if start >= 0 {
		out = strings.Join(lines[:start], "") + block.String() + trailingBlank(lines[start:end]) + strings.Join(lines[end:], "")
	} else {
		out = string(before)
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		if out != "" {
			out += "\n"
		}
		out += block.String()
	}
	if _, err := parseCodex([]byte(out)); err != nil {
		return nil, fmt.Errorf("the edited file would not parse (%v); nothing was changed", err)
	}
	return []byte(out), nil
}

// trailingBlank keeps the blank lines that separated the old table from
// the next one.
func trailingBlank(span []string) string {
	var n int
	for i := len(span) - 1; i >= 0 && strings.TrimSpace(span[i]) == ""; i-- {
		n++
	}
	return strings.Repeat("\n", n)
}

func uninstallCodex(before []byte) ([]byte, error) {
	if _, err := parseCodex(before); err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(before), "\n")
	start, end := codexSpan(lines)
	if start < 0 {
		return before, nil
	}
	head := strings.Join(lines[:start], "")
	if end == len(lines) { // the table was last: drop the blank line install put before it
		head = strings.TrimRight(head, "\n") + "\n"
		if strings.TrimSpace(head) == "" {
			head = ""
		}
	}
	out := head + strings.Join(lines[end:], "")
	if _, err := parseCodex([]byte(out)); err != nil {
		return nil, fmt.Errorf("the edited file would not parse (%v); nothing was changed", err)
	}
	return []byte(out), nil
}

func currentCodex(data []byte) (string, bool, error) {
	m, err := parseCodex(data)
	if err != nil {
		return "", false, err
	}
	servers, _ := m["mcp_servers"].(map[string]any)
	e, ok := servers[ServerName].(map[string]any)
	if !ok {
		return "", false, nil
	}
	cmd, _ := e["command"].(string)
	return cmd, true, nil
}

// IDs lists the client IDs.
func IDs(env Env) []string {
	var out []string
	for _, c := range Known(env) {
		out = append(out, c.ID)
	}
	return slices.Clip(out)
}
