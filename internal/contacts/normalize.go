package contacts

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
)

// Kind classifies a handle.
type Kind string

// Handle kinds returned by Normalize.
const (
	// KindPhone is a telephone number. Its key is E.164 ("+14155551234")
	// when the country is known, else the bare digits ("0612345678") — see
	// Normalize.
	KindPhone Kind = "phone"
	// KindEmail is an e-mail address, keyed in lower case.
	KindEmail Kind = "email"
	// KindShortCode is a 3–6 digit number without a country code (SMS short
	// codes such as 32665), keyed by its digits.
	KindShortCode Kind = "shortcode"
	// KindAlnum is an alphanumeric sender id ("AMAZON", "Uber"), kept as is.
	KindAlnum Kind = "alnum"
	// KindInvalid is anything else; its key is empty.
	KindInvalid Kind = "invalid"
)

// DefaultRegion is the region used when none is configured. It is the region of
// the project's examples (docs/tools.md, docs/contacts.md); users elsewhere set
// TIDINGS_REGION.
const DefaultRegion = "US"

// Limits that keep normalisation cheap on hostile input.
const (
	maxHandleLen  = 320 // longest e-mail address RFC 5321 allows (64 + 1 + 255)
	maxPhoneDigit = 20  // E.164 allows 15; a little slack for prefixes
	maxAlnumRunes = 20  // alphanumeric sender ids are at most 11 characters on GSM
	cacheCap      = 1 << 16
)

// normalized is the result of normalising one handle.
type normalized struct {
	key  string
	kind Kind
	// national is, for phones, the national significant number (E.164
	// keys) or the digits without leading zeros (country unknown). It lets
	// a card typed in a foreign national format match an E.164 handle.
	national string
}

// e164 reports whether the key is an E.164 number.
func (n normalized) e164() bool { return n.kind == KindPhone && strings.HasPrefix(n.key, "+") }

// Normalize returns the matching key and kind of a handle as it appears in
// a message database or on a card.
//
// Phones become E.164 using region (an ISO 3166 code such as "US", "FR";
// empty means DefaultRegion) for numbers typed without a country code. A
// number written with "+" (or the region's international prefix, or "00"
// when that reading is the only valid one) keeps its own country. When the
// country cannot be determined — "030 1234567" with region US — the key is
// the bare digits without "+", never a made-up +1 number; such keys still
// match by the last ten digits and by national number (see Book.Resolve).
// E-mail addresses are lower-cased; "tel:", "sms:" and "mailto:" prefixes
// and phone extensions are dropped. 3–6 digit numbers without "+" are short
// codes and alphanumeric sender ids are returned unchanged. Anything else is
// KindInvalid with an empty key.
//
// Results are cached (phonenumbers parsing costs ~20 µs); Normalize is safe
// for concurrent use.
func Normalize(handle, region string) (key string, kind Kind) {
	n := normalize(handle, region)
	return n.key, n.kind
}

// Last10 returns the last ten digits of a phone-like handle, the bridge's
// matching rule (docs/contacts.md, "Handles") ("+1-555-123-4567", "5551234567"
// and "(555) 123-4567" all give "5551234567"). A handle with fewer than ten
// digits gives all its digits; an e-mail address or a handle that is not a
// number gives "".
func Last10(handle string) string {
	s := stripScheme(strings.TrimSpace(handle))
	if strings.IndexByte(s, '@') >= 0 {
		return ""
	}
	digits, _, ok := scanPhone(s)
	if !ok {
		return ""
	}
	if len(digits) > 10 {
		return digits[len(digits)-10:]
	}
	return digits
}

// ValidRegion reports whether region is a region code phonenumbers knows
// ("US", "FR", "DE", "GB", …), case-insensitively.
func ValidRegion(region string) bool {
	return phonenumbers.GetSupportedRegions()[strings.ToUpper(strings.TrimSpace(region))]
}

// RegionFromEnv returns the default region: TIDINGS_REGION when set and
// valid, else the country of the POSIX locale (LC_ALL, LC_MESSAGES, LANG,
// e.g. "fr_FR.UTF-8" → "FR"), else DefaultRegion. getenv is os.Getenv in
// production and a map lookup in tests.
func RegionFromEnv(getenv func(string) string) string {
	if r := strings.ToUpper(strings.TrimSpace(getenv("TIDINGS_REGION"))); ValidRegion(r) {
		return r
	}
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		loc := getenv(v)
		if i := strings.IndexAny(loc, ".@"); i >= 0 {
			loc = loc[:i]
		}
		if i := strings.IndexAny(loc, "_-"); i >= 0 {
			if r := strings.ToUpper(loc[i+1:]); len(r) == 2 && ValidRegion(r) {
				return r
			}
		}
	}
	return DefaultRegion
}

// canonRegion upper-cases a region and applies the default.
func canonRegion(region string) string {
	region = strings.TrimSpace(region)
	if region == "" {
		return DefaultRegion
	}
	for i := 0; i < len(region); i++ {
		if c := region[i]; c >= 'a' && c <= 'z' {
			return strings.ToUpper(region)
		}
	}
	return region
}

// normalize is Normalize with the details Book needs. Answers are cached
// per (region, handle) in front of the per-digits phone cache, so a handle
// seen before costs one map lookup.
func normalize(handle, region string) normalized {
	region = canonRegion(region)
	if len(handle) > maxHandleLen {
		return normalized{kind: KindInvalid}
	}
	k := rawKey{region, handle}
	if n, ok := raws.load(k); ok {
		return n
	}
	n := normalizeSlow(handle, region)
	raws.store(rawKey{region, strings.Clone(handle)}, n)
	return n
}

func normalizeSlow(handle, region string) normalized {
	s := strings.TrimSpace(handle)
	if s == "" || !utf8.ValidString(s) {
		return normalized{kind: KindInvalid}
	}
	s = stripScheme(s)
	if strings.IndexByte(s, '@') >= 0 {
		return normalizeEmail(s)
	}
	if digits, plus, ok := scanPhone(s); ok {
		switch {
		case len(digits) > maxPhoneDigit:
			return normalized{kind: KindInvalid}
		case !plus && len(digits) >= 3 && len(digits) <= 6:
			return normalized{key: digits, kind: KindShortCode}
		case len(digits) < 3 || (plus && len(digits) < 4):
			return normalized{kind: KindInvalid}
		}
		return phones.get(phoneKey{region, digits, plus})
	}
	if isAlnumSender(s) {
		return normalized{key: s, kind: KindAlnum}
	}
	return normalized{kind: KindInvalid}
}

// stripScheme removes a URI scheme that wraps a handle.
func stripScheme(s string) string {
	for _, p := range []string{"tel:", "sms:", "mailto:", "imessage:"} {
		if len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
			return strings.TrimSpace(s[len(p):])
		}
	}
	return s
}

func normalizeEmail(s string) normalized {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return normalized{kind: KindInvalid}
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune("<>,;:\"()[]\\", r) {
			return normalized{kind: KindInvalid}
		}
	}
	return normalized{key: strings.ToLower(s), kind: KindEmail}
}

// isAlnumSender reports whether s looks like an alphanumeric sender id: a
// short run of letters, digits and a little punctuation with at least one
// letter.
func isAlnumSender(s string) bool {
	n, letter := 0, false
	for _, r := range s {
		n++
		switch {
		case n > maxAlnumRunes:
			return false
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r), r == ' ', r == '.', r == '-', r == '_', r == '&', r == '\'', r == '!':
		default:
			return false
		}
	}
	return letter
}

// scanPhone extracts the digits of a phone-like string. It accepts a
// leading "+", visual separators and a trailing extension ("x12",
// "ext. 12", ";ext=12", "#12", ",12"), which it drops. ok is false when the
// string has no digits or contains anything else, such as letters.
func scanPhone(s string) (digits string, plus bool, ok bool) {
	var buf [32]byte
	d := buf[:0]
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			d = append(d, byte(r))
		case r == '+' || r == '\uff0b':
			// Only separators may precede the plus: "(+44) 7911 123456".
			if len(d) > 0 || plus {
				return "", false, false
			}
			plus = true
		case isPhoneSeparator(r):
		case len(d) > 0 && (r == 'x' || r == 'X' || r == '#' || r == ';' || r == ','):
			return string(d), plus, true
		case len(d) > 0 && (r == 'e' || r == 'E') && len(s)-i >= 3 && strings.EqualFold(s[i:i+3], "ext"):
			return string(d), plus, true
		case r > unicode.MaxASCII && unicode.IsDigit(r):
			v := phonenumbers.NormalizeDigitsOnly(string(r))
			if len(v) != 1 {
				return "", false, false
			}
			d = append(d, v[0])
		default:
			return "", false, false
		}
		if len(d) > 64 {
			return "", false, false
		}
	}
	if len(d) == 0 {
		return "", false, false
	}
	return string(d), plus, true
}

func isPhoneSeparator(r rune) bool {
	switch r {
	case ' ', '\t', '-', '.', '(', ')', '/', '[', ']', '\u00a0', '\u2212', '\u202f', '\u3000', '\u30fc', '\uff0d':
		return true
	}
	return (r >= '\u2000' && r <= '\u200b') || (r >= '\u2010' && r <= '\u2015')
}

// cache is a concurrency-safe memo with a size bound: when full it is
// cleared, which costs recomputation but never unbounded memory under
// hostile input.
type cache[K comparable] struct {
	mu  sync.RWMutex
	m   map[K]normalized
	max int
}

func newCache[K comparable](max int) *cache[K] {
	return &cache[K]{m: make(map[K]normalized), max: max}
}

func (c *cache[K]) load(k K) (normalized, bool) {
	c.mu.RLock()
	n, ok := c.m[k]
	c.mu.RUnlock()
	return n, ok
}

func (c *cache[K]) store(k K, n normalized) {
	c.mu.Lock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = n
	c.mu.Unlock()
}

// rawKey caches whole handles; phoneKey caches phonenumbers results per
// digit string, so "(415) 555-1234" and "415.555.1234" share one parse.
type rawKey struct{ region, handle string }

type phoneKey struct {
	region string
	digits string
	plus   bool
}

type phoneCache struct{ *cache[phoneKey] }

func (c phoneCache) get(k phoneKey) normalized {
	if n, ok := c.load(k); ok {
		return n
	}
	n := parsePhone(k.region, k.digits, k.plus)
	c.store(k, n)
	return n
}

var (
	raws   = newCache[rawKey](cacheCap)
	phones = phoneCache{newCache[phoneKey](cacheCap)}
)

// parsePhone turns digits into an E.164 key, or the bare digits when the
// country cannot be determined without guessing.
func parsePhone(region, digits string, plus bool) normalized {
	if plus {
		num, err := phonenumbers.Parse("+"+digits, region)
		if err != nil || phonenumbers.IsPossibleNumberWithReason(num) == phonenumbers.TOO_SHORT {
			return normalized{kind: KindInvalid}
		}
		return e164(num)
	}
	num, err := phonenumbers.Parse(digits, region)
	if err == nil && phonenumbers.IsValidNumber(num) {
		return e164(num)
	}
	// Written internationally but without "+": "0049 30 1234567" from a US
	// user, or "33612345678" exported without its plus. Only a valid reading
	// is accepted, so a local number is never reinterpreted as foreign.
	if alt := strings.TrimPrefix(digits, "00"); alt != digits || len(digits) >= 11 {
		if n2, err := phonenumbers.Parse("+"+alt, region); err == nil && phonenumbers.IsValidNumber(n2) {
			return e164(n2)
		}
	}
	// A possible but unassigned number of the region (fictional 555 numbers)
	// is still that region's; a leading zero the region does not use
	// ("06 12 34 56 78" read as US) means a foreign national format.
	if err == nil && !num.GetItalianLeadingZero() && phonenumbers.IsPossibleNumberWithReason(num) == phonenumbers.IS_POSSIBLE {
		return e164(num)
	}
	return normalized{key: digits, kind: KindPhone, national: strings.TrimLeft(digits, "0")}
}

func e164(num *phonenumbers.PhoneNumber) normalized {
	return normalized{
		key:      phonenumbers.Format(num, phonenumbers.E164),
		kind:     KindPhone,
		national: strings.TrimLeft(phonenumbers.GetNationalSignificantNumber(num), "0"),
	}
}
