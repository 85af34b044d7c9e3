package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// rawControl returns the first byte or rune of s that may drive a terminal
// or hide text: C0 controls other than \n and \t, DEL, C1 controls, bidi
// overrides and isolates, invalid UTF-8.
func rawControl(s string) (rune, bool) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1,
			r < 0x20 && r != '\n' && r != '\t',
			r >= 0x7f && r < 0xa0,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return r, true
		}
		i += n
	}
	return 0, false
}

// TestErrorsQuotingInputAreEscaped: an error that quotes a file's content
// (here an Android export's root element and attributes) reaches the
// terminal with every control character, bidi override and invalid byte
// escaped and its length bounded (docs/security.md, "Errors that quote
// input"): the returned error, stderr and the log line alike.
func TestErrorsQuotingInputAreEscaped(t *testing.T) {
	cases := []struct {
		name, xml, want string
	}{
		{"OSC window title in the root element", "<?xml version=\"1.0\"?>\n<\x1b]0;pwned\x07 count=\"1\">\n</x>", `\x1b]0;pwned\x07`},
		{"CSI clear screen in the root element", "<\x1b[2J\x1b[H count=\"1\">", `\x1b[2J`},
		{"C1 CSI in the root element", "<x\u009b31m count=\"1\">", `\u009b`},
		{"bidi override in the root element", "<smses\u202egnp.exe count=\"1\">", `\u202e`},
		{"invalid UTF-8 and DEL", "<a\xff\x7fb count=\"1\">", `\xff\x7f`},
		{"call log with a hostile attribute", "<calls count=\"\x1b]2;x\x07\">", "call-log"},
		{"a root element name of 100 KB", "<" + strings.Repeat("\x1bA", 50000) + ">", "longer than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "sms.xml")
			if err := os.WriteFile(p, []byte(tc.xml), 0o600); err != nil {
				t.Fatal(err)
			}
			m, out, stderr := testMain(t, nil)
			err := m.Run(context.Background(), []string{"index", "--no-embed", "--android-xml", p})
			if err == nil {
				t.Fatalf("indexing a broken export succeeded:\n%s", out)
			}
			for what, s := range map[string]string{"error": err.Error(), "stderr": stderr.String(), "stdout": out.String()} {
				if r, bad := rawControl(s); bad {
					t.Errorf("%s carries raw %U: %q", what, r, s)
				}
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %q, want the input quoted as %q", err, tc.want)
			}
			if n := len(err.Error()); n > 3000 {
				t.Errorf("error is %d bytes long; quoted input must be bounded", n)
			}
		})
	}
}
