package policy

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind classifies a list entry.
type Kind int

// Entry kinds, decided by the entry's text alone (see [ParseEntry]).
const (
	KindPhone     Kind = iota + 1 // digits and phone punctuation, 3 or more digits
	KindEmail                     // contains '@'
	KindChatID                    // starts with "chat" and has no spaces ("chat123456789")
	KindSubstring                 // anything else of at least MinSubstring characters
)

func (k Kind) String() string {
	switch k {
	case KindPhone:
		return "phone"
	case KindEmail:
		return "email"
	case KindChatID:
		return "chat id"
	case KindSubstring:
		return "substring"
	}
	return "unknown"
}

// MinSubstring is the shortest "distinctive substring" entry, in
// characters. Shorter free-text entries ("mom", "work") would match far
// more identifiers than the person meant, so they are refused.
const MinSubstring = 6

// phoneKeyDigits is the last-ten-digits rule (docs/security.md, "Files and
// entries"; docs/contacts.md, "Handles"): phone numbers compare by their last
// ten digits, whatever the formatting or country prefix.
const phoneKeyDigits = 10

// Entry is one parsed line of a policy list.
type Entry struct {
	Kind Kind
	// Key is the normalised form compared against threads: the last ten
	// digits (or all digits when fewer) for a phone, the lower-cased text
	// otherwise.
	Key string
	// Text is the entry as written, without its comment.
	Text string
	// Line is the 1-based line number in its file; 0 when not from a file.
	Line int
}

// ErrEntry is wrapped by every error about an entry's text.
var ErrEntry = errors.New("invalid policy entry")

// ParseEntry classifies and normalises one entry (no comment, no
// surrounding space). The rules, in order:
//
//   - contains '@' (after an optional "mailto:"): an email address,
//     compared case-insensitively and in full;
//   - starts with "chat" (any case) and contains no space: a chat
//     identifier ("chat123456789"), compared in full, case-insensitively,
//     with a thread's identifier and with its guid or the guid's last
//     ';'-separated part;
//   - only digits and + - ( ) . / spaces, with at least 3 digits (after an
//     optional "tel:"): a phone number, compared by its last ten digits
//     (all digits when it has fewer; see [Policy.AllowThread] for 7–9
//     digit entries);
//   - anything else of at least [MinSubstring] characters: a distinctive
//     substring of a chat identifier or guid, case-insensitive.
func ParseEntry(text string) (Entry, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return Entry{}, fmt.Errorf("%w: empty", ErrEntry)
	}
	if !utf8.ValidString(t) {
		return Entry{}, fmt.Errorf("%w: not valid UTF-8", ErrEntry)
	}
	for _, r := range t {
		if unicode.IsControl(r) {
			return Entry{}, fmt.Errorf("%w: %q contains a control character", ErrEntry, t)
		}
	}
	e := Entry{Text: t}
	lower := strings.ToLower(t)
	switch {
	case strings.Contains(t, "@"):
		addr := strings.TrimPrefix(lower, "mailto:")
		at := strings.IndexByte(addr, '@')
		if at <= 0 || at == len(addr)-1 || strings.Count(addr, "@") != 1 || strings.ContainsFunc(addr, unicode.IsSpace) {
			return Entry{}, fmt.Errorf("%w: %q is not an email address", ErrEntry, t)
		}
		e.Kind, e.Key = KindEmail, addr
	case strings.HasPrefix(lower, "chat") && len(lower) > len("chat") && !strings.ContainsFunc(lower, unicode.IsSpace):
		e.Kind, e.Key = KindChatID, lower
	default:
		if digits, ok := phoneDigits(strings.TrimPrefix(lower, "tel:")); ok {
			e.Kind, e.Key = KindPhone, lastDigits(digits)
			break
		}
		if utf8.RuneCountInString(t) < MinSubstring {
			return Entry{}, fmt.Errorf("%w: %q is too short to match safely (a substring needs at least %d characters; use a full phone number, email address or chat id)", ErrEntry, t, MinSubstring)
		}
		e.Kind, e.Key = KindSubstring, lower
	}
	return e, nil
}

// phoneDigits returns the digits of s when s looks like a phone number:
// only digits and phone punctuation (+ - ( ) . / and spaces), with at
// least 3 digits. Digits of any script count ("４１５", "٤١٥"), and so do
// the Unicode forms of the punctuation (non-breaking hyphens and spaces,
// full-width plus and parentheses): the contacts book resolves such a
// handle to the person it belongs to, so the policy must recognise it as
// the same number, or a blocked number written that way would be read.
func phoneDigits(s string) (string, bool) {
	var b strings.Builder
	for _, r := range s {
		if d, ok := digitValue(r); ok {
			b.WriteByte('0' + d)
			continue
		}
		if !phonePunct(r) {
			return "", false
		}
	}
	if b.Len() < 3 {
		return "", false
	}
	return b.String(), true
}

// digitValue returns the value of a decimal digit of any script. Unicode
// encodes every script's digits as complete runs of ten, zero first, so
// within one range of the Nd table a digit's value is its offset modulo
// ten (TestDigitValue checks the table keeps that shape).
func digitValue(r rune) (byte, bool) {
	if r >= '0' && r <= '9' {
		return byte(r - '0'), true
	}
	if r <= unicode.MaxASCII || !unicode.IsDigit(r) {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10), true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return byte((r - rune(rg.Lo)) % 10), true
		}
	}
	return 0, false
}

// phonePunct reports whether r may appear between a phone number's digits:
// + - ( ) . / and white space, in their ASCII and Unicode forms (dashes,
// minus sign, space separators, full-width variants, the katakana long
// vowel mark used as a dash).
func phonePunct(r rune) bool {
	switch r {
	case '+', '-', '(', ')', '.', '/', ' ', '\t',
		'\uff0b', '\uff08', '\uff09', '\uff0e', '\uff0f', '\uff0d', '\u2212', '\u30fc', '\u200b':
		return true
	}
	return unicode.Is(unicode.Pd, r) || unicode.Is(unicode.Zs, r)
}

func lastDigits(d string) string {
	if len(d) > phoneKeyDigits {
		return d[len(d)-phoneKeyDigits:]
	}
	return d
}

// handle is a participant handle normalised for matching.
type handle struct {
	lower  string // lower-cased, trimmed
	email  string // set when the handle is an email address
	digits string // all digits, set when the handle is a phone number
}

func parseHandle(h string) handle {
	l := strings.ToLower(strings.TrimSpace(h))
	out := handle{lower: l}
	for _, p := range []string{"mailto:", "tel:", "e:", "p:"} {
		l = strings.TrimPrefix(l, p)
	}
	if strings.Contains(l, "@") {
		out.email = l
		return out
	}
	if d, ok := phoneDigits(l); ok {
		out.digits = d
	}
	return out
}

// splitLine separates an entry from its comment: a line whose first
// non-space character is '#' is all comment, and " #" (whitespace then
// '#') starts a trailing comment.
func splitLine(line string) (entry string) {
	t := strings.TrimSpace(line)
	if t == "" || t[0] == '#' {
		return ""
	}
	for i := 1; i < len(t); i++ {
		if t[i] == '#' && (t[i-1] == ' ' || t[i-1] == '\t') {
			return strings.TrimSpace(t[:i])
		}
	}
	return t
}
