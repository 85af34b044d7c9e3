package android

import (
	"bytes"
	"encoding/base64"
	"unicode/utf16"
	"unicode/utf8"
)

// readValue decodes an attribute value up to its closing quote q into the
// value scratch, keeping at most limit bytes (the rest is consumed and
// dropped; trunc reports it). It resolves the five predefined entities and
// numeric character references, recombines a UTF-16 surrogate pair written
// as two references (&#55357;&#56832; → U+1F600), turns a lone surrogate
// into U+FFFD, and normalises literal CR LF and CR to LF (XML end-of-line
// handling). Unknown entity references (&nbsp;, &xxe;) stay literal text:
// nothing is ever expanded. The result is valid only until the next call.
func (r *Reader) readValue(q byte, limit int) (v []byte, trunc bool, err error) {
	// Fast path: the value ends inside the buffered window and holds no
	// reference or CR, so it is returned in place (no copy).
	win := r.buf[r.r:r.w]
	if i := bytes.IndexByte(win, q); i >= 0 && i <= limit {
		if v := win[:i]; bytes.IndexByte(v, '&') < 0 && bytes.IndexByte(v, '\r') < 0 {
			r.r += i + 1
			return v, false, nil
		}
	}
	return r.readValueSlow(q, limit)
}

// readValueSlow is readValue for values that span buffer refills, hold
// references or CRs, or exceed the limit.
func (r *Reader) readValueSlow(q byte, limit int) (v []byte, trunc bool, err error) {
	v = r.val[:0]
	var hi rune // pending high surrogate
	cr := false // the previous literal byte was CR
	add := func(b []byte) {
		if room := limit - len(v); len(b) > room {
			b = b[:max(room, 0)]
			trunc = true
		}
		v = append(v, b...)
	}
	flushHi := func() {
		if hi != 0 {
			add([]byte(string(utf8.RuneError)))
			hi = 0
		}
	}
	for {
		if r.r >= r.w && !r.fill() {
			r.val = v[:0]
			return nil, false, r.eofErr()
		}
		b := r.buf[r.r]
		switch {
		case b == q:
			r.r++
			flushHi()
			r.val = v
			return v, trunc, nil
		case b == '&':
			r.r++
			cr = false
			c, lit, err := r.entity()
			if err != nil {
				r.val = v[:0]
				return nil, false, err
			}
			switch {
			case lit != nil:
				flushHi()
				add(lit)
			case c >= 0xD800 && c <= 0xDBFF:
				flushHi()
				hi = c
			case c >= 0xDC00 && c <= 0xDFFF:
				if hi != 0 {
					c = utf16.DecodeRune(hi, c)
					hi = 0
				} else {
					c = utf8.RuneError
				}
				var tmp [4]byte
				add(tmp[:utf8.EncodeRune(tmp[:], c)])
			default:
				flushHi()
				var tmp [4]byte
				add(tmp[:utf8.EncodeRune(tmp[:], c)])
			}
		case b == '\r':
			r.r++
			flushHi()
			cr = true
			add([]byte{'\n'})
		case b == '\n' && cr:
			r.r++
			cr = false
		default:
			flushHi()
			cr = false
			j := r.r
			for j < r.w {
				c := r.buf[j]
				if c == q || c == '&' || c == '\r' {
					break
				}
				j++
			}
			if !trunc {
				add(r.buf[r.r:j])
			}
			r.r = j
		}
	}
}

// entity decodes a reference after '&'. It returns the code point, or the
// literal bytes to keep when the reference is unknown or unterminated.
func (r *Reader) entity() (rune, []byte, error) {
	var name [12]byte
	n := 0
	for n < len(name) {
		b, err := r.peekByte()
		if err != nil {
			return 0, nil, err
		}
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '#') {
			break
		}
		name[n] = b
		n++
		r.r++
	}
	b, err := r.peekByte()
	if err != nil {
		return 0, nil, err
	}
	if b != ';' {
		return 0, append([]byte{'&'}, name[:n]...), nil
	}
	r.r++
	s := name[:n]
	switch string(s) {
	case "lt":
		return '<', nil, nil
	case "gt":
		return '>', nil, nil
	case "amp":
		return '&', nil, nil
	case "quot":
		return '"', nil, nil
	case "apos":
		return '\'', nil, nil
	}
	if len(s) >= 2 && s[0] == '#' {
		base, digits := 10, s[1:]
		if digits[0] == 'x' || digits[0] == 'X' {
			base, digits = 16, digits[1:]
		}
		var c int64
		ok := len(digits) > 0
		for _, d := range digits {
			var v int64
			switch {
			case d >= '0' && d <= '9':
				v = int64(d - '0')
			case base == 16 && d >= 'a' && d <= 'f':
				v = int64(d-'a') + 10
			case base == 16 && d >= 'A' && d <= 'F':
				v = int64(d-'A') + 10
			default:
				ok = false
			}
			if c = c*int64(base) + v; c > utf8.MaxRune {
				c = utf8.MaxRune + 1
			}
		}
		if ok {
			if c > utf8.MaxRune {
				return utf8.RuneError, nil, nil
			}
			return rune(c), nil, nil
		}
	}
	lit := append([]byte{'&'}, s...)
	return 0, append(lit, ';'), nil
}

// cleanText turns a decoded value into a string: invalid UTF-8 is repaired
// (a CESU-8 surrogate pair, as Java's modified UTF-8 writes emoji, is
// recombined; other bad bytes become U+FFFD), and control characters other
// than tab, LF and CR (C0, DEL, C1) are dropped. trunc trims a rune cut in
// half by a length limit.
func cleanText(v []byte, trunc bool) string {
	if trunc {
		for i := len(v) - 1; i >= 0 && i >= len(v)-utf8.UTFMax; i-- {
			if utf8.RuneStart(v[i]) {
				if !utf8.FullRune(v[i:]) {
					v = v[:i]
				}
				break
			}
		}
	}
	ascii, ctl := true, false
	for _, b := range v {
		if b >= 0x80 {
			ascii = false
		} else if (b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7f {
			ctl = true
		}
	}
	if ascii && !ctl {
		return string(v)
	}
	if !ascii && !utf8.Valid(v) {
		v = repairUTF8(v)
	}
	if !ascii || ctl {
		out := make([]byte, 0, len(v))
		for len(v) > 0 {
			c, n := utf8.DecodeRune(v)
			if !isControl(c) {
				out = append(out, v[:n]...)
			}
			v = v[n:]
		}
		return string(out)
	}
	return string(v)
}

func isControl(c rune) bool {
	return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || (c >= 0x7f && c <= 0x9f)
}

// repairUTF8 recombines CESU-8 surrogate pairs (ED A0–AF xx ED B0–BF xx)
// and replaces every other invalid byte sequence with U+FFFD.
func repairUTF8(v []byte) []byte {
	out := make([]byte, 0, len(v))
	for len(v) > 0 {
		c, n := utf8.DecodeRune(v)
		if c != utf8.RuneError || n > 1 {
			out = append(out, v[:n]...)
			v = v[n:]
			continue
		}
		if len(v) >= 6 && v[0] == 0xED && v[1]&0xF0 == 0xA0 && v[2]&0xC0 == 0x80 &&
			v[3] == 0xED && v[4]&0xF0 == 0xB0 && v[5]&0xC0 == 0x80 {
			h := 0xD000 | rune(v[1]&0x3F)<<6 | rune(v[2]&0x3F)
			l := 0xD000 | rune(v[4]&0x3F)<<6 | rune(v[5]&0x3F)
			out = utf8.AppendRune(out, utf16.DecodeRune(h, l))
			v = v[6:]
			continue
		}
		out = utf8.AppendRune(out, utf8.RuneError)
		v = v[1:]
	}
	return out
}

// b64 marks the base64 alphabet (standard and URL-safe).
var b64 = func() (t [256]bool) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	t['+'], t['/'], t['-'], t['_'] = true, true, true, true
	return t
}()

// countBase64 consumes a base64 attribute value without keeping it and
// returns the decoded size: every six bits of alphabet characters, padding
// and whitespace (literal or as references) ignored.
func (r *Reader) countBase64(q byte) (int64, error) {
	var n int64
	for {
		if r.r >= r.w && !r.fill() {
			return 0, r.eofErr()
		}
		buf := r.buf[r.r:r.w]
		i := 0
		for ; i < len(buf); i++ {
			c := buf[i]
			if b64[c] {
				n++
				continue
			}
			if c == q || c == '&' {
				break
			}
		}
		r.r += i
		if i == len(buf) {
			continue
		}
		r.r++
		if buf[i] == q {
			return n * 6 / 8, nil
		}
		c, _, err := r.entity()
		if err != nil {
			return 0, err
		}
		if c < 256 && b64[c] {
			n++
		}
	}
}

// base64Text reads the base64 data of a text part, decodes it (at most
// MaxText bytes of text are kept) and converts it from its MIB charset.
func (r *Reader) base64Text(q byte, charset int) (text string, size int64, trunc bool, err error) {
	limit := max(min(r.opts.MaxText, r.opts.MaxRecordText-r.recText), 0)
	keep := limit/3*4 + 4
	raw := make([]byte, 0, min(keep, 4096))
	var n int64
	push := func(c byte) {
		n++
		switch c {
		case '-':
			c = '+'
		case '_':
			c = '/'
		}
		if len(raw) < keep {
			raw = append(raw, c)
		}
	}
	for {
		if r.r >= r.w && !r.fill() {
			return "", 0, false, r.eofErr()
		}
		b := r.buf[r.r]
		r.r++
		switch {
		case b == q:
			dec, derr := base64.RawStdEncoding.DecodeString(string(raw[:len(raw)/4*4+rawTail(len(raw))]))
			if derr != nil {
				dec = nil
			}
			if len(dec) > limit {
				dec = dec[:limit]
			}
			if trunc = int64(len(dec)) < n*6/8; trunc {
				r.stats.Truncated++
			}
			r.recText += len(dec)
			return cleanText(decodeCharset(dec, charset), trunc), n * 6 / 8, trunc, nil
		case b64[b]:
			push(b)
		case b == '&':
			c, _, err := r.entity()
			if err != nil {
				return "", 0, false, err
			}
			if c < 256 && b64[c] {
				push(byte(c))
			}
		}
	}
}

// rawTail is how many trailing base64 characters form a decodable group
// (a lone sixth-bit character cannot).
func rawTail(n int) int {
	if n%4 == 1 {
		return 0
	}
	return n % 4
}

// decodeCharset converts text bytes from an MMS charset (IANA MIB enum) to
// UTF-8: 106 UTF-8, 3 US-ASCII, 4 ISO-8859-1, 1000 UCS-2 and 1013–1015
// UTF-16 (big-endian unless a byte-order mark says otherwise). Anything else
// is read as UTF-8.
func decodeCharset(b []byte, charset int) []byte {
	switch charset {
	case 4:
		out := make([]byte, 0, len(b)*2)
		for _, c := range b {
			out = utf8.AppendRune(out, rune(c))
		}
		return out
	case 1000, 1013, 1014, 1015:
		le := charset == 1014
		if len(b) >= 2 {
			switch {
			case b[0] == 0xFE && b[1] == 0xFF:
				le, b = false, b[2:]
			case b[0] == 0xFF && b[1] == 0xFE:
				le, b = true, b[2:]
			}
		}
		u := make([]uint16, 0, len(b)/2)
		for i := 0; i+1 < len(b); i += 2 {
			if le {
				u = append(u, uint16(b[i])|uint16(b[i+1])<<8)
			} else {
				u = append(u, uint16(b[i])<<8|uint16(b[i+1]))
			}
		}
		return []byte(string(utf16.Decode(u)))
	}
	return b
}
