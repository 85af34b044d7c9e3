package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Editing keeps the files the way a person wrote them: comments, blank
// lines and order are preserved, new entries are appended, and every write
// is atomic (a 0600 temp file in the same directory, fsync, rename, fsync
// of the directory) inside a 0700 contacts directory.

// AddEntries appends the entries that are not already on list (an entry
// is already there when one with the same kind and normalised key exists,
// so "+1 (555) 123-4567" and "5551234567" are the same). A non-empty
// comment is written as a "# comment" line before the new entries. It
// returns the entries it added; invalid entries fail the whole call before
// anything is written.
func AddEntries(dir string, list List, texts []string, comment string) (added []Entry, err error) {
	var parsed []Entry
	for _, t := range texts {
		e, err := ParseEntry(t)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, e)
	}
	if strings.ContainsAny(comment, "\r\n") {
		return nil, fmt.Errorf("comment must be one line")
	}
	path := Path(dir, list)
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, l := range lines {
		if e, err := ParseEntry(splitLine(l)); err == nil {
			have[e.id()] = true
		}
	}
	var add []string
	for _, e := range parsed {
		if have[e.id()] {
			continue
		}
		have[e.id()] = true
		added = append(added, e)
		add = append(add, e.Text)
	}
	if len(added) == 0 {
		return nil, nil
	}
	if c := strings.TrimSpace(comment); c != "" {
		lines = append(lines, "# "+c)
	}
	lines = append(lines, add...)
	return added, writeLines(dir, path, lines)
}

// RemoveEntries removes from list every entry that is the same as one of
// texts or that matches it: unblocking "+1 415 555 1234" removes
// "4155551234", "(415) 555-1234" and, on the blocklist, a bare "555-1234".
// Comments are left alone. It returns the removed entries.
func RemoveEntries(dir string, list List, texts []string) (removed []Entry, err error) {
	var targets []Entry
	for _, t := range texts {
		e, err := ParseEntry(t)
		if err != nil {
			return nil, err
		}
		targets = append(targets, e)
	}
	path := Path(dir, list)
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	kept := lines[:0:0]
	for i, l := range lines {
		e, err := ParseEntry(splitLine(l))
		if err == nil && removes(targets, e, list) {
			e.Line = i + 1
			removed = append(removed, e)
			continue
		}
		kept = append(kept, l)
	}
	if len(removed) == 0 {
		return nil, nil
	}
	return removed, writeLines(dir, path, kept)
}

// removes reports whether any target removes entry e.
func removes(targets []Entry, e Entry, list List) bool {
	for _, t := range targets {
		if t.id() == e.id() {
			return true
		}
		if t.Kind == KindPhone || t.Kind == KindEmail {
			// The target is a handle: remove every person entry that
			// matches it under this list's rules.
			if (e.Kind == KindPhone || e.Kind == KindEmail) && newMatcher([]Entry{e}, list).person(parseHandle(t.Text)) {
				return true
			}
		}
	}
	return false
}

// Entries returns the entries of a list file as written (for `policy
// list`). A missing file is an empty list.
func Entries(dir string, list List) ([]Entry, error) {
	entries, _, err := readList(Path(dir, list), userFile)
	return entries, err
}

// ReadMode returns the mode in read_policy.txt (blocklist when absent).
func ReadMode(dir string) (Mode, error) {
	data, _, err := readSafe(ModePath(dir), userFile)
	if err != nil {
		return "", err
	}
	return parseMode(data)
}

// SetMode writes the mode to read_policy.txt, keeping its comments.
func SetMode(dir string, mode Mode) error {
	if mode != ModeBlocklist && mode != ModeAllowlist {
		return fmt.Errorf("unknown mode %q (want blocklist or allowlist)", mode)
	}
	path := ModePath(dir)
	lines, err := readLines(path)
	if err != nil {
		return err
	}
	var out []string
	for _, l := range lines {
		if splitLine(l) == "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		out = append(out, "# Read policy: blocklist (read everything not blocked) or allowlist (read only allowed_chats.txt).")
	}
	out = append(out, string(mode))
	return writeLines(dir, path, out)
}

// id is an entry's identity for de-duplication: kind and key.
func (e Entry) id() string { return fmt.Sprintf("%d:%s", e.Kind, e.Key) }

// readLines reads a policy file's lines through the same safety checks as
// Load (a missing file has no lines).
func readLines(path string) ([]string, error) {
	if err := checkContactsDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	data, _, err := readSafe(path, userFile)
	if err != nil {
		return nil, err
	}
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

// writeLines atomically replaces path with lines, creating the contacts
// directory (0700) when needed.
func writeLines(dir, path string, lines []string) error {
	cdir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Mkdir(cdir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", cdir, err)
	}
	if err := checkContactsDir(cdir); err != nil {
		return err
	}
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file", ErrUnsafeFile, path)
	}
	content := strings.Join(lines, "\n")
	if content != "" {
		content += "\n"
	}
	f, err := os.CreateTemp(cdir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteString(content); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	if d, err := os.Open(cdir); err == nil {
		_ = d.Sync() // make the rename durable; not fatal where unsupported
		d.Close()
	}
	return nil
}
