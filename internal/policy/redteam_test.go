package policy

import (
	"testing"
	"unicode"
)

// TestUnicodeNumbersAreTheSameNumber: a blocked number written with
// another script's digits or with Unicode punctuation (how some exports
// and copy-pasted cards carry it) is still the blocked number, as the
// contacts book resolves it to the same person. Before the fix such a
// handle was not a phone to the policy at all, so its thread was read.
func TestUnicodeNumbersAreTheSameNumber(t *testing.T) {
	p, err := New(ModeBlocklist, []string{"+1 415 555 0002"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{
		"\uff0b\uff11 415\u2011555\u20110002",                                                                  // full-width plus and one, non-breaking hyphens
		"\uff14\uff11\uff15\uff15\uff15\uff15\uff10\uff10\uff10\uff12",                                         // full-width digits
		"+1\u00a0415\u00a0555\u00a00002",                                                                       // no-break spaces
		"+1\u2009(415)\u2009555\u20130002",                                                                     // thin spaces, en dash
		"\u0664\u0661\u0665\u0665\u0665\u0665\u0660\u0660\u0660\u0662",                                         // Arabic-Indic
		"\u096a\u0967\u096b\u096b\u096b\u096b\u0966\u0966\u0966\u0968",                                         // Devanagari
		"\U0001D7D2\U0001D7CF\U0001D7D3\U0001D7D3\U0001D7D3\U0001D7D3\U0001D7CE\U0001D7CE\U0001D7CE\U0001D7D0", // mathematical bold
		"\uff08415\uff09555\u22120002",                                                                         // full-width parentheses, minus sign
		"tel:+1\u2011415\u2011555\u20110002",
	} {
		if d := p.AllowHandle(h); d.Allowed || d.Reason != ReasonBlocked {
			t.Errorf("AllowHandle(%q) = %+v, want blocked", h, d)
		}
		if d := p.AllowThread(Thread{Identifier: h, GUID: "SMS;-;" + h}); d.Allowed {
			t.Errorf("AllowThread(direct %q) allowed", h)
		}
		if d := p.AllowThread(Thread{Identifier: "chat1", GUID: "iMessage;+;chat1", Participants: []string{"+14155550001", h}, Group: true}); d.Allowed {
			t.Errorf("AllowThread(group with %q) allowed", h)
		}
	}
	// Other numbers in the same scripts stay readable.
	for _, h := range []string{"\uff14\uff11\uff15\uff15\uff15\uff15\uff10\uff10\uff10\uff13", "+1\u2011415\u2011555\u20110003"} {
		if d := p.AllowHandle(h); !d.Allowed {
			t.Errorf("AllowHandle(%q) = %+v, want allowed", h, d)
		}
	}
	// An entry written that way is a phone entry, not a substring that
	// would match only the same spelling.
	e, err := ParseEntry("\uff0b\uff11 (415) 555\u20110002")
	if err != nil || e.Kind != KindPhone || e.Key != "4155550002" {
		t.Fatalf("ParseEntry = %+v, %v; want phone 4155550002", e, err)
	}
	// The allowlist reads them the same way (the same person, allowed).
	a, err := New(ModeAllowlist, nil, []string{"\uff14\uff11\uff15 555 0003"})
	if err != nil {
		t.Fatal(err)
	}
	if d := a.AllowThread(Thread{Identifier: "+14155550003", GUID: "iMessage;-;+14155550003"}); !d.Allowed {
		t.Errorf("allowlisted number in full-width digits: %+v", d)
	}
}

// TestDigitValue pins the property digitValue relies on: every range of
// Unicode's decimal digits is made of complete runs of ten, zero first.
func TestDigitValue(t *testing.T) {
	for _, r := range unicode.Nd.R16 {
		if r.Stride != 1 || (r.Hi-r.Lo+1)%10 != 0 {
			t.Errorf("Nd range %U–%U stride %d is not runs of ten", r.Lo, r.Hi, r.Stride)
		}
	}
	for _, r := range unicode.Nd.R32 {
		if r.Stride != 1 || (r.Hi-r.Lo+1)%10 != 0 {
			t.Errorf("Nd range %U–%U stride %d is not runs of ten", r.Lo, r.Hi, r.Stride)
		}
	}
	for r, want := range map[rune]byte{'7': 7, '\uff17': 7, '\u0667': 7, '\u06f7': 7, '\u096d': 7, '\U0001D7D5': 7, '\U0001D7DF': 7, '\U0001D7FF': 9} {
		if got, ok := digitValue(r); !ok || got != want {
			t.Errorf("digitValue(%U) = %d %v, want %d", r, got, ok, want)
		}
	}
	for _, r := range []rune{'a', '\u00b2', '\u2460', 'x', '\u216b'} { // superscript two, circled one, Roman numeral
		if _, ok := digitValue(r); ok {
			t.Errorf("digitValue(%U) accepted a non-decimal character", r)
		}
	}
}

// TestWithPeople: blocking one of a person's handles blocks all of them
// once the address book says they belong together, and never unblocks or
// allows anything.
func TestWithPeople(t *testing.T) {
	people := [][]string{
		{"+14155550002", "zanzi@sentinel.example", "+33 6 12 34 56 78"}, // the blocked person's card
		{"+14155550001", "alex@example.com"},
		{"ALLOWED@example.com", "+14155550009"},
		{},
		{"", "  "},
	}
	base, err := New(ModeBlocklist, []string{"(415) 555-0002"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := base.WithPeople(people)
	for _, h := range []string{"zanzi@sentinel.example", "ZANZI@Sentinel.Example", "mailto:zanzi@sentinel.example", "+33612345678", "+33 6 12 34 56 78"} {
		if d := p.AllowHandle(h); d.Reason != ReasonBlocked {
			t.Errorf("AllowHandle(%q) = %+v, want blocked through the person's card", h, d)
		}
		if d := base.AllowHandle(h); !d.Allowed {
			t.Errorf("the base policy changed: AllowHandle(%q) = %+v", h, d)
		}
	}
	if d := p.AllowThread(Thread{Identifier: "zanzi@sentinel.example", GUID: "iMessage;-;zanzi@sentinel.example"}); d.Allowed {
		t.Error("the blocked person's e-mail thread is allowed")
	}
	for _, h := range []string{"+14155550001", "alex@example.com", "allowed@example.com"} {
		if d := p.AllowHandle(h); !d.Allowed {
			t.Errorf("AllowHandle(%q) = %+v: someone else was blocked", h, d)
		}
	}
	if p.Fingerprint() == base.Fingerprint() {
		t.Error("the fingerprint does not change when handles are added, so nothing would be purged")
	}
	if got := p.Info().BlockedEntries; got != 1 {
		t.Errorf("Info counts %d blocked entries, want the file's 1", got)
	}
	if again := base.WithPeople(people); again.Fingerprint() != p.Fingerprint() {
		t.Error("the same book gives another fingerprint")
	}
	// Nothing to add: the same policy.
	if q := base.WithPeople([][]string{{"+14155550001"}}); q != base {
		t.Error("a book with nobody blocked built a new policy")
	}
	if q := (*Policy)(nil).WithPeople(people); q != nil {
		t.Error("nil policy came back non-nil")
	}
	// Allowlist mode: allowing one handle does not allow the others, and a
	// blocked handle still blocks the whole person.
	a, err := New(ModeAllowlist, []string{"+14155550002"}, []string{"allowed@example.com", "+14155550002", "zanzi@sentinel.example"})
	if err != nil {
		t.Fatal(err)
	}
	ap := a.WithPeople(people)
	if d := ap.AllowHandle("+14155550009"); d.Allowed {
		t.Error("allowing one handle of a person allowed their other number")
	}
	if d := ap.AllowHandle("zanzi@sentinel.example"); d.Reason != ReasonBlocked {
		t.Errorf("allowlisted address of a blocked person = %+v, want blocked", d)
	}
}
