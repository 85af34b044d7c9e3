package redact

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/model"
)

func TestClassesAndMasks(t *testing.T) {
	want := map[string]string{
		"2fa": "[REDACTED-2FA]", "card": "[REDACTED-CARD]", "ssn": "[REDACTED-SSN]", "apikey": "[REDACTED-APIKEY]",
		"bank": "[REDACTED-BANK]", "iban": "[REDACTED-IBAN]", "address": "[REDACTED-ADDRESS]", "dob": "[REDACTED-DOB]",
	}
	got := Classes()
	if len(got) != len(want) {
		t.Fatalf("Classes() = %v, want %d classes", got, len(want))
	}
	for _, c := range got {
		if Mask(c) != want[c] {
			t.Errorf("Mask(%q) = %q, want %q", c, Mask(c), want[c])
		}
	}
	if Mask("phone") != "" {
		t.Errorf("Mask of unknown class = %q, want empty", Mask("phone"))
	}
}

func TestConfigSet(t *testing.T) {
	c := DefaultConfig()
	for _, cl := range Classes() {
		if !c.Enabled(cl) {
			t.Errorf("DefaultConfig: %s disabled", cl)
		}
	}
	if err := c.Set("address", false); err != nil {
		t.Fatalf("Set(address, false): %v", err)
	}
	if c.Enabled("address") || !c.Enabled("dob") {
		t.Errorf("after Set(address,false): address=%v dob=%v", c.Enabled("address"), c.Enabled("dob"))
	}
	if err := c.Set("phone", true); err == nil || !strings.Contains(err.Error(), `"phone"`) {
		t.Errorf("Set(phone) error = %v, want unknown class error", err)
	}
	var zero Config
	if out, fs := New(zero).Redact("my ssn is 536-22-1847", Hints{}); len(fs) != 0 || out != "my ssn is 536-22-1847" {
		t.Errorf("zero Config masked %q", out)
	}
}

// allClasses is one message with a value of every class.
const allClasses = "SSN 536-22-1847, card 4539 5260 1815 9083, DOB 04/17/1986, code is 482913, " +
	"IBAN DE89 3704 0044 0532 0130 00, routing 021000021, at 1423 Maple Ave, token ghp_DPrAJ71fTquWoGsbeKXgzg2sye9b2Rann76d"

func TestRedactAllClasses(t *testing.T) {
	out, fs := Default().Redact(allClasses, Hints{})
	want := "SSN [REDACTED-SSN], card [REDACTED-CARD], DOB [REDACTED-DOB], code is [REDACTED-2FA], " +
		"IBAN [REDACTED-IBAN], routing [REDACTED-BANK], at [REDACTED-ADDRESS], token [REDACTED-APIKEY]"
	if out != want {
		t.Errorf("Redact:\n got %q\nwant %q", out, want)
	}
	wantClasses := []string{"ssn", "card", "dob", "2fa", "iban", "bank", "address", "apikey"}
	if len(fs) != len(wantClasses) {
		t.Fatalf("findings %v, want %d", fs, len(wantClasses))
	}
	for i, f := range fs {
		if f.Class != wantClasses[i] {
			t.Errorf("finding %d class %q, want %q", i, f.Class, wantClasses[i])
		}
	}
}

func TestConfigDisablesEachClass(t *testing.T) {
	for _, cl := range Classes() {
		t.Run(cl, func(t *testing.T) {
			c := DefaultConfig()
			if err := c.Set(cl, false); err != nil {
				t.Fatal(err)
			}
			out, fs := New(c).Redact(allClasses, Hints{})
			if strings.Contains(out, Mask(cl)) {
				t.Errorf("%s disabled but output has its mask: %q", cl, out)
			}
			if len(fs) != len(Classes())-1 {
				t.Errorf("%s disabled: %d findings, want %d", cl, len(fs), len(Classes())-1)
			}
		})
	}
}

func TestOverlapResolution(t *testing.T) {
	// resolve: union of overlapping spans, highest priority class.
	got := resolve([]cand{
		{10, 20, ClassAddress, prioAddress},
		{15, 30, ClassCard, prioCard},
		{30, 35, Class2FA, prio2FA}, // touching, not overlapping: separate
		{0, 5, ClassDOB, prioDOB},
		{2, 4, ClassBank, prioBankLoose},
	})
	want := []Finding{{ClassBank, 0, 5}, {ClassCard, 10, 30}, {Class2FA, 30, 35}} // loose bank (25) outranks dob (20)
	if len(got) != len(want) {
		t.Fatalf("resolve = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("resolve[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	// Masks in the text never act as labels or keywords.
	for _, in := range []string{"[REDACTED-DOB] 12/14/2020", "[REDACTED-2FA] 4417 people", "[REDACTED-SSN] 602381947", "Caf[REDACTED-2FA] 4417"} {
		if out, fs := Default().Redact(in, Hints{}); len(fs) != 0 {
			t.Errorf("mask acted as a label: Redact(%q) = %q", in, out)
		}
	}
	// End to end: a labelled account number that is also a Luhn-valid card
	// is masked once, as a card (card outranks bank).
	out, fs := Default().Redact("account 4539526018159083", Hints{})
	if out != "account [REDACTED-CARD]" || len(fs) != 1 {
		t.Errorf("card vs bank: %q %v", out, fs)
	}
	// A code near "account" (loose bank binding) stays a 2FA code.
	out, _ = Default().Redact("Your account verification code is 482913", Hints{})
	if out != "Your account verification code is [REDACTED-2FA]" {
		t.Errorf("2fa vs loose bank: %q", out)
	}
}

func TestExistingMasksUntouched(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"[REDACTED-CARD]", "[REDACTED-CARD]"},
		{"code: [REDACTED-2FA] and 4111111111111111", "code: [REDACTED-2FA] and [REDACTED-CARD]"},
		{"[REDACTED-2FA] is your code", "[REDACTED-2FA] is your code"},
		{"key: [REDACTED-APIKEY]123456789abc", "key: [REDACTED-APIKEY]123456789abc"},
		{"[REDACTED-SSN][REDACTED-DOB]", "[REDACTED-SSN][REDACTED-DOB]"},
	} {
		if out, _ := Default().Redact(tc.in, Hints{}); out != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, out, tc.want)
		}
	}
}

func TestHintRanges(t *testing.T) {
	text := "Robinhood: 882011. Don't share. Café 4417"
	for _, tc := range []struct {
		name string
		otc  [][2]int
		want string
	}{
		{"exact", [][2]int{{11, 17}}, "Robinhood: [REDACTED-2FA]. Don't share. Café 4417"},
		{"with spaces", [][2]int{{10, 17}}, "Robinhood: [REDACTED-2FA]. Don't share. Café 4417"},
		{"inverted", [][2]int{{17, 11}}, text},
		{"empty", [][2]int{{11, 11}}, text},
		{"out of bounds", [][2]int{{-5, 3}, {len(text) - 4, len(text) + 50}}, "[REDACTED-2FA]inhood: 882011. Don't share. Café [REDACTED-2FA]"},
		{"splits a rune", [][2]int{{36, 37}}, "Robinhood: 882011. Don't share. Caf[REDACTED-2FA] 4417"},
		{"overlapping", [][2]int{{11, 15}, {13, 17}}, "Robinhood: [REDACTED-2FA]. Don't share. Café 4417"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := Default().RedactText(text, tc.otc)
			if out != tc.want {
				t.Errorf("RedactText(%v) = %q, want %q", tc.otc, out, tc.want)
			}
		})
	}
	// Hints are ignored when the 2fa class is off.
	c := DefaultConfig()
	c.TwoFA = false
	if out := New(c).RedactText(text, [][2]int{{11, 17}}); out != text {
		t.Errorf("2fa off: %q", out)
	}
}

func TestOneTimeCodeRanges(t *testing.T) {
	runs := []model.Run{{Start: 0, End: 10}, {Start: 11, End: 17, OneTimeCode: true}, {Start: 20, End: 20, OneTimeCode: true}}
	got := OneTimeCodeRanges(runs)
	if len(got) != 1 || got[0] != [2]int{11, 17} {
		t.Errorf("OneTimeCodeRanges = %v, want [[11 17]]", got)
	}
}

func TestInvalidUTF8(t *testing.T) {
	in := "code\xff\xfe is 482913 \xc3"
	out, fs := Default().Redact(in, Hints{})
	if !utf8.ValidString(out) {
		t.Fatalf("output not valid UTF-8: %q", out)
	}
	if want := "code\uFFFD is [REDACTED-2FA] \uFFFD"; out != want {
		t.Errorf("Redact = %q, want %q", out, want)
	}
	repaired := strings.ToValidUTF8(in, "\uFFFD")
	if len(fs) != 1 || repaired[fs[0].Start:fs[0].End] != "482913" {
		t.Errorf("findings %v do not index the repaired text", fs)
	}
	// Hints move with the repair.
	in2 := "\xff\xff482913"
	if out := Default().RedactText(in2, [][2]int{{2, 8}}); out != "\uFFFD[REDACTED-2FA]" {
		t.Errorf("hint after invalid bytes: %q", out)
	}
}

func TestHiddenAndTypographicCharacters(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Zero-width characters inside a card would vanish at sanitization and
		// reassemble the number; the redactor sees through them.
		{"card 4111\u200b1111\u200b1111\u200b1111 ok", "card [REDACTED-CARD] ok"},
		{"ssn 536\u00ad-22-1847", "ssn [REDACTED-SSN]"},
		// No-break and thin spaces as group separators.
		{"4539\u00a05260\u00a01815\u00a09083", "[REDACTED-CARD]"},
		{"IBAN DE89\u202f3704\u202f0044\u202f0532\u202f0130\u202f00", "IBAN [REDACTED-IBAN]"},
		// Full-width digits.
		{"認証コード：４８２２３１", "認証コード：[REDACTED-2FA]"},
		// A mask is never split from what it hides: trailing invisible characters stay outside.
		{"code is 482913\u200b!", "code is [REDACTED-2FA]\u200b!"},
	} {
		if out, _ := Default().Redact(tc.in, Hints{}); out != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, out, tc.want)
		}
	}
}

func TestFindingsIndexInput(t *testing.T) {
	for _, e := range loadCorpus(t) {
		out, fs := Default().Redact(e.Text, e.hints())
		checkFindings(t, e.Text, out, fs)
	}
}

// checkFindings asserts the structural guarantees of Redact.
func checkFindings(t *testing.T, in, out string, fs []Finding) {
	t.Helper()
	if !utf8.ValidString(in) {
		in = strings.ToValidUTF8(in, "\uFFFD")
	}
	prev := 0
	var b strings.Builder
	for _, f := range fs {
		if Mask(f.Class) == "" {
			t.Fatalf("unknown class %q", f.Class)
		}
		if f.Start < prev || f.End <= f.Start || f.End > len(in) {
			t.Fatalf("bad or overlapping finding %v (prev end %d, len %d) in %q", f, prev, len(in), in)
		}
		if overlapsAny(f.Start, f.End, maskSpans(in)) {
			t.Fatalf("finding %v masks inside an existing mask in %q", f, in)
		}
		b.WriteString(in[prev:f.Start])
		b.WriteString(Mask(f.Class))
		prev = f.End
	}
	b.WriteString(in[prev:])
	if b.String() != out {
		t.Fatalf("output %q is not the input with findings masked (%q)", out, b.String())
	}
}

// TestRedactingRedactedTextChangesNothing: redacting an already redacted
// text (every class, every corpus message) gives it back unchanged with no
// findings, so a mask is never masked again.
func TestRedactingRedactedTextChangesNothing(t *testing.T) {
	texts := []string{allClasses}
	for _, e := range loadCorpus(t) {
		texts = append(texts, e.Text)
	}
	for _, in := range texts {
		once, _ := Default().Redact(in, Hints{SenderShortCode: true})
		twice, fs := Default().Redact(once, Hints{SenderShortCode: true})
		if twice != once || len(fs) != 0 {
			t.Errorf("not idempotent:\n in   %q\n once %q\n twice %q", in, once, twice)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	r := Default()
	want, _ := r.Redact(allClasses, Hints{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				if got, _ := r.Redact(allClasses, Hints{}); got != want {
					t.Errorf("concurrent Redact = %q", got)
					return
				}
			}
		}()
	}
	wg.Wait()
}
