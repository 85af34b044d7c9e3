package policy

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
)

// Load reads the policy under dir (the folder that holds contacts/) and
// fails closed: any unreadable or unsafe file, unknown mode or invalid
// entry is an error.
func Load(dir string, opts Options) (*Policy, error) {
	p, _, err := load(dir, opts)
	return p, err
}

// load also returns the stamps of the files it read, for [Store].
func load(dir string, opts Options) (*Policy, []stamp, error) {
	if dir == "" {
		return nil, nil, fmt.Errorf("read policy: no folder given")
	}
	files := Files{
		Blocked:    Path(dir, Blocked),
		Allowed:    Path(dir, Allowed),
		ReadPolicy: ModePath(dir),
	}
	if err := checkContactsDir(filepath.Join(dir, ContactsDir)); err != nil {
		return nil, nil, fmt.Errorf("read policy: %w", err)
	}
	var stamps []stamp

	blocked, st, err := readList(files.Blocked, userFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read policy: %w", err)
	}
	stamps = append(stamps, st)

	if opts.HardenedAllowlist != "" {
		files.Allowed = ""
		files.HardenedAllowlist = opts.HardenedAllowlist
		allowed, st, err := readList(opts.HardenedAllowlist, rootFile)
		if err != nil {
			return nil, nil, fmt.Errorf("read policy (hardened): %w", err)
		}
		if !st.exists {
			return nil, nil, fmt.Errorf("read policy (hardened): %s does not exist", opts.HardenedAllowlist)
		}
		// Hardened mode overrides read_policy.txt; it is not read.
		files.ReadPolicy = ""
		return build(ModeAllowlist, true, blocked, allowed, files), append(stamps, st), nil
	}

	allowed, st, err := readList(files.Allowed, userFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read policy: %w", err)
	}
	stamps = append(stamps, st)

	data, st, err := readSafe(files.ReadPolicy, userFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read policy: %w", err)
	}
	stamps = append(stamps, st)
	mode, err := parseMode(data)
	if err != nil {
		return nil, nil, fmt.Errorf("read policy: %s: %w", files.ReadPolicy, err)
	}
	return build(mode, false, blocked, allowed, files), stamps, nil
}

// readList reads and parses one list file; a missing file is empty.
func readList(path string, trust fileTrust) ([]Entry, stamp, error) {
	data, st, err := readSafe(path, trust)
	if err != nil {
		return nil, st, err
	}
	entries, err := parseList(data)
	if err != nil {
		return nil, st, fmt.Errorf("%s: %w", path, err)
	}
	return entries, st, nil
}

// parseList parses a list file's content.
func parseList(data []byte) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxPolicyFileSz)
	line := 0
	for sc.Scan() {
		line++
		text := splitLine(sc.Text())
		if text == "" {
			continue
		}
		e, err := ParseEntry(text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		e.Line = line
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// parseMode reads read_policy.txt: the first non-comment line is the mode;
// an empty or missing file means blocklist; any other content is an error.
func parseMode(data []byte) (Mode, error) {
	var mode Mode
	for i, raw := range strings.Split(string(data), "\n") {
		t := splitLine(raw)
		if t == "" {
			continue
		}
		if mode != "" {
			return "", fmt.Errorf("line %d: more than one mode", i+1)
		}
		switch m := Mode(strings.ToLower(t)); m {
		case ModeBlocklist, ModeAllowlist:
			mode = m
		default:
			return "", fmt.Errorf("line %d: unknown mode %q (want blocklist or allowlist)", i+1, t)
		}
	}
	if mode == "" {
		mode = ModeBlocklist
	}
	return mode, nil
}
