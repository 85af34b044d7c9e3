package redact

import (
	"strings"
	"testing"
	"unicode"
)

// TestCardAndSSNAfterAnotherNumberAreMasked pins the red-team finding
// (docs/redaction.md, "Group boundaries"): a card or SSN written right after
// an unrelated number or token — a list marker, a room number, a phone
// number, a PIN, a letter-digit token — is found by searching the digit
// groups at every group boundary, not only from the start of the run; the
// token before is never glued to the mask. The same holds for underscore
// separators, every digit spaced out (cards only, whole sequence
// Luhn-valid) and decimal digits of other scripts. Each case compares the
// complete output.
func TestCardAndSSNAfterAnotherNumberAreMasked(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"card after a list number", "card number: 1 4111 1111 1111 1111", "card number: 1 [REDACTED-CARD]"},
		{"card after #1", "#1 4111111111111111", "#1 [REDACTED-CARD]"},
		{"card after a room number", "room 12 4111111111111111", "room 12 [REDACTED-CARD]"},
		{"card after a letter-digit token", "A3 4111111111111111", "A3 [REDACTED-CARD]"},
		{"card after a spaced phone number", "call me at 415 555 0134 4111 1111 1111 1111",
			"call me at 415 555 0134 [REDACTED-CARD]"},
		{"card after a dashed phone number", "call 415-555-0134 4539-5260-1815-9083",
			"call 415-555-0134 [REDACTED-CARD]"},
		{"amex after a number", "seat 7 3714 496353 98431", "seat 7 [REDACTED-CARD]"},
		{"card after a number, then a cvv", "2 4539 5260 1815 9083 123", "2 [REDACTED-CARD] 123"},
		{"card after a dotted number", "item 3.4929.3231.9487.5742", "item 3.4929.3231.9487.5742"},
		{"card after a number with underscores", "x 12_4111_1111_1111_1111", "x 12_[REDACTED-CARD]"},
		{"card digit pairs after a number", "no. 7 41 11 11 11 11 11 11 11", "no. 7 [REDACTED-CARD]"},
		{"card after a number, then an expiry", "room 12 4111111111111111 12/28", "room 12 [REDACTED-CARD] 12/28"},
		{"card after a number, then expiry and cvv", "1 4539 5260 1815 9083 04/28 123", "1 [REDACTED-CARD] 04/28 123"},
		{"card in a list", "1) 4111 1111 1111 1111", "1) [REDACTED-CARD]"},
		{"card in a dotted list", "1. 4111111111111111", "1. [REDACTED-CARD]"},
		{"card underscores", "4111_1111_1111_1111", "[REDACTED-CARD]"},
		{"card underscores then text", "card 4539_5260_1815_9083_ok", "card 4539_5260_1815_9083_ok"},
		{"card every digit spaced", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1", "[REDACTED-CARD]"},
		{"card every digit spaced in a sentence", "it is 4 5 3 9 5 2 6 0 1 8 1 5 9 0 8 3 ok", "it is [REDACTED-CARD] ok"},
		{"card Arabic-Indic digits", "بطاقتي ٤١١١ ١١١١ ١١١١ ١١١١ شكرا", "بطاقتي [REDACTED-CARD] شكرا"},
		{"card Extended Arabic-Indic digits", "کارت ۴۵۳۹۵۲۶۰۱۸۱۵۹۰۸۳", "کارت [REDACTED-CARD]"},
		{"card Devanagari digits", "कार्ड ४१११-११११-११११-११११", "कार्ड [REDACTED-CARD]"},
		{"card Arabic-Indic after a number", "١ ٤١١١١١١١١١١١١١١١", "١ [REDACTED-CARD]"},
		{"card mixed scripts", "4111 ١١١١ 1111 ११११", "[REDACTED-CARD]"},
		{"ssn after a list number", "ssn 1 536-22-1847", "ssn 1 [REDACTED-SSN]"},
		{"ssn after a room number", "room 12 536-22-1847 is hers", "room 12 [REDACTED-SSN] is hers"},
		{"ssn after a letter-digit token", "A3 536/22/1847", "A3 [REDACTED-SSN]"},
		{"ssn after a date", "2026-11-30 536.22.1847", "2026-11-30 [REDACTED-SSN]"}, // literal date: an unrelated number before the SSN
		{"ssn Arabic-Indic digits", "رقم ٥٣٦-٢٢-١٨٤٧", "رقم [REDACTED-SSN]"},
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

// TestPINBeforeCardIsNotPartOfTheCard: a PIN written before a card is its
// own value; the card is masked as a card, whatever the PIN becomes.
func TestPINBeforeCardIsNotPartOfTheCard(t *testing.T) {
	in := "PIN 4821 4111 1111 1111 1111"
	out, fs := Default().Redact(in, Hints{})
	var cards []string
	for _, f := range fs {
		if f.Class == ClassCard {
			cards = append(cards, in[f.Start:f.End])
		}
	}
	if strings.Join(cards, "|") != "4111 1111 1111 1111" || strings.Contains(out, "1111") {
		t.Errorf("Redact(%q) = %q, cards %q, want the card 4111 1111 1111 1111 masked", in, out, cards)
	}
}

// TestGroupBoundaryLookalikesAreNotMasked: searching every group boundary,
// reading other scripts' digits and underscores must not turn everyday
// numbers into cards or SSNs.
func TestGroupBoundaryLookalikesAreNotMasked(t *testing.T) {
	for _, text := range []string{
		// Luhn-invalid windows after a number.
		"room 12 4111111111111112", "1 4111 1111 1111 1112", "A3 4111111111111112",
		// Labelled identifiers keep their label across their groups.
		"Order 1 4111111111111111 shipped", "tracking 12 4111 1111 1111 1111", "IMEI 35 391810 123456 7",
		"USPS tracking 9400 1111 0200 0880 1234 56",
		// Numbers printed in groups whose middle holds a Luhn-valid window:
		// two phone numbers in a row (0159 is the window's check digit),
		// a tracking number in fours, a printed IBAN (mod-97 valid, found
		// as an IBAN and never as a card: TestIBANGroupsHoldNoCard).
		"call 415 555 4596 415 555 0159", "9400 4871 8033 4018 7801 12",
		// Every digit spaced: counts, sequences, short numbers, Luhn-invalid.
		"count 1 2 3 4 5 6 7 8 9 10", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 2", "1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6",
		"scores 4 1 1 1 1 1 1 1 1 1 1 1", "4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1",
		// Underscored identifiers and file names.
		"IMG_20261130_143022.jpg", "build_4111_1111_1111_1111_debug", "id_4111111111111111",
		// Other scripts: phone numbers, prices, dates, an advertising SSN.
		"اتصل ٠٥٥ ١٢٣ ٤٥٦٧", "السعر ١٬٢٤٩٫٠٠ ريال", "٢٠٢٦-١١-٣٠", "٤١١١ ١١١١ ١١١١ ١١١٢", "١٢٣-٤٥-٦٧٨٩",
		"फ़ोन ९८७६५ ४३२१०",
		// SSN shapes still inside longer numbers.
		"call 1-536-22-1847-9", "12 417 92 5038", "1.536.22.1847",
	} {
		if out, fs := Default().Redact(text, Hints{}); len(fs) != 0 {
			t.Errorf("Redact(%q) = %q, want unchanged", text, out)
		}
	}
}

// TestIBANGroupsHoldNoCard: a printed IBAN whose groups hold a Luhn-valid
// card-length window stays one IBAN finding.
func TestIBANGroupsHoldNoCard(t *testing.T) {
	in := "IBAN FR11 5561 3044 5166 9156 4041 042 thanks"
	out, fs := Default().Redact(in, Hints{})
	if want := "IBAN [REDACTED-IBAN] thanks"; out != want || len(fs) != 1 || fs[0].Class != ClassIBAN {
		t.Errorf("Redact(%q) = %q %v, want %q as one iban finding", in, out, fs, want)
	}
}

// TestOtherScriptDigitsReadAsTheirValue: every decimal digit (class Nd)
// maps to its value, which otherDigit derives from the Unicode promise that
// Nd digits come in contiguous runs of ten from zero.
func TestOtherScriptDigitsReadAsTheirValue(t *testing.T) {
	for _, rg := range unicode.Nd.R16 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %#x–%#x stride %d is not runs of ten", rg.Lo, rg.Hi, rg.Stride)
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rg.Stride != 1 || (rg.Hi-rg.Lo+1)%10 != 0 {
			t.Errorf("Nd range %#x–%#x stride %d is not runs of ten", rg.Lo, rg.Hi, rg.Stride)
		}
	}
	for _, tc := range []struct {
		r    rune
		want byte
		ok   bool
	}{
		{'٤', 4, true}, {'۹', 9, true}, {'४', 4, true}, {'৭', 7, true}, {'๓', 3, true}, {'８', 8, true},
		{'𝟗', 9, true}, {'𝟬', 0, true}, {'𝟮', 2, true}, {'7', 0, false}, {'Ⅳ', 0, false}, {'²', 0, false}, {'a', 0, false},
	} {
		if v, ok := otherDigit(tc.r); v != tc.want || ok != tc.ok {
			t.Errorf("otherDigit(%q) = %d, %v, want %d, %v", tc.r, v, ok, tc.want, tc.ok)
		}
	}
}

// TestCardWhosePrefixPassesLuhnIsMaskedWhole: a card whose first 13–15
// digits happen to pass the checksum as well (about one card in ten) is
// masked to its last digit, not cut where the shorter window passed
// ("use 45 39 52 60 18 15 90 83" left "83" visible; third red-team pass).
func TestCardWhosePrefixPassesLuhnIsMaskedWhole(t *testing.T) {
	for _, in := range []string{
		"use 45 39 52 60 18 15 90 83",
		"card 45-39-52-60-18-15-90-83",
		"card 4539 5260 1815 9083",
		"4539526018159083 thanks",
	} {
		out, _ := Default().Redact(in, Hints{})
		if strings.Contains(out, "83") || strings.Contains(out, "90") || !strings.Contains(out, "[REDACTED-CARD]") {
			t.Errorf("Redact(%q) = %q, want the whole card masked", in, out)
		}
	}
}
