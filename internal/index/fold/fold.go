// Package fold is the index's text folding (docs/index.md, "Full text"):
// Tokenize splits and folds text exactly as SQLite's FTS5 unicode61
// tokenizer with remove_diacritics 2 does, from a table generated from
// SQLite itself (unicode61_table.go; `go test -run TestUnicode61Table
// -update` regenerates it, the normal run re-checks it), so terms computed
// in Go are the terms in the FTS5 index. ForSubstring is the folded form
// substring search compares, and Sanitize the text form both store.
package fold

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// u61Run is one row of the generated unicode61 table.
type u61Run struct {
	lo, hi rune
	kind   uint8
	delta  int32
}

// asciiFold is the ASCII fast path of Rune: 0 for a separator, else the
// folded byte.
var asciiFold = func() (t [128]byte) {
	for c := 0; c < 128; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			t[c] = byte(c)
		case c >= 'A' && c <= 'Z':
			t[c] = byte(c + 'a' - 'A')
		}
	}
	return t
}()

// Rune reports how SQLite's unicode61 tokenizer with remove_diacritics 2
// treats c: token is false for a separator; otherwise f is the folded code
// point, or -1 when c is a token character that folds away (a combining
// mark). The table is generated from SQLite itself and checked by
// TestUnicode61Table, so Go-side terms equal the terms in the FTS5 index.
func Rune(c rune) (f rune, token bool) {
	if c < 128 {
		if b := asciiFold[c]; b != 0 {
			return rune(b), true
		}
		return 0, false
	}
	i := sort.Search(len(u61Runs), func(i int) bool { return u61Runs[i].hi >= c })
	if i == len(u61Runs) || u61Runs[i].lo > c {
		return 0, false
	}
	r := u61Runs[i]
	if r.kind == 2 {
		return -1, true
	}
	return c + rune(r.delta), true
}

// Sanitize makes text safe to store and to tokenize identically in Go and
// SQLite: invalid UTF-8 becomes U+FFFD and NUL (which ends C strings) is
// dropped.
func Sanitize(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s
}

// Tokenize splits s into terms exactly as the FTS5 index does (see
// Rune) and calls fn with each term and its byte span in s. The term
// slice of buf is reused; fn must copy it to keep it.
func Tokenize(s string, buf []byte, fn func(term []byte, start, end int)) []byte {
	start := -1
	buf = buf[:0]
	for i := 0; i < len(s); {
		c := s[i]
		var f rune
		var tok bool
		size := 1
		if c < utf8.RuneSelf {
			if b := asciiFold[c]; b != 0 {
				f, tok = rune(b), true
			}
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			f, tok = Rune(r)
		}
		if tok {
			if start < 0 {
				start = i
				buf = buf[:0]
			}
			if f > 0 {
				buf = utf8.AppendRune(buf, f)
			}
		} else if start >= 0 {
			if len(buf) > 0 {
				fn(buf, start, i)
			}
			start = -1
		}
		i += size
	}
	if start >= 0 && len(buf) > 0 {
		fn(buf, start, len(s))
	}
	return buf
}

// Terms returns the terms of s in order (with repeats).
func Terms(s string) []string {
	var out []string
	Tokenize(s, nil, func(t []byte, _, _ int) { out = append(out, string(t)) })
	return out
}

// ForSubstring maps s to the form substring search compares: token
// characters folded like the index (lower case, no diacritics), everything
// else lower-cased. It also returns, for each byte of the result, the byte
// offset in s it came from, so matches can be highlighted in the original.
func ForSubstring(s string, wantMap bool) (string, []int) {
	var b strings.Builder
	b.Grow(len(s))
	var m []int
	if wantMap {
		m = make([]int, 0, len(s)+1)
	}
	for i, r := range s {
		f, tok := Rune(r)
		if !tok {
			f = unicode.ToLower(r)
		}
		if f < 0 {
			continue
		}
		n := b.Len()
		b.WriteRune(f)
		if wantMap {
			for j := n; j < b.Len(); j++ {
				m = append(m, i)
			}
		}
	}
	if wantMap {
		m = append(m, len(s))
	}
	return b.String(), m
}
