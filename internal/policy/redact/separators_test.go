package redact

import "testing"

// Real-world spellings of cards, SSNs and one-time codes (docs/redaction.md,
// "Separators"): typographic dashes and minus signs, every Unicode space,
// tabs, doubled spaces, mixed separators, a line break between groups,
// digit pairs, and codes spaced out after a code label. The mask must cover
// the whole number including its separators and leave the text around it
// as it was, so each case compares the complete output.
func TestSeparatorSpellingsAreMasked(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		// Cards (4111 1111 1111 1111, 4539 5260 1815 9083 and
		// 5425 9139 0996 0304 pass Luhn).
		{"card en dash", "pay with 4111–1111–1111–1111 today", "pay with [REDACTED-CARD] today"},
		{"card em dash", "card 4111—1111—1111—1111.", "card [REDACTED-CARD]."},
		{"card figure dash", "4111‒1111‒1111‒1111", "[REDACTED-CARD]"},
		{"card hyphen U+2010", "card: 4111‐1111‐1111‐1111!", "card: [REDACTED-CARD]!"},
		{"card non-breaking hyphen", "(4111‑1111‑1111‑1111)", "([REDACTED-CARD])"},
		{"card minus sign", "4111−1111−1111−1111 ok", "[REDACTED-CARD] ok"},
		{"card full-width hyphen", "4111－1111－1111－1111", "[REDACTED-CARD]"},
		{"card slashes", "it's 4111/1111/1111/1111 exp 04/28", "it's [REDACTED-CARD] exp 04/28"},
		{"card double spaces", "use 4539  5260  1815  9083 please", "use [REDACTED-CARD] please"},
		{"card tabs", "4539\t5260\t1815\t9083", "[REDACTED-CARD]"},
		{"card mixed separators", "card 4111-1111 1111.1111 thanks", "card [REDACTED-CARD] thanks"},
		{"card mixed dashes and spaces", "5425–9139 0996-0304", "[REDACTED-CARD]"},
		{"card line break", "card:\n4111 1111\n1111 1111\nthanks", "card:\n[REDACTED-CARD]\nthanks"},
		{"card CRLF", "card 4111 1111\r\n1111 1111", "card [REDACTED-CARD]"},
		{"card line break after a space", "4539 5260 \n1815 9083", "[REDACTED-CARD]"},
		{"card digit pairs", "my card 41 11 11 11 11 11 11 11 ok", "my card [REDACTED-CARD] ok"},
		{"card no-break space", "4539\u00a05260\u00a01815\u00a09083", "[REDACTED-CARD]"},
		{"card thin space", "4539\u20095260\u20091815\u20099083", "[REDACTED-CARD]"},
		{"card figure space", "4539\u20075260\u20071815\u20079083", "[REDACTED-CARD]"},
		{"card ideographic space", "カード4539\u30005260\u30001815\u30009083です", "カード[REDACTED-CARD]です"},
		{"card medium mathematical space", "4539\u205f5260\u205f1815\u205f9083", "[REDACTED-CARD]"},
		{"card ogham space", "4539\u16805260\u16801815\u16809083", "[REDACTED-CARD]"},
		{"card after a phone number", "call 555-0132 4111 1111 1111 1111", "call 555-0132 [REDACTED-CARD]"},
		{"card repeated in another spelling", "card 4111 1111 1111 1111, order 4111111111111111",
			"card [REDACTED-CARD], order [REDACTED-CARD]"},
		// SSNs.
		{"ssn en dash", "my ssn is 536–22–1847.", "my ssn is [REDACTED-SSN]."},
		{"ssn em dash", "SSN 536—22—1847", "SSN [REDACTED-SSN]"},
		{"ssn minus sign", "ssn: 536−22−1847", "ssn: [REDACTED-SSN]"},
		{"ssn non-breaking hyphen", "536‑22‑1847 is hers", "[REDACTED-SSN] is hers"},
		{"ssn double spaces", "SSN: 417  92  5038", "SSN: [REDACTED-SSN]"},
		{"ssn no-break spaces", "SSN 417\u00a092\u00a05038", "SSN [REDACTED-SSN]"},
		// One-time codes after a code label.
		{"code every digit spaced", "your code is 1 2 3 4 5 6", "your code is [REDACTED-2FA]"},
		{"code every digit spaced, punctuation", "Verification code: 4 8 2 9 1 3. Expires soon.", "Verification code: [REDACTED-2FA]. Expires soon."},
		{"code digit pairs", "Your login code is 48 29 13", "Your login code is [REDACTED-2FA]"},
		{"code 3-3 spaced", "Your code is 123 456.", "Your code is [REDACTED-2FA]."},
		{"code 3-3 double space", "code: 123  456", "code: [REDACTED-2FA]"},
		{"code 3-3 no-break space", "Your code is 123\u00a0456", "Your code is [REDACTED-2FA]"},
		{"code 3-3 en dash", "Your WhatsApp code: 381–207", "Your WhatsApp code: [REDACTED-2FA]"},
		{"PIN spaced", "PIN: 4 8 2 9", "PIN: [REDACTED-2FA]"},
		{"spaced code repeated in a link", "Your code is 1 2 3 4 5 6. Or open example.com/v/123456",
			"Your code is [REDACTED-2FA]. Or open example.com/v/[REDACTED-2FA]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, fs := Default().Redact(tc.in, Hints{})
			if out != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, out, tc.want)
			}
			checkFindings(t, tc.in, out, fs)
		})
	}
}

// TestSeparatorLookalikesAreNotMasked: normalising separators must not
// turn everyday numbers written with the same typography into secrets.
func TestSeparatorLookalikesAreNotMasked(t *testing.T) {
	for _, text := range []string{
		// Dates and times.
		"Deadline 2026–11–30", "due 2026—11—30 at 17:00", "from 30/11/2026 to 01/12/2026", "2026-11-30\n2026-12-01",
		"open 10:30–11:45", "9 – 5 on weekdays", "14:00—15:30 works", "Nov 30 – Dec 2",
		// Phone numbers.
		"Call 415–555–0132", "+1 415 555 0132", "+33 6 12 34 56 78", "06 12 34 56 78", "415‑555‑0132",
		"(415) 555–0132 or 415–555–0199", "415-555-0132\n415-555-0199", "+44\u00a020\u00a07946\u00a00958",
		"07700 900461\t020 7946 0018",
		// Prices and amounts.
		"$1\u00a0249.00", "€1 249,99", "1\u202f249\u00a0€", "it was 12–15 dollars", "−40 degrees", "balance −1,204.33",
		// Luhn-invalid card-shaped runs.
		"4111–1111–1111–1112", "4111 1111\n1111 1112", "41 11 11 11 11 11 11 12", "4111/1111/1111/1112",
		"4111-1111 1111.1112", "4111  1111  1111  1112", "4111111111111112",
		// A card split by a blank line is two paragraphs, not one number;
		// four lines of four digits are a list.
		"4111\n\n1111 1111 1111", "rooms:\n4111\n1111\n1111\n1111",
		// Order and reference numbers without a code label.
		"Your order 1 2 3 4 5 6 is ready", "count with me 1 2 3 4 5 6", "shipment 123 456 arrives Monday",
		"Ticket 12 34 56 reopened", "Order #112–7834521–9928374 shipped", "ref 2026–1130–0042",
		// Codes that are not secret.
		"zip code is 9 4 1 1 0", "area code 4 1 5", "Meeting ID: 835\u00a02201\u00a09184 Passcode: cake",
		// Versions and scores.
		"v1.2.3–1.2.4", "iOS 18.2.1 – 18.3", "Score was 3 - 2", "Final score 3–2", "104–98 at the half", "21 – 17",
		// SSN-shaped advertising number with an en dash, like 123-45-6789.
		"Is 123–45–6789 a real SSN?",
	} {
		if out, fs := Default().Redact(text, Hints{}); len(fs) != 0 {
			t.Errorf("Redact(%q) = %q, want unchanged", text, out)
		}
	}
}
