package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRedact checks the guarantees of Redact on arbitrary text and hints:
// no panic, valid UTF-8 output, findings that are sorted, disjoint, outside
// existing masks and exactly what the output replaced, no mask inside a
// mask, idempotence, and no card number left behind: the output holds the
// digits of no card the redactor detected, in any grouping or separator
// spelling it reads (docs/redaction.md, "Separators").
// Seeds: testdata/fuzz/FuzzRedact.
func FuzzRedact(f *testing.F) {
	f.Add(allClasses, 0, 0, false)
	f.Add("839201 to confirm", 0, 6, true)
	f.Add("card 4111–1111 1111.1111, order 4111111111111111", 0, 0, false)
	f.Add("41 11 11 11 11 11 11 11\n4111\u00a01111\r\n1111\u20091111 ssn 536—22—1847", 0, 0, false)
	f.Add("your code is 1 2 3 4 5 6. example.com/v/123456", 0, 0, false)
	// Group boundaries (docs/redaction.md, "Group boundaries").
	f.Add("card number: 1 4111 1111 1111 1111, A3 4111111111111111, PIN 4821 4111 1111 1111 1111", 0, 0, false)
	f.Add("call me at 415 555 0134 4111 1111 1111 1111 12/28 123; ssn 1 536-22-1847", 0, 0, false)
	f.Add("4111_1111_1111_1111 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 ٤١١١ ١١١١ ١١١١ ١١١١", 0, 0, false)
	f.Add("9400 4871 8033 4018 7801 12 FR11 5561 3044 5166 9156 4041 042 ۴۵۳۹-۵۲۶۰-۱۸۱۵-۹۰۸۳", 0, 0, false)
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
		checkNoCardLeft(t, repaired, out)
	})
}

// normDigits returns the digits of s as the rules read them: decimal digits
// of every script, as ASCII.
func normDigits(s string) string {
	d, _ := prepare(s)
	return digitsOf(d.s)
}

// checkNoCardLeft fails when out, the default redactor's output for in,
// still holds the digits of a card number found in in: as any run of
// digit groups the card rule joins, after the same normalization.
func checkNoCardLeft(t *testing.T, in, out string) {
	t.Helper()
	_, cards := New(only(ClassCard)).Redact(in, Hints{})
	if len(cards) == 0 {
		return
	}
	d, _ := prepare(out)
	for _, c := range cards {
		digits := normDigits(in[c.Start:c.End])
		if len(digits) < 13 {
			continue // a CVV
		}
		for _, g := range cardSequences(d) {
			for k := range g {
				var b []byte
				for m := k; m < len(g) && len(b) < len(digits); m++ {
					b = append(b, d.s[g[m].s:g[m].e]...)
				}
				if string(b) == digits {
					t.Fatalf("output %q of %q still holds card %s", out, in, digits)
				}
			}
		}
	}
}
