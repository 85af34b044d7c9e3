// Package policy decides which conversations and handles Tidings may read
// or send to: the read policy of the bridge protocol (docs/security.md,
// "Read policy"), enforced at ingestion, at query time and on sends.
//
// Its subpackages hold the rest of the safety boundary: sanitize (invisible
// characters, untrusted-content wrapping), coerce (numeric tool arguments)
// and redact (secrets in bodies).
//
// # Files
//
// The policy lives in a folder's contacts/ directory (the bridge folder, or
// $TIDINGS_HOME):
//
//	contacts/blocked_chats.txt   entries that are never read or sent to
//	contacts/allowed_chats.txt   entries that may be read in allowlist mode
//	contacts/read_policy.txt     "blocklist" (default) or "allowlist"
//
// One entry per line; a line starting with '#' is a comment, and so is
// anything after whitespace + '#'. Entries are phone numbers (any format,
// compared by their last ten digits), email addresses (case-insensitive,
// full match), chat ids ("chat123456789") and distinctive substrings of a
// chat identifier or guid; see [ParseEntry]. A missing file is an empty
// list (a missing read_policy.txt means blocklist mode).
//
// # Decisions
//
// The blocklist always wins. A thread is blocked when any entry matches its
// identifier, its guid or any participant: blocking a person also hides the
// groups they are in, because their messages are there too. In blocklist
// mode every thread that is not blocked is allowed. In allowlist mode a
// thread is allowed only when it is not blocked and either it is a group
// whose identifier or guid matches a chat id or substring entry, or every
// one of its participants (at least one) matches a phone or email entry.
// "Every" is the safe reading for groups: allowing your partner must not
// expose a group where strangers write.
//
// Substring and short-number entries resolve ambiguity towards hiding.
// On the blocklist a substring also matches participant handles, and a 7–9
// digit phone entry matches any number ending in those digits; on the
// allowlist a substring matches only a group's identifier or guid (a direct
// chat's identifier is the other person's handle, which they choose), and
// a short number matches only the same digits. A thread's display name is
// never matched: any member of a group can rename it.
//
// # Hardened mode
//
// With [Options.HardenedAllowlist] set, the mode is allowlist whatever
// read_policy.txt says, allowed_chats.txt is ignored, and the allowlist is
// read from that path, which must be a regular file (not a symlink) with a
// single link, owned by root, not writable by group or others, inside
// directories that are all root-owned and not writable by group or others.
// A process running as the user can then read only what root allowed.
//
// # Failing closed
//
// Any problem — an unreadable, symlinked or group/world-writable file, an
// unknown mode, an entry that cannot be parsed, a hardened list that fails
// its checks — is an error from [Load] and [Store.Current], never an
// empty or permissive policy. A nil *Policy allows nothing.
package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tidings-mcp/tidings/internal/model"
)

// Mode is the read-policy mode.
type Mode string

// Modes.
const (
	ModeBlocklist Mode = "blocklist"
	ModeAllowlist Mode = "allowlist"
)

// List names one of the two entry lists.
type List string

// Lists.
const (
	Blocked List = "blocked"
	Allowed List = "allowed"
)

// File names inside the contacts directory, as docs/bridge.md ("Folder
// layout") names them.
const (
	ContactsDir     = "contacts"
	BlockedFile     = "blocked_chats.txt"
	AllowedFile     = "allowed_chats.txt"
	ReadPolicyFile  = "read_policy.txt"
	maxPolicyFileSz = 1 << 20
)

// Path returns the path of a list file under dir.
func Path(dir string, l List) string {
	if l == Allowed {
		return filepath.Join(dir, ContactsDir, AllowedFile)
	}
	return filepath.Join(dir, ContactsDir, BlockedFile)
}

// ModePath returns the path of read_policy.txt under dir.
func ModePath(dir string) string { return filepath.Join(dir, ContactsDir, ReadPolicyFile) }

// Options configure [Load] and [NewStore].
type Options struct {
	// HardenedAllowlist, when set, is the root-owned allowlist that
	// replaces allowed_chats.txt and forces allowlist mode.
	HardenedAllowlist string
}

// Reason explains a [Decision] without naming any entry.
type Reason string

// Reasons.
const (
	ReasonAllowed        Reason = "allowed"
	ReasonBlocked        Reason = "blocked"          // matched the blocklist
	ReasonNotAllowlisted Reason = "not_allowlisted"  // allowlist mode, no match
	ReasonNoPolicy       Reason = "no_policy_loaded" // nil policy: fail closed
)

// Decision is the outcome for one thread or handle.
type Decision struct {
	Allowed bool
	Reason  Reason
}

var (
	allow          = Decision{Allowed: true, Reason: ReasonAllowed}
	denyBlocked    = Decision{Reason: ReasonBlocked}
	denyNotAllowed = Decision{Reason: ReasonNotAllowlisted}
	denyNoPolicy   = Decision{Reason: ReasonNoPolicy}
)

// Thread is what the policy needs to know about a conversation.
type Thread struct {
	// Identifier is the chat identifier: the handle for a direct chat,
	// "chat…" for a group (chat.chat_identifier).
	Identifier string
	// GUID is the source's conversation id ("iMessage;+;chat123…").
	GUID string
	// Participants are the other members' handles.
	Participants []string
	// Group is true for a group conversation. A thread with more than one
	// participant is treated as a group whatever this says.
	Group bool
}

// ThreadOf describes a model conversation for the policy.
func ThreadOf(c model.Conversation) Thread {
	return Thread{Identifier: c.Identifier, GUID: c.ID, Participants: c.Participants, Group: c.Kind == model.KindGroup}
}

// matcher holds one list, indexed for matching.
type matcher struct {
	entries   []Entry
	phones    map[string]bool // last-10 (or shorter, exact) digit keys
	suffixes  []string        // 7–9 digit phone keys (blocklist only: suffix match)
	emails    map[string]bool
	chats     map[string]bool
	substring []string
}

func newMatcher(entries []Entry, list List) *matcher {
	m := &matcher{entries: entries, phones: map[string]bool{}, emails: map[string]bool{}, chats: map[string]bool{}}
	for _, e := range entries {
		switch e.Kind {
		case KindPhone:
			if list == Blocked && len(e.Key) >= 7 && len(e.Key) < phoneKeyDigits {
				m.suffixes = append(m.suffixes, e.Key)
			} else {
				m.phones[e.Key] = true
			}
		case KindEmail:
			m.emails[e.Key] = true
		case KindChatID:
			m.chats[e.Key] = true
		case KindSubstring:
			m.substring = append(m.substring, e.Key)
		}
	}
	return m
}

// person reports whether a phone or email entry matches h.
func (m *matcher) person(h handle) bool {
	if h.email != "" {
		return m.emails[h.email]
	}
	if h.digits == "" {
		return false
	}
	if len(h.digits) >= phoneKeyDigits {
		if m.phones[lastDigits(h.digits)] {
			return true
		}
	} else if m.phones[h.digits] {
		return true
	}
	for _, s := range m.suffixes {
		if strings.HasSuffix(h.digits, s) {
			return true
		}
	}
	return false
}

// chat reports whether a chat id entry names the thread: the identifier,
// the guid, or the guid's last ';' part.
func (m *matcher) chat(identifier, guid string) bool {
	if len(m.chats) == 0 {
		return false
	}
	id, g := strings.ToLower(identifier), strings.ToLower(guid)
	if m.chats[id] || m.chats[g] {
		return true
	}
	if i := strings.LastIndexByte(g, ';'); i >= 0 && m.chats[g[i+1:]] {
		return true
	}
	return false
}

// contains reports whether a substring entry occurs in any of vals
// (already lower-cased).
func (m *matcher) contains(vals ...string) bool {
	for _, sub := range m.substring {
		for _, v := range vals {
			if v != "" && strings.Contains(v, sub) {
				return true
			}
		}
	}
	return false
}

// Policy is a loaded, immutable read policy. Its methods are safe for
// concurrent use; a nil *Policy denies everything.
type Policy struct {
	mode        Mode
	hardened    bool
	block       *matcher
	allowed     *matcher
	fingerprint string
	info        Info
}

// Info is policy metadata for status output. It never contains entries.
type Info struct {
	Mode           Mode   `json:"mode"`
	Hardened       bool   `json:"hardened"`
	BlockedEntries int    `json:"blocked_entries"`
	AllowedEntries int    `json:"allowed_entries"`
	Fingerprint    string `json:"fingerprint"`
	Files          Files  `json:"files"`
}

// Files are the paths a policy was read from.
type Files struct {
	Blocked           string `json:"blocked"`
	Allowed           string `json:"allowed,omitempty"`
	ReadPolicy        string `json:"read_policy"`
	HardenedAllowlist string `json:"hardened_allowlist,omitempty"`
}

// Mode returns the effective mode (allowlist in hardened mode).
func (p *Policy) Mode() Mode {
	if p == nil {
		return ModeAllowlist
	}
	return p.mode
}

// Hardened reports whether the allowlist came from a root-owned file.
func (p *Policy) Hardened() bool { return p != nil && p.hardened }

// Fingerprint identifies the effective policy: it changes whenever the
// mode, the hardened state or the set of entries changes, and not when
// only comments, order or formatting do. Consumers compare it to decide
// when to purge threads that became blocked and re-ingest threads that
// became allowed.
func (p *Policy) Fingerprint() string {
	if p == nil {
		return ""
	}
	return p.fingerprint
}

// Info returns metadata for status output.
func (p *Policy) Info() Info {
	if p == nil {
		return Info{}
	}
	return p.info
}

// AllowThread decides whether a conversation may be read.
func (p *Policy) AllowThread(t Thread) Decision {
	if p == nil {
		return denyNoPolicy
	}
	id, guid := strings.ToLower(strings.TrimSpace(t.Identifier)), strings.ToLower(strings.TrimSpace(t.GUID))
	group := t.Group || len(t.Participants) > 1
	people := make([]handle, 0, len(t.Participants)+1)
	for _, h := range t.Participants {
		if strings.TrimSpace(h) != "" {
			people = append(people, parseHandle(h))
		}
	}
	if !group && len(people) == 0 && id != "" {
		people = append(people, parseHandle(t.Identifier)) // a direct chat's identifier is the handle
	}

	// Blocklist: any match anywhere.
	b := p.block
	if b.chat(id, guid) || b.contains(id, guid) || (!group && b.person(parseHandle(t.Identifier))) {
		return denyBlocked
	}
	for _, h := range people {
		if b.person(h) || b.contains(h.lower) {
			return denyBlocked
		}
	}
	if p.mode == ModeBlocklist {
		return allow
	}

	a := p.allowed
	if group && (a.chat(id, guid) || a.contains(id, guid)) {
		return allow
	}
	if len(people) == 0 {
		return denyNotAllowed
	}
	for _, h := range people {
		if !a.person(h) {
			return denyNotAllowed
		}
	}
	return allow
}

// AllowHandle decides whether a single handle (a phone number, an email
// address) may be looked up or sent to: blocked when any blocklist entry
// matches it, and in allowlist mode allowed only when a phone or email
// allowlist entry matches it.
func (p *Policy) AllowHandle(h string) Decision {
	if p == nil {
		return denyNoPolicy
	}
	hh := parseHandle(h)
	if p.block.handle(hh) {
		return denyBlocked
	}
	if p.mode == ModeBlocklist {
		return allow
	}
	if p.allowed.person(hh) {
		return allow
	}
	return denyNotAllowed
}

// handle reports whether a blocklist entry matches one handle.
func (m *matcher) handle(h handle) bool {
	return m.person(h) || m.contains(h.lower) || m.chats[h.lower]
}

// WithPeople returns p extended with what the address book knows about
// who is who. people lists each person's handles (the phones and
// addresses of one card). When the blocklist matches any handle of a
// person, every handle of that person is blocked too: blocking someone's
// number must also hide the thread with their e-mail address, or their
// words are read through their other handle. The allowlist is never
// extended (allowing one of someone's numbers does not allow the others),
// so the result only ever hides more. Its fingerprint covers the added
// handles, so consumers purge what they now hide; Info still counts the
// files' entries. p itself is returned when nothing is added.
func (p *Policy) WithPeople(people [][]string) *Policy {
	if p == nil || len(p.block.entries) == 0 {
		return p
	}
	var extra []Entry
	seen := map[string]bool{}
	for _, hs := range people {
		if !slices.ContainsFunc(hs, func(h string) bool { return strings.TrimSpace(h) != "" && p.block.handle(parseHandle(h)) }) {
			continue
		}
		for _, h := range hs {
			hh := parseHandle(h)
			var e Entry
			switch {
			case hh.email != "":
				e = Entry{Kind: KindEmail, Key: hh.email}
			case hh.digits != "":
				e = Entry{Kind: KindPhone, Key: lastDigits(hh.digits)}
			default:
				continue
			}
			if k := fmt.Sprintf("%d:%s", e.Kind, e.Key); !seen[k] && !p.block.handle(hh) {
				seen[k] = true
				e.Text = strings.TrimSpace(h)
				extra = append(extra, e)
			}
		}
	}
	if len(extra) == 0 {
		return p
	}
	q := build(p.mode, p.hardened, append(slices.Clone(p.block.entries), extra...), p.allowed.entries, p.info.Files)
	q.info.BlockedEntries = p.info.BlockedEntries
	return q
}

// build assembles a Policy and its fingerprint.
func build(mode Mode, hardened bool, blocked, allowed []Entry, files Files) *Policy {
	p := &Policy{
		mode:     mode,
		hardened: hardened,
		block:    newMatcher(blocked, Blocked),
		allowed:  newMatcher(allowed, Allowed),
	}
	h := sha256.New()
	fmt.Fprintf(h, "mode=%s\nhardened=%t\n", mode, hardened)
	for _, l := range []struct {
		name    string
		entries []Entry
	}{{"blocked", blocked}, {"allowed", allowed}} {
		keys := make([]string, 0, len(l.entries))
		for _, e := range l.entries {
			keys = append(keys, fmt.Sprintf("%d:%s", e.Kind, e.Key))
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		fmt.Fprintf(h, "[%s]\n%s\n", l.name, strings.Join(keys, "\n"))
	}
	p.fingerprint = hex.EncodeToString(h.Sum(nil))[:16]
	p.info = Info{
		Mode:           mode,
		Hardened:       hardened,
		BlockedEntries: len(blocked),
		AllowedEntries: len(allowed),
		Fingerprint:    p.fingerprint,
		Files:          files,
	}
	return p
}

// New builds a policy from entries already in memory (tests, and callers
// that keep a policy elsewhere). It is not hardened.
func New(mode Mode, blocked, allowed []string) (*Policy, error) {
	if mode != ModeBlocklist && mode != ModeAllowlist {
		return nil, fmt.Errorf("read policy: unknown mode %q (want blocklist or allowlist)", mode)
	}
	parse := func(list []string) ([]Entry, error) {
		var out []Entry
		for _, s := range list {
			e, err := ParseEntry(s)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
		return out, nil
	}
	b, err := parse(blocked)
	if err != nil {
		return nil, fmt.Errorf("read policy: blocklist: %w", err)
	}
	a, err := parse(allowed)
	if err != nil {
		return nil, fmt.Errorf("read policy: allowlist: %w", err)
	}
	return build(mode, false, b, a, Files{}), nil
}

// ErrUnsafeFile is wrapped by errors about a policy file's type, owner or
// permissions.
var ErrUnsafeFile = errors.New("unsafe policy file")
