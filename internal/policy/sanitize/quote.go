package sanitize

import (
	"fmt"
	"unicode/utf8"
)

// Limits for [Quote] and [Message].
const (
	// MaxQuote is the default length of a quoted piece of input (runes).
	MaxQuote = 80
	// MaxMessage bounds a whole error message or log value (runes).
	MaxMessage = 2000
)

// Quote makes a piece of input (an element name, an attribute value, a
// file name read from a file, a line of a vCard) safe to quote inside an
// error message: every control character (C0, DEL, C1, line breaks and
// tabs included), every character [Sanitize] removes (bidi overrides,
// invisible and tag characters) and U+200D are written as visible escapes
// (\x1b, \u202e), an invalid byte as \xNN, and the result is cut to max
// runes (MaxQuote when max <= 0) with "…". So a file can neither drive the
// terminal that shows the error (an ESC sequence setting the window title),
// nor hide or reorder what it says, nor flood it.
func Quote(s string, max int) string {
	if max <= 0 {
		max = MaxQuote
	}
	return escape(s, max, true)
}

// Message is the catch-all applied where an error or a log value reaches a
// terminal, a log or a tool result (docs/security.md, "Errors that quote
// input"): the escapes of [Quote] except that line breaks and tabs stay,
// cut to MaxMessage runes. Text that needs no escape is returned unchanged.
func Message(s string) string { return escape(s, MaxMessage, false) }

// needsEscape reports whether r is written as an escape.
func needsEscape(r rune, singleLine bool) bool {
	if r == '\n' || r == '\t' {
		return singleLine
	}
	return ShouldRemove(r) || r == 0x200D
}

func escape(s string, max int, singleLine bool) string {
	clean := true
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || needsEscape(r, singleLine) {
			clean = false
			break
		}
		n++
		i += size
	}
	if clean && n <= max {
		return s
	}
	buf := make([]byte, 0, len(s)+16)
	n = 0
	for i := 0; i < len(s); {
		if n == max {
			return string(buf) + "…"
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = fmt.Appendf(buf, `\x%02x`, s[i])
		case needsEscape(r, singleLine) && r < 0x80:
			buf = fmt.Appendf(buf, `\x%02x`, r)
		case needsEscape(r, singleLine):
			buf = fmt.Appendf(buf, `\u%04x`, r)
		default:
			buf = append(buf, s[i:i+size]...)
		}
		n++
		i += size
	}
	return string(buf)
}
