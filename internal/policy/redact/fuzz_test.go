package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRedact checks the guarantees of Redact on arbitrary text and hints:
// no panic, valid UTF-8 output, findings that are sorted, disjoint, outside
// existing masks and exactly what the output replaced, no mask inside a
// mask, and idempotence.
// Seeds: testdata/fuzz/FuzzRedact.
func FuzzRedact(f *testing.F) {
	f.Add(allClasses, 0, 0, false)
	f.Add("839201 to confirm", 0, 6, true)
	f.Fuzz(func(t *testing.T, text string, a, b int, short bool) {
		h := Hints{SenderShortCode: short}
		if a != 0 || b != 0 {
			h.OneTimeCodes = [][2]int{{a, b}, {b, a}}
		}
		out, fs := Default().Redact(text, h)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 output %q", out)
		}
		checkFindings(t, text, out, fs)
		again, fs2 := Default().Redact(out, Hints{SenderShortCode: short})
		if again != out || len(fs2) != 0 {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", text, out, again, fs2)
		}
		// No mask inside a mask: every mask of the input survives whole and
		// each finding adds exactly one, so the output holds exactly that
		// many complete masks (checkFindings already proved that no finding
		// overlaps an existing mask or another finding).
		repaired := strings.ToValidUTF8(text, "\uFFFD")
		if got, want := len(maskSpans(out)), len(maskSpans(repaired))+len(fs); got != want {
			t.Fatalf("output %q has %d masks, want %d", out, got, want)
		}
	})
}
