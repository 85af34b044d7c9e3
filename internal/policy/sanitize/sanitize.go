// Package sanitize removes characters that hide text from a person but not
// from a model, and wraps untrusted content so it cannot forge its own
// boundary (GUARD-01).
//
// Messages, names and titles are written by other people. Invisible,
// bidirectional-control and tag characters let them smuggle instructions a
// reader never sees (OWASP LLM01: "prompt injections do not need to be
// human-visible"), so every string that came from outside passes through
// [Sanitize] (bodies) or [Field] (names, titles, filenames, handles) before
// it is shown to a model, and message content is then delivered inside
// [Wrap].
//
// Rules (both functions):
//   - Invalid UTF-8 becomes U+FFFD (one per run of invalid bytes).
//   - Always removed: U+200B, U+200C, U+00AD, U+FEFF, U+180E, U+2060–2065,
//     U+206A–206F, U+200E, U+200F, U+061C, bidi controls U+202A–202E and
//     U+2066–2069, interlinear annotation U+FFF9–FFFB, Hangul fillers
//     U+3164 and U+FFA0, Khmer U+17B4–17B5, musical format controls
//     U+1D173–1D17A, the noncharacters U+FFFE and U+FFFF, and the whole tag
//     block U+E0000–E007F.
//   - Kept exception for tags: the three RGI subdivision flags (England,
//     Scotland, Wales: U+1F3F4 followed by the tag letters gbeng, gbsct or
//     gbwls and U+E007F). Any other tag sequence loses its tags and keeps the
//     visible black flag. Well-formed but non-RGI tag sequences are also
//     stripped because no vendor renders them and each one would otherwise
//     carry up to seven hidden letters.
//   - ZWJ U+200D is kept only between two emoji (after an emoji, an emoji
//     presentation selector or a skin-tone modifier, and before an emoji);
//     anywhere else it is invisible and goes. (Indic and Arabic-script text
//     loses its optional joiners; the words stay readable.)
//   - Variation selectors are kept only right after a base they can apply
//     to and never in a run: U+FE0E/U+FE0F after an emoji or a keycap base
//     (# * 0–9); U+FE00–FE0D after a Han ideograph or a math symbol;
//     U+E0100–E01EF after a Han ideograph (ideographic variation
//     sequences); Mongolian selectors U+180B–180D, U+180F after a Mongolian
//     letter. Everything else is an orphan and goes.
//   - Controls: [Sanitize] keeps \n and \t, turns \r\n, \r, U+0085, U+2028
//     and U+2029 into \n, and drops every other C0/C1 control and DEL.
//     [Field] is single-line: every line break and tab becomes one space and
//     every other control is dropped.
//
// Both functions are idempotent, return clean ASCII input unchanged without
// allocating, and copy only from the first character that changes.
//
// "Emoji" here is an approximation of Unicode's Extended_Pictographic
// property by code-point ranges (the standard library has no emoji tables);
// it is deliberately a superset, because it only decides whether a joiner or
// a presentation selector next to a visible symbol survives.
package sanitize

import (
	"unicode"
	"unicode/utf8"
)

// Sanitize cleans message content (multi-line text): see the package
// documentation for the rules. It keeps \n and \t.
func Sanitize(s string) string { return clean(s, false) }

// Field cleans a single-line value that came from outside: a contact or
// sender name, a group title, a filename, a handle, a link. It applies the
// rules of [Sanitize] and also turns line breaks and tabs into spaces, so a
// name can never start a new row of output.
func Field(s string) string { return clean(s, true) }

// asciiClean reports whether byte b (< 0x80) is kept unchanged.
func asciiClean(b byte, field bool) bool {
	if b >= 0x20 && b < 0x7f {
		return true
	}
	return !field && (b == '\n' || b == '\t')
}

// out accumulates the result lazily: buf stays nil while the output equals
// the input, so unchanged strings cost no allocation.
type out struct {
	src string
	buf []byte
}

// start switches to copying at input offset i (everything before i kept).
func (o *out) start(i int) {
	if o.buf == nil {
		o.buf = make([]byte, 0, len(o.src)+8)
		o.buf = append(o.buf, o.src[:i]...)
	}
}

func clean(s string, field bool) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf && asciiClean(s[i], field) {
		i++
	}
	if i == len(s) {
		return s
	}
	o := out{src: s}
	// last is the last rune written to the output (-1 at the start); it is
	// the context for joiners and variation selectors.
	last := rune(-1)
	if i > 0 {
		last = rune(s[i-1])
	}
	prevInvalid := false
	for i < len(s) {
		b := s[i]
		if b < utf8.RuneSelf {
			prevInvalid = false
			if asciiClean(b, field) {
				if o.buf != nil {
					o.buf = append(o.buf, b)
				}
				last = rune(b)
				i++
				continue
			}
			var repl byte // 0 = drop
			switch b {
			case '\n', '\t':
				repl = ' ' // field only; bodies keep them (asciiClean)
			case '\r':
				if i+1 < len(s) && s[i+1] == '\n' {
					repl = 0 // the \n that follows stands for the pair
				} else if field {
					repl = ' '
				} else {
					repl = '\n'
				}
			}
			o.start(i)
			if repl != 0 {
				o.buf = append(o.buf, repl)
				last = rune(repl)
			}
			i++
			continue
		}

		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			o.start(i)
			if !prevInvalid {
				o.buf = append(o.buf, "\uFFFD"...)
				last = utf8.RuneError
			}
			prevInvalid = true
			i++
			continue
		}
		prevInvalid = false

		if r == blackFlag {
			if m := rgiTagSequence(s[i+n:]); m > 0 {
				if o.buf != nil {
					o.buf = append(o.buf, s[i:i+n+m]...)
				}
				last = cancelTag
				i += n + m
				continue
			}
		}

		keep, repl := true, rune(-1)
		switch {
		case r == 0x85 || r == 0x2028 || r == 0x2029:
			if field {
				repl = ' '
			} else {
				repl = '\n'
			}
		case r < 0xA0: // C1 controls
			keep = false
		case alwaysRemove(r):
			keep = false
		case r == zwj:
			next, _ := utf8.DecodeRuneInString(s[i+n:])
			keep = joinsEmojiLeft(last) && isEmoji(next)
		case isVariationSelector(r):
			keep = selectorAllowed(last, r)
		}
		if keep && repl < 0 {
			if o.buf != nil {
				o.buf = append(o.buf, s[i:i+n]...)
			}
			last = r
			i += n
			continue
		}
		o.start(i)
		if repl >= 0 {
			o.buf = utf8.AppendRune(o.buf, repl)
			last = repl
		}
		i += n
	}
	if o.buf == nil {
		return s
	}
	return string(o.buf)
}

const (
	zwj       = 0x200D
	blackFlag = 0x1F3F4
	cancelTag = 0xE007F
)

// rgiTags are the tag-letter payloads of the recommended-for-general-
// interchange subdivision flags, each followed by CANCEL TAG.
var rgiTags = [...]string{"gbeng", "gbsct", "gbwls"}

// rgiTagSequence returns the byte length of an RGI tag payload plus CANCEL
// TAG at the start of s, or 0 when s does not start with one.
func rgiTagSequence(s string) int {
	for _, want := range rgiTags {
		j := 0
		ok := true
		for k := 0; k < len(want); k++ {
			r, n := utf8.DecodeRuneInString(s[j:])
			if r != 0xE0000+rune(want[k]) {
				ok = false
				break
			}
			j += n
		}
		if !ok {
			continue
		}
		if r, n := utf8.DecodeRuneInString(s[j:]); r == cancelTag {
			return j + n
		}
	}
	return 0
}

// alwaysRemove reports whether r is removed in every context.
func alwaysRemove(r rune) bool {
	switch {
	case r == 0x00AD, r == 0x061C, r == 0x180E,
		r == 0x200B, r == 0x200C, r == 0x200E, r == 0x200F,
		r == 0xFEFF, r == 0x3164, r == 0xFFA0,
		r == 0xFFFE, r == 0xFFFF:
		return true
	case r >= 0x202A && r <= 0x202E: // LRE RLE PDF LRO RLO
		return true
	case r >= 0x2060 && r <= 0x206F: // word joiner, invisible operators, isolates, deprecated format
		return true
	case r >= 0xFFF9 && r <= 0xFFFB: // interlinear annotation
		return true
	case r == 0x17B4 || r == 0x17B5:
		return true
	case r >= 0x1D173 && r <= 0x1D17A:
		return true
	case r >= 0xE0000 && r <= 0xE007F: // tag block (RGI flags handled before)
		return true
	}
	return false
}

// ShouldRemove reports whether r is removed wherever it occurs. Runes that
// survive only in some contexts (ZWJ, variation selectors, tags inside an
// RGI flag) report false here; see [Forbidden] for the strict check.
func ShouldRemove(r rune) bool {
	if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xA0 {
		return true
	}
	return alwaysRemove(r) || r == 0x2028 || r == 0x2029
}

func isVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF ||
		r >= 0x180B && r <= 0x180D || r == 0x180F
}

// selectorAllowed reports whether variation selector vs may follow base.
func selectorAllowed(base, vs rune) bool {
	switch {
	case vs == 0xFE0E || vs == 0xFE0F:
		return isEmoji(base) || isKeycapBase(base)
	case vs >= 0xFE00 && vs <= 0xFE0D:
		return unicode.Is(unicode.Han, base) || unicode.Is(unicode.Sm, base)
	case vs >= 0xE0100 && vs <= 0xE01EF:
		return unicode.Is(unicode.Han, base)
	default: // Mongolian free variation selectors
		return unicode.Is(unicode.Mongolian, base) && unicode.IsLetter(base)
	}
}

func isKeycapBase(r rune) bool { return r == '#' || r == '*' || r >= '0' && r <= '9' }

// joinsEmojiLeft reports whether a ZWJ may follow r: an emoji, an emoji
// presentation selector or a skin-tone modifier.
func joinsEmojiLeft(r rune) bool {
	return isEmoji(r) || r == 0xFE0F || r >= 0x1F3FB && r <= 0x1F3FF
}

// isEmoji approximates Extended_Pictographic (plus regional indicators and
// skin-tone modifiers, which lie inside the ranges) by code-point ranges.
func isEmoji(r rune) bool {
	if r < 0xA9 {
		return false
	}
	if r >= 0x1F000 {
		return r <= 0x1FAFF || r >= 0x1FC00 && r <= 0x1FFFD
	}
	switch {
	case r == 0xA9, r == 0xAE, r == 0x203C, r == 0x2049, r == 0x2122, r == 0x2139,
		r >= 0x2194 && r <= 0x2199, r == 0x21A9, r == 0x21AA,
		r == 0x231A, r == 0x231B, r == 0x2328, r == 0x2388, r == 0x23CF,
		r >= 0x23E9 && r <= 0x23F3, r >= 0x23F8 && r <= 0x23FA,
		r == 0x24C2, r == 0x25AA, r == 0x25AB, r == 0x25B6, r == 0x25C0,
		r >= 0x25FB && r <= 0x25FE,
		r >= 0x2600 && r <= 0x27BF,
		r == 0x2934, r == 0x2935, r >= 0x2B05 && r <= 0x2B07,
		r == 0x2B1B, r == 0x2B1C, r == 0x2B50, r == 0x2B55,
		r == 0x3030, r == 0x303D, r == 0x3297, r == 0x3299:
		return true
	}
	return false
}

// Forbidden reports whether s contains a rune that sanitized output never
// contains outside the contexts the rules allow: a rune [ShouldRemove]
// reports, an invalid byte, a tag outside an RGI flag, a joiner that does
// not sit between emoji, or an orphaned or repeated variation selector. It
// is the oracle the tests and fuzz targets use; it returns the offending
// rune and true.
func Forbidden(s string) (rune, bool) {
	last := rune(-1)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			return r, true
		}
		if r == blackFlag {
			if m := rgiTagSequence(s[i+n:]); m > 0 {
				i += n + m
				last = cancelTag
				continue
			}
		}
		switch {
		case r == '\r' || ShouldRemove(r):
			return r, true
		case r == zwj:
			next, _ := utf8.DecodeRuneInString(s[i+n:])
			if !joinsEmojiLeft(last) || !isEmoji(next) {
				return r, true
			}
		case isVariationSelector(r):
			if !selectorAllowed(last, r) {
				return r, true
			}
		}
		last = r
		i += n
	}
	return 0, false
}
