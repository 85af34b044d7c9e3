package send

import (
	"strings"
	"testing"
)

func TestCanonService(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"", ServiceIMessage, true},
		{"iMessage", ServiceIMessage, true},
		{"imessage", ServiceIMessage, true},
		{"SMS", ServiceSMS, true},
		{"sms", ServiceSMS, true},
		{"RCS", "", false},
		{" iMessage", "", false},
		{"iMessage;SMS", "", false},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := canonService(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("canonService(%q) = %q, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
			}
			if err != nil {
				wantCode(t, err, CodeInvalidService)
			}
		})
	}
}

func TestCheckText(t *testing.T) {
	tests := []struct {
		name string
		text string
		ok   bool
		msg  string // substring of the error
	}{
		{"one char", "k", true, ""},
		{"seed example", "Confirmed for 3pm.", true, ""},
		{"exactly 4000 ascii", strings.Repeat("a", 4000), true, ""},
		{"4000 multibyte chars", strings.Repeat("é", 4000), true, ""},
		{"4000 emoji", strings.Repeat("😀", 4000), true, ""},
		{"4001 chars", strings.Repeat("a", 4001), false, "4001 characters"},
		{"4001 multibyte", strings.Repeat("é", 4001), false, "4001 characters"},
		{"empty", "", false, "empty"},
		{"only spaces", "   \n\t ", false, "whitespace"},
		{"newline tab cr allowed", "line one\r\nline two\n\tindented\r", true, ""},
		{"NUL", "a\x00b", false, "U+0000 at character 2"},
		{"bell", "ring\x07", false, "U+0007"},
		{"escape sequence", "\x1b[31mred", false, "U+001B at character 1"},
		{"vertical tab", "a\vb", false, "U+000B"},
		{"form feed", "a\fb", false, "U+000C"},
		{"unit separator", "a\x1fb", false, "U+001F"},
		{"DEL", "a\x7fb", false, "U+007F"},
		{"C1 NEL", "a\u0085b", false, "U+0085"},
		{"C1 CSI", "a\u009bb", false, "U+009B"},
		{"invalid UTF-8", "a\xffb", false, "UTF-8"},
		{"RLO bidi override", "pay \u202Eevil", false, "U+202E"},
		{"zero width space", "pass\u200Bword", false, "U+200B"},
		{"tag characters (ASCII smuggling)", "hi\U000E0041\U000E0042", false, "U+E0041"},
		{"BOM", "\uFEFFhello", false, "U+FEFF"},
		{"line separator", "a\u2028b", false, "U+2028"},
		{"emoji with ZWJ family", "see you 👨‍👩‍👧", true, ""},
		{"flag", "🇫🇷 and 🏴󠁧󠁢󠁳󠁣󠁴󠁿", true, ""},
		{"keycap", "press 1️⃣", true, ""},
		{"accents and CJK", "Crème brûlée 和 café", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkText(tt.text)
			if (err == nil) != tt.ok {
				t.Fatalf("checkText = %v, want ok=%v", err, tt.ok)
			}
			if err != nil {
				wantCode(t, err, CodeInvalidText)
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q does not mention %q", err, tt.msg)
				}
				if len(tt.text) > 20 && strings.Contains(err.Error(), tt.text) {
					t.Errorf("error repeats the text")
				}
			}
		})
	}
}

func TestParseRecipient(t *testing.T) {
	tests := []struct {
		in      string
		address string
		code    Code
	}{
		{"+14155551234", "+14155551234", ""},
		{"+1 (415) 555-1234", "+14155551234", ""},
		{"(415) 555-1234", "+14155551234", ""},
		{"415.555.1234", "+14155551234", ""},
		{"4155551234", "+14155551234", ""},
		{"tel:+1-415-555-1234", "+14155551234", ""},
		{"+44 20 7946 0000", "+442079460000", ""},
		{"  +14155551234  ", "+14155551234", ""},
		{"32665", "32665", ""},
		{"Bob@Example.COM", "bob@example.com", ""},
		{"mailto:bob@example.com", "bob@example.com", ""},
		{"chatty@example.com", "chatty@example.com", ""}, // starts with "chat" but is an address
		{"chat123456789", "", CodeGroupChat},
		{"CHAT123456789", "", CodeGroupChat},
		{"chat", "", CodeGroupChat},
		{"iMessage;+;chat123456789", "", CodeGroupChat},
		{"SMS;+;chat99", "", CodeGroupChat},
		{"iMessage;-;+14155551234", "", CodeInvalidRecipient},
		{"", "", CodeInvalidRecipient},
		{"   ", "", CodeInvalidRecipient},
		{"AMAZON", "", CodeInvalidRecipient},
		{"Alex Example", "", CodeInvalidRecipient},
		{"030 1234567", "", CodeInvalidRecipient}, // country unknown with region US
		{"bob@", "", CodeInvalidRecipient},
		{"@example.com", "", CodeInvalidRecipient},
		{"bob@example", "", CodeInvalidRecipient},
		{"bob@@example.com", "", CodeInvalidRecipient},
		{"bob smith@example.com", "", CodeInvalidRecipient},
		{"bob@exa\u202Emple.com", "", CodeInvalidRecipient},
		{"bob@example..com", "", CodeInvalidRecipient},
		{strings.Repeat("1", 400), "", CodeInvalidRecipient},
		{"\xff\xfe", "", CodeInvalidRecipient},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := parseRecipient(tt.in, "US")
			if tt.code != "" {
				wantCode(t, err, tt.code)
				if tt.code == CodeGroupChat && !strings.Contains(err.Error(), "group chat IDs not supported") {
					t.Errorf("group refusal %q lacks the protocol's wording", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseRecipient(%q): %v", tt.in, err)
			}
			if r.Address != tt.address || r.Raw != tt.in {
				t.Fatalf("got %+v, want address %q raw %q", r, tt.address, tt.in)
			}
		})
	}
}

func TestParseRecipientUsesRegion(t *testing.T) {
	r, err := parseRecipient("06 12 34 56 78", "FR")
	if err != nil || r.Address != "+33612345678" {
		t.Fatalf("FR national number: %+v, %v", r, err)
	}
	if _, err := parseRecipient("06 12 34 56 78", "US"); err == nil {
		t.Fatal("a French national number was accepted with region US")
	}
}

func TestNearKey(t *testing.T) {
	if nearKey("See  you\tat 3 ") != nearKey("see you at 3") {
		t.Error("white space and case should not distinguish near-duplicates")
	}
	if nearKey("see you at 3") == nearKey("see you at 4") {
		t.Error("different texts share a near key")
	}
}

// FuzzValidate checks the validators' invariants on any input: they never
// panic, an accepted text obeys every rule, and an accepted recipient is a
// plain E.164 number, short code or address.
func FuzzValidate(f *testing.F) {
	f.Add("+14155551234", "Confirmed for 3pm.", "")
	f.Add("chat123", "hi", "SMS")
	f.Add("bob@example.com", "a\x00b", "imessage")
	f.Add("iMessage;+;chat1", "\u202Eevil", "RCS")
	f.Fuzz(func(t *testing.T, to, text, service string) {
		if err := checkText(text); err == nil {
			n := 0
			for _, r := range text {
				n++
				if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r >= 0x7f && r < 0xa0 {
					t.Fatalf("accepted control U+%04X", r)
				}
			}
			if n < 1 || n > MaxTextChars {
				t.Fatalf("accepted length %d", n)
			}
		}
		r, err := parseRecipient(to, "US")
		if err == nil {
			a := r.Address
			switch {
			case strings.HasPrefix(a, "+"):
				if strings.Trim(a[1:], "0123456789") != "" {
					t.Fatalf("phone address %q", a)
				}
			case strings.Contains(a, "@"):
				if strings.ContainsAny(a, " \t\r\n;") || strings.ToLower(a) != a {
					t.Fatalf("email address %q", a)
				}
			default:
				if strings.Trim(a, "0123456789") != "" {
					t.Fatalf("short code %q", a)
				}
			}
			if strings.Contains(a, ";") || strings.HasPrefix(strings.ToLower(a), "chat") && !strings.Contains(a, "@") {
				t.Fatalf("group-like address accepted: %q", a)
			}
		}
		if s, err := canonService(service); err == nil && s != ServiceIMessage && s != ServiceSMS {
			t.Fatalf("service %q", s)
		}
	})
}
