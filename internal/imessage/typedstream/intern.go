package typedstream

// Pre-boxed values for what almost every attributedBody repeats: attribute
// keys, one-character C strings (NSNumber type codes) and small NSNumbers.
// Boxing a string or struct into a Value allocates; sharing these
// immutable values keeps the hot path to a handful of allocations.

var internedStrings = func() map[string]Value {
	m := map[string]Value{}
	for _, k := range []string{
		KeyPart, KeyFileTransferGUID, KeyFilename, KeyInlineWidth, KeyInlineHeight, KeyWritingDirection,
		KeyMention, KeyLink, KeyLinkIsRichLink, KeyDataDetected, KeyOneTimeCode, KeyPhoneNumber, KeyAddress,
		KeyMoney, KeyCalendarEvent, KeyBold, KeyItalic, KeyUnderline, KeyStrikethrough, KeyTextEffect,
		KeyTranscription, "__kIMEmojiImageAttributeName", "__kIMBreadcrumbTextMarkerAttributeName",
		"__kIMBreadcrumbTextOptionFlags", "code", "displayCode", "",
	} {
		m[k] = String(k)
	}
	return m
}()

// internedByLen holds the interned strings by length: finding one costs a
// length check and a comparison or two, no hashing.
var internedByLen = func() (t [48][]Value) {
	for s, v := range internedStrings {
		if len(s) >= len(t) {
			panic("typedstream: interned string too long: " + s)
		}
		t[len(s)] = append(t[len(s)], v)
	}
	return t
}()

// stringValue returns the String for valid UTF-8 bytes, shared when known.
func stringValue(b []byte) Value {
	if len(b) < len(internedByLen) {
		for _, v := range internedByLen[len(b)] {
			if string(v.(String)) == string(b) {
				return v
			}
		}
	}
	return String(b)
}

// emptyData is the shared empty NSData value (it has no bytes to share).
var emptyData Value = Data{}

var oneCharCStrings = func() (t [256]Value) {
	for i := 1; i < 256; i++ {
		t[i] = CString([]byte{byte(i)})
	}
	return t
}()

// cstringValue returns the CString for b (which has no NUL).
func cstringValue(b []byte) Value {
	if len(b) == 1 {
		return oneCharCStrings[b[0]]
	}
	return CString(b)
}

const smallMin, smallMax = -1, 63

var smallNumbers = func() (t [256]*[smallMax - smallMin + 1]Value) {
	for _, c := range []byte("csilq") {
		var row [smallMax - smallMin + 1]Value
		for v := smallMin; v <= smallMax; v++ {
			row[v-smallMin] = Number{Type: c, Int: int64(v)}
		}
		t[c] = &row
	}
	return t
}()

// numberValue boxes n, sharing small signed integers.
func numberValue(n Number) Value {
	if row := smallNumbers[n.Type]; row != nil && n.Int >= smallMin && n.Int <= smallMax {
		return row[n.Int-smallMin]
	}
	return n
}
