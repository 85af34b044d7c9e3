package contacts

import (
	"fmt"
	"strings"
	"testing"
)

// TestNormalizeGivesOneKeyPerHandleWhateverItsForm: every written form of a
// phone number (national, international, 00 or 011 prefixes, tel: URIs,
// extensions, Unicode digits and dashes) gives one E.164 key in the given
// region, a foreign national number without its country is never made +1,
// short codes, sender ids and e-mail addresses keep their own kinds, garbage
// is KindInvalid, and a cached answer equals the first (docs/contacts.md).
func TestNormalizeGivesOneKeyPerHandleWhateverItsForm(t *testing.T) {
	tests := []struct {
		name, handle, region string
		wantKey              string
		wantKind             Kind
	}{
		// United States.
		{"us parens", "(415) 555-1234", "US", "+14155551234", KindPhone},
		{"us dots", "415.555.1234", "US", "+14155551234", KindPhone},
		{"us bare", "4155551234", "US", "+14155551234", KindPhone},
		{"us leading 1", "1 415 555 1234", "US", "+14155551234", KindPhone},
		{"us +1", "+1 (415) 555-1234", "US", "+14155551234", KindPhone},
		{"us e164", "+14155551234", "US", "+14155551234", KindPhone},
		{"us +1 from FR region", "+1 415 555 1234", "FR", "+14155551234", KindPhone},
		{"us fictional 555", "(555) 555-0123", "US", "+15555550123", KindPhone},
		{"us extension dropped", "415-555-1234 ext. 22", "US", "+14155551234", KindPhone},
		{"us x extension", "415-555-1234x22", "US", "+14155551234", KindPhone},
		{"tel uri", "tel:+1-415-555-1234", "US", "+14155551234", KindPhone},
		{"tel uri ext param", "tel:+1-415-555-1234;ext=7", "US", "+14155551234", KindPhone},
		{"nbsp and unicode dashes", "415\u00a0555\u20111234", "US", "+14155551234", KindPhone},
		{"fullwidth digits", "４１５５５５１２３４", "US", "+14155551234", KindPhone},
		{"empty region is US", "(415) 555-1234", "", "+14155551234", KindPhone},
		{"lower-case region", "06 12 34 56 78", "fr", "+33612345678", KindPhone},
		{"us local only keeps digits", "555-1234", "US", "5551234", KindPhone},
		// France.
		{"fr national", "06 12 34 56 78", "FR", "+33612345678", KindPhone},
		{"fr +33", "+33 6 12 34 56 78", "FR", "+33612345678", KindPhone},
		{"fr +33 from US", "+33 6 12 34 56 78", "US", "+33612345678", KindPhone},
		{"fr 0033", "0033 6 12 34 56 78", "FR", "+33612345678", KindPhone},
		{"fr national with US region is not +1", "06 12 34 56 78", "US", "0612345678", KindPhone},
		{"fr without plus from US", "33612345678", "US", "+33612345678", KindPhone},
		// Germany.
		{"de national", "030 1234567", "DE", "+49301234567", KindPhone},
		{"de mobile", "0151 12345678", "DE", "+4915112345678", KindPhone},
		{"de +49 from US", "+49 151 12345678", "US", "+4915112345678", KindPhone},
		{"de 0049 from US", "0049 30 1234567", "US", "+49301234567", KindPhone},
		{"de 011 from US", "011 49 30 1234567", "US", "+49301234567", KindPhone},
		{"de national with US region is not +1", "030 1234567", "US", "0301234567", KindPhone},
		{"de without plus from US", "4915112345678", "US", "+4915112345678", KindPhone},
		// United Kingdom.
		{"uk national", "07911 123456", "GB", "+447911123456", KindPhone},
		{"uk +44", "+44 7911 123456", "US", "+447911123456", KindPhone},
		{"uk +44 (0)", "+44 (0)7911 123456", "GB", "+447911123456", KindPhone},
		{"uk (+44)", "(+44) 7911 123456", "US", "+447911123456", KindPhone},
		// Short codes and sender ids.
		{"short code", "32665", "US", "32665", KindShortCode},
		{"short code 6", "262966", "US", "262966", KindShortCode},
		{"short code spaced", "32 665", "FR", "32665", KindShortCode},
		{"three digits", "411", "US", "411", KindShortCode},
		{"alnum", "AMAZON", "US", "AMAZON", KindAlnum},
		{"alnum kept as is", "  Uber ", "US", "Uber", KindAlnum},
		{"alnum with digit", "VERIFY2FA", "US", "VERIFY2FA", KindAlnum},
		// E-mail.
		{"email lower", "Alice.Smith@Example.COM", "US", "alice.smith@example.com", KindEmail},
		{"email mailto", "mailto:Bob@Example.org", "US", "bob@example.org", KindEmail},
		{"email unicode", "ZOË@exämple.de", "US", "zoë@exämple.de", KindEmail},
		// Garbage.
		{"empty", "", "US", "", KindInvalid},
		{"spaces", "   ", "US", "", KindInvalid},
		{"two digits", "12", "US", "", KindInvalid},
		{"plus only", "+", "US", "", KindInvalid},
		{"plus too short", "+123", "US", "", KindInvalid},
		{"plus in middle", "415+5551234", "US", "", KindInvalid},
		{"two plus signs", "++14155551234", "US", "", KindInvalid},
		{"email no local", "@example.com", "US", "", KindInvalid},
		{"email no domain", "bob@", "US", "", KindInvalid},
		{"email with space", "bob smith@example.com", "US", "", KindInvalid},
		{"punctuation", "?!?", "US", "", KindInvalid},
		{"too many digits", strings.Repeat("9", 30), "US", "", KindInvalid},
		{"long alnum", "THIS IS NOT A SENDER ID AT ALL", "US", "", KindInvalid},
		{"invalid utf8", "\xff\xfe415", "US", "", KindInvalid},
		{"huge", strings.Repeat("a", 400) + "@x.com", "US", "", KindInvalid},
		{"control char", "bob\x00@example.com", "US", "", KindInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, kind := Normalize(tc.handle, tc.region)
			if key != tc.wantKey || kind != tc.wantKind {
				t.Errorf("Normalize(%q, %q) = %q, %q; want %q, %q", tc.handle, tc.region, key, kind, tc.wantKey, tc.wantKind)
			}
			// Cached and uncached answers agree.
			if key2, kind2 := Normalize(tc.handle, tc.region); key2 != key || kind2 != kind {
				t.Errorf("second call = %q, %q; first %q, %q", key2, kind2, key, kind)
			}
		})
	}
}

func TestNormalizeNeverInventsUSNumbers(t *testing.T) {
	// Foreign national formats read with region US must never turn into a +1 key.
	for _, h := range []string{"030 1234567", "0151 12345678", "06 12 34 56 78", "07911 123456", "089 123456"} {
		if key, _ := Normalize(h, "US"); strings.HasPrefix(key, "+1") {
			t.Errorf("Normalize(%q, US) = %q, a made-up +1 number", h, key)
		}
	}
}

// TestLast10KeepsAPhonesLastTenDigits: Last10 gives a phone handle's last ten
// digits whatever its format (all of them for a short code), the bridge
// protocol's matching rule (docs/contacts.md), and nothing for e-mail
// addresses, sender ids and empty handles.
func TestLast10KeepsAPhonesLastTenDigits(t *testing.T) {
	tests := []struct{ handle, want string }{
		{"+1-555-123-4567", "5551234567"},
		{"5551234567", "5551234567"},
		{"(555) 123-4567", "5551234567"},
		{"+14155551234", "4155551234"},
		{"+447911123456", "7911123456"},
		{"tel:+1 415 555 1234;ext=9", "4155551234"},
		{"32665", "32665"},
		{"bob@example.com", ""},
		{"AMAZON", ""},
		{"", ""},
	}
	for _, tc := range tests {
		if got := Last10(tc.handle); got != tc.want {
			t.Errorf("Last10(%q) = %q, want %q", tc.handle, got, tc.want)
		}
	}
}

func TestRegionFromEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"TIDINGS_REGION": "fr"}, "FR"},
		{map[string]string{"TIDINGS_REGION": "XX", "LANG": "de_DE.UTF-8"}, "DE"},
		{map[string]string{"LC_ALL": "en_GB.UTF-8", "LANG": "de_DE.UTF-8"}, "GB"},
		{map[string]string{"LANG": "C.UTF-8"}, "US"},
		{map[string]string{"LANG": "fr-CA"}, "CA"},
		{map[string]string{}, "US"},
	}
	for _, tc := range tests {
		if got := RegionFromEnv(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("RegionFromEnv(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestCacheBounded(t *testing.T) {
	c := phoneCache{newCache[phoneKey](100)}
	for i := 0; i < 250; i++ {
		c.get(phoneKey{"US", fmt.Sprintf("415%07d", i), false})
		if n := len(c.m); n > c.max {
			t.Fatalf("cache holds %d entries, cap %d", n, c.max)
		}
	}
	if got := c.get(phoneKey{"US", "4155551234", false}); got.key != "+14155551234" {
		t.Fatalf("after reset: %q", got.key)
	}
}

// BenchmarkNormalize measures the cached path (the common case: the same
// handles recur in every message) and, for reference, a cold parse.
func BenchmarkNormalize(b *testing.B) {
	handles := []string{"+14155551234", "(415) 555-1234", "06 12 34 56 78", "Alice@Example.com", "32665", "+447911123456"}
	b.Run("cached", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			Normalize(handles[i%len(handles)], "US")
		}
	})
	b.Run("uncached", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			parsePhone("US", "415555"+fmt.Sprintf("%04d", i%10000), false)
		}
	})
}

// FuzzNormalize checks that hostile handles never panic, that a key is
// empty exactly when the handle is invalid, that phone keys are digits
// with an optional leading "+", and that normalising a key gives it back.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"(415) 555-1234", "06 12 34 56 78", "+49 30 1234567", "0049301234567", "32665", "AMAZON",
		"Bob@Example.com", "tel:+1-415-555-1234;ext=2", "(+44) 7911 123456", "４１５５５５１２３４", "+", "x@", "415 555 1234 ext 9"} {
		f.Add(s, "US")
	}
	f.Add("06 12 34 56 78", "FR")
	f.Add("030 1234567", "de")
	f.Fuzz(func(t *testing.T, handle, region string) {
		if !ValidRegion(region) {
			region = "US"
		}
		key, kind := Normalize(handle, region)
		if (key == "") != (kind == KindInvalid) {
			t.Fatalf("Normalize(%q) = %q, %q", handle, key, kind)
		}
		if kind == KindPhone || kind == KindShortCode {
			digits := strings.TrimPrefix(key, "+")
			if digits == "" || strings.Trim(digits, "0123456789") != "" {
				t.Fatalf("phone key %q from %q", key, handle)
			}
		}
		if kind != KindInvalid {
			if k2, kind2 := Normalize(key, region); k2 != key || kind2 != kind {
				t.Fatalf("Normalize(%q) = %q, %q but Normalize(key) = %q, %q", handle, key, kind, k2, kind2)
			}
		}
		_ = Last10(handle)
	})
}
