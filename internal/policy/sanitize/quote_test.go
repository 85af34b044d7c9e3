package sanitize

import (
	"strings"
	"testing"
)

// TestQuoteEscapesWhatDrivesATerminal: Quote and Message write controls,
// bidi overrides, invisible characters and invalid bytes as visible
// escapes, bound the length, and leave clean text alone.
func TestQuoteEscapesWhatDrivesATerminal(t *testing.T) {
	long := strings.Repeat("é", 300)
	cases := []struct {
		name, in, quote, message string
	}{
		{"clean", "root element <smses>", "root element <smses>", "root element <smses>"},
		{"OSC title", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`, `\x1b]0;pwned\x07`},
		{"C1 CSI and DEL", "a\u009b31m\x7f", `a\u009b31m\x7f`, `a\u009b31m\x7f`},
		{"bidi override and isolate", "x\u202eexe.\u2066y", `x\u202eexe.\u2066y`, `x\u202eexe.\u2066y`},
		{"invisible and tag", "a\u200bb\U000E0041c\u200dd", `a\u200bb\ue0041c\u200dd`, `a\u200bb\ue0041c\u200dd`},
		{"invalid UTF-8", "a\xff\xfeb", `a\xff\xfeb`, `a\xff\xfeb`},
		{"line breaks", "one\ntwo\tthree\r", `one\x0atwo\x09three\x0d`, "one\ntwo\tthree\\x0d"},
		{"long", long, strings.Repeat("é", MaxQuote) + "…", strings.Repeat("é", 300)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Quote(tc.in, 0); got != tc.quote {
				t.Errorf("Quote(%q) = %q, want %q", tc.in, got, tc.quote)
			}
			if got := Message(tc.in); got != tc.message {
				t.Errorf("Message(%q) = %q, want %q", tc.in, got, tc.message)
			}
		})
	}
	if got := Message(strings.Repeat("\x1b", 5000)); len([]rune(got)) > 4*MaxMessage+1 || !strings.HasSuffix(got, "…") {
		t.Errorf("Message is not bounded: %d runes", len([]rune(got)))
	}
}
