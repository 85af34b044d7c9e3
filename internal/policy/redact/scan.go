package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// span is a byte range [s, e).
type span struct{ s, e int }

// doc is one text prepared for the rules: normalized, with its ASCII digit
// runs located once and a lower-cased copy made on first use.
type doc struct {
	s        string
	lowered  string
	hasLower bool
	runs     []span // maximal runs of ASCII digits
	ndigits  int
	maxRun   int // longest run of token characters that holds a digit or an underscore
	runBuf   [24]span
}

// lower returns s with ASCII letters lower-cased (same length and offsets).
func (d *doc) lower() string {
	if !d.hasLower {
		d.lowered = lowerASCII(d.s)
		d.hasLower = true
	}
	return d.lowered
}

// backMap maps offsets of a normalized text to the original text. A nil
// backMap is the identity.
type backMap struct {
	start, end []int // original start and end of the character that produced each normalized byte
	n          int   // len(original)
}

func (b *backMap) span(s, e int) (int, int) {
	if b == nil || len(b.start) == 0 {
		return s, e
	}
	os := b.n
	if s < len(b.start) {
		os = b.start[s]
	}
	oe := b.n
	if e > 0 && e-1 < len(b.end) {
		oe = b.end[e-1]
	}
	return os, oe
}

// prepare normalizes text for matching and indexes its digits.
//
// Normalization undoes tricks and typography that would otherwise hide a
// value from the rules while leaving it readable (docs/redaction.md,
// "Hidden and typographic characters" and "Separators"); it is the one
// place separators are normalized, so every rule sees the same text:
//   - format characters that render as nothing (zero-width spaces and
//     joiners, soft hyphens, bidi marks, tag characters) are dropped:
//     sanitization removes them later, which would reassemble a number
//     split by them;
//   - every Unicode space (class Zs: no-break, thin, figure, ideographic …)
//     and the ASCII tab, vertical tab and form feed become an ASCII space;
//   - every Unicode dash (class Pd: en and em dashes, U+2010 hyphen,
//     non-breaking hyphen, full-width hyphen-minus …) and the minus sign
//     U+2212 become an ASCII hyphen-minus;
//   - every decimal digit of another script (class Nd: full-width,
//     Arabic-Indic, Extended Arabic-Indic, Devanagari, Bengali, Thai,
//     mathematical …) becomes the ASCII digit of the same value, so the
//     checksums read "٤١١١ ١١١١ ١١١١ ١١١١" as the card it is;
//   - between two digits, a run of blanks holding no line break ("4111  1111")
//     becomes one space, and a run holding exactly one line break ("4111
//     1111 \r\n1111") becomes one "\n"; two or more line breaks are a new
//     paragraph and stay as they are.
//
// Offsets are mapped back to text through the returned backMap.
func prepare(text string) (*doc, *backMap) {
	d := &doc{s: text}
	var back *backMap
	if needsNormalize(text) {
		var bm backMap
		d.s, bm = normalize(text)
		back = &bm
	}
	if strings.Contains(d.s, "[REDACTED-") {
		d.s = neutralizeMasks(d.s)
	}
	d.runs = d.runBuf[:0]
	s := d.s
	tokRun, tokSignal := 0, false
	note := func() {
		if tokSignal && tokRun > d.maxRun {
			d.maxRun = tokRun
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c >= '0' && c <= '9' {
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			d.runs = append(d.runs, span{i, j})
			d.ndigits += j - i
			tokRun += j - i
			tokSignal = true
			i = j
			continue
		}
		if isTokenByte(c) {
			tokRun++
			if c == '_' {
				tokSignal = true
			}
		} else {
			note()
			tokRun, tokSignal = 0, false
		}
		i++
	}
	note()
	return d, back
}

// maskFill replaces the bytes of masks already in a text before matching.
// It is neither a word character, a digit, a space nor punctuation any rule
// looks for, so "[REDACTED-2FA]" cannot act as a "2FA" keyword and
// "[REDACTED-DOB]" cannot label a date.
const maskFill = 0x1A

func neutralizeMasks(s string) string {
	spans := maskSpans(s)
	if len(spans) == 0 {
		return s
	}
	b := []byte(s)
	for _, p := range spans {
		for i := p[0]; i < p[1]; i++ {
			b[i] = maskFill
		}
	}
	return string(b)
}

func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '+' || c == '/' || c == '=' || c == '.'
}

// invisible reports format characters that render as nothing.
func invisible(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x180E, r == 0xFEFF, r == 0x061C:
		return true
	case r >= 0x200B && r <= 0x200F:
		return true
	case r >= 0x202A && r <= 0x202E:
		return true
	case r >= 0x2060 && r <= 0x2069:
		return true
	case r >= 0xE0000 && r <= 0xE007F:
		return true
	}
	return false
}

// spaceLike reports spaces other than the ASCII space: every Unicode space
// separator (Zs) and the ASCII tab, vertical tab and form feed.
func spaceLike(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '\t' || r == '\v' || r == '\f'
	}
	return unicode.Is(unicode.Zs, r)
}

// dashLike reports dashes other than the ASCII hyphen-minus: every Unicode
// dash punctuation character (Pd) and the minus sign U+2212.
func dashLike(r rune) bool {
	return r >= utf8.RuneSelf && (r == 0x2212 || unicode.Is(unicode.Pd, r))
}

// otherDigit returns the value of r when r is a decimal digit (class Nd)
// other than the ASCII ones. Unicode encodes every Nd digit in contiguous
// runs of ten, zero to nine, so the value is the distance from the start of
// r's range in the Nd table, modulo ten (adjacent runs, such as the five
// mathematical digit sets, share one table range).
func otherDigit(r rune) (byte, bool) {
	if r < 0x0660 { // ARABIC-INDIC DIGIT ZERO, the first Nd digit after ASCII
		return 0, false
	}
	if r <= 0xFFFF {
		for _, rg := range unicode.Nd.R16 {
			if rune(rg.Hi) < r {
				continue
			}
			if rune(rg.Lo) > r {
				return 0, false
			}
			return byte((r - rune(rg.Lo)) % 10), true
		}
		return 0, false
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Hi) < r {
			continue
		}
		if rune(rg.Lo) > r {
			return 0, false
		}
		return byte((r - rune(rg.Lo)) % 10), true
	}
	return 0, false
}

func isOtherDigit(r rune) bool {
	_, ok := otherDigit(r)
	return ok
}

// lineBreaks returns how many line breaks the blank r is (a paragraph
// separator counts as two), and whether r is a blank at all: a space, a
// tab or a line break.
func lineBreaks(r rune) (int, bool) {
	switch {
	case r == ' ' || spaceLike(r):
		return 0, true
	case r == '\n' || r == '\r' || r == 0x85 || r == 0x2028:
		return 1, true
	case r == 0x2029:
		return 2, true
	}
	return 0, false
}

// needsNormalize reports whether normalize would change text. It is a
// cheap scan: ASCII text needs it only for tabs, carriage returns and two
// blanks in a row after a digit.
func needsNormalize(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '\t', '\v', '\f', '\r':
				return true
			case ' ', '\n':
				if i > 0 && isDigit(s[i-1]) && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == '\n') {
					return true
				}
			}
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if invisible(r) || spaceLike(r) || dashLike(r) || isOtherDigit(r) || r == 0x85 || r == 0x2028 || r == 0x2029 {
			return true
		}
		i += w - 1
	}
	return false
}

func normalize(text string) (string, backMap) {
	var b strings.Builder
	b.Grow(len(text))
	bm := backMap{n: len(text), start: make([]int, 0, len(text)), end: make([]int, 0, len(text))}
	one := func(c byte, i, j int) {
		b.WriteByte(c)
		bm.start = append(bm.start, i)
		bm.end = append(bm.end, j)
	}
	for i := 0; i < len(text); {
		r, w := utf8.DecodeRuneInString(text[i:])
		if _, blank := lineBreaks(r); blank && b.Len() > 0 && isDigit(b.String()[b.Len()-1]) {
			if j, sep, ok := digitGap(text, i); ok {
				one(sep, i, j)
				i = j
				continue
			}
		}
		switch {
		case invisible(r):
			// dropped
		case spaceLike(r):
			one(' ', i, i+w)
		case dashLike(r):
			one('-', i, i+w)
		case isOtherDigit(r):
			v, _ := otherDigit(r)
			one('0'+v, i, i+w)
		default:
			b.WriteString(text[i : i+w])
			for k := 0; k < w; k++ {
				bm.start = append(bm.start, i)
				bm.end = append(bm.end, i+w)
			}
		}
		i += w
	}
	return b.String(), bm
}

// digitGap looks at the blanks (and invisible characters) starting at i,
// right after a digit. When a digit follows them and they hold at most one
// line break ("\r\n" is one), it returns their end and the one separator
// that stands for them: "\n" for a line break, else a space.
func digitGap(text string, i int) (int, byte, bool) {
	breaks, j := 0, i
	for j < len(text) {
		r, w := utf8.DecodeRuneInString(text[j:])
		n, blank := lineBreaks(r)
		if !blank && !invisible(r) {
			break
		}
		if r == '\r' && strings.HasPrefix(text[j+w:], "\n") {
			w++
		}
		breaks += n
		j += w
	}
	if j == len(text) || breaks > 1 {
		return 0, 0, false
	}
	if r, _ := utf8.DecodeRuneInString(text[j:]); !isDigit(text[j]) && !isOtherDigit(r) {
		return 0, 0, false
	}
	if breaks == 1 {
		return j, '\n', true
	}
	return j, ' ', true
}

func lowerASCII(s string) string {
	i := 0
	for i < len(s) && !(s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if b[i] >= 'A' && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isDigit(c) || isAlpha(c) }

// wordByte reports bytes that belong to words for label matching: ASCII
// letters and any byte of a non-ASCII character (so "número" is one word).
func wordByte(c byte) bool { return isAlpha(c) || c >= utf8.RuneSelf }

// letterStart returns the start of the run of letters (any script) that
// ends at pos.
func letterStart(s string, pos int) int {
	for pos > 0 {
		if c := s[pos-1]; c < utf8.RuneSelf {
			if !isAlpha(c) {
				break
			}
			pos--
			continue
		}
		r, w := utf8.DecodeLastRuneInString(s[:pos])
		if !unicode.IsLetter(r) {
			break
		}
		pos -= w
	}
	return pos
}

// letterEnd returns the end of the run of letters (any script) that starts
// at pos.
func letterEnd(s string, pos int) int {
	for pos < len(s) {
		if c := s[pos]; c < utf8.RuneSelf {
			if !isAlpha(c) {
				break
			}
			pos++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[pos:])
		if !unicode.IsLetter(r) {
			break
		}
		pos += w
	}
	return pos
}

// prevWords returns up to n words that end before pos in lower, nearest
// first, looking back at most limit bytes. Digits end the search: a label
// never reaches across another number.
func prevWords(lower string, pos, n, limit int) []string {
	var out []string
	lo := pos - limit
	if lo < 0 {
		lo = 0
	}
	i := pos
	for len(out) < n && i > lo {
		for i > lo && !wordByte(lower[i-1]) {
			if isDigit(lower[i-1]) {
				return out
			}
			i--
		}
		j := i
		for i > lo && wordByte(lower[i-1]) {
			i--
		}
		if j > i {
			out = append(out, lower[i:j])
		}
	}
	return out
}

// nextWord returns the first word at or after pos (skipping spaces and
// punctuation but not digits), and where it ends.
func nextWord(lower string, pos, limit int) (string, int) {
	hi := pos + limit
	if hi > len(lower) {
		hi = len(lower)
	}
	i := pos
	for i < hi && !wordByte(lower[i]) {
		if isDigit(lower[i]) {
			return "", i
		}
		i++
	}
	j := i
	for j < hi && wordByte(lower[j]) {
		j++
	}
	return lower[i:j], j
}

// sentenceBreak reports whether s contains the end of a sentence: . ! or ?
// followed by whitespace (or at the end of s), or a CJK full stop.
func sentenceBreak(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.', '!', '?':
			if i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n' || s[i+1] == '\t' {
				return true
			}
		case 0xE3, 0xEF:
			if strings.HasPrefix(s[i:], "。") || strings.HasPrefix(s[i:], "！") || strings.HasPrefix(s[i:], "？") {
				return true
			}
		}
	}
	return false
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}

// digitsOf returns the ASCII digits of s.
func digitsOf(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			b = append(b, s[i])
		}
	}
	return string(b)
}

// luhn reports whether the digit string passes the Luhn checksum.
func luhn(digits string) bool {
	if len(digits) < 2 {
		return false
	}
	sum, dbl := 0, false
	for i := len(digits) - 1; i >= 0; i-- {
		v := int(digits[i] - '0')
		if dbl {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
		dbl = !dbl
	}
	return sum%10 == 0
}

// currencyBefore reports a currency sign or code right before pos.
func currencyBefore(s string, pos int) bool {
	i := pos
	for i > 0 && s[i-1] == ' ' && pos-i < 2 {
		i--
	}
	t := s[:i]
	for _, c := range []string{"$", "€", "£", "¥", "₹", "₩", "₽", "₺", "rs", "rs.", "inr", "usd", "eur", "gbp", "r$"} {
		if len(t) >= len(c) && strings.EqualFold(t[len(t)-len(c):], c) {
			return true
		}
	}
	return false
}

// oneOf reports whether w is in set.
func oneOf(w string, set ...string) bool {
	for _, x := range set {
		if w == x {
			return true
		}
	}
	return false
}
