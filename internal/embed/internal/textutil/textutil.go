// Package textutil splits message text into normalised words and maps
// inflected English forms to dictionary forms. The built-in embedder and the
// lexicon generator share it so that the words the generator stores are the
// words the embedder looks up.
package textutil

import (
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Words calls yield for each word of text: lower-cased runs of letters and
// digits. An apostrophe inside a word is dropped together with a trailing
// "s" ("sam's" → "sam", "don't" → "dont"). A currency symbol followed by a
// digit yields the word "money" before the number, so "$40" is about money.
// Iteration stops when yield returns false.
//
// The string passed to yield is only valid during the call (it aliases a
// reused buffer, which keeps embedding allocation-free); clone it with
// strings.Clone to keep it.
func Words(text string, yield func(string) bool) { words(text, false, yield) }

// MessageWords is Words for message text: it also drops the clitics 'll,
// 're, 've, 'd and 'm, so "I'll" is "i", not the adjective "ill". (Words
// keeps the older rule because the lexicon was generated with it.)
func MessageWords(text string, yield func(string) bool) { words(text, true, yield) }

// clitic returns the length of an English clitic at text[j:] (after an
// apostrophe) that ends the word: "s", and with all also "ll", "re", "ve",
// "d", "m"; 0 when there is none.
func clitic(text string, j int, all bool) int {
	for _, c := range [...]string{"s", "ll", "re", "ve", "d", "m"} {
		if !all && c != "s" {
			break
		}
		if len(text)-j >= len(c) && strings.EqualFold(text[j:j+len(c)], c) && (j+len(c) >= len(text) || !isASCIIAlnum(text[j+len(c)])) {
			return len(c)
		}
	}
	return 0
}

func words(text string, all bool, yield func(string) bool) {
	var buf [64]byte
	w := buf[:0]
	flush := func() bool {
		if len(w) == 0 {
			return true
		}
		s := unsafe.String(unsafe.SliceData(w), len(w))
		ok := yield(s)
		w = w[:0]
		return ok
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				w = append(w, c)
			case 'A' <= c && c <= 'Z':
				w = append(w, c+32)
			case c == '\'' && len(w) > 0 && i+1 < len(text) && isASCIILetter(text[i+1]):
				// "sam's" → "sam"; "don't" → "dont".
				if n := clitic(text, i+1, all); n > 0 {
					i += 1 + n
					if !flush() {
						return
					}
					continue
				}
			case (c == '$') && i+1 < len(text) && '0' <= text[i+1] && text[i+1] <= '9':
				if !flush() || !yield("money") {
					return
				}
			default:
				if !flush() {
					return
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '’' && len(w) > 0 && i+size < len(text) && isASCIILetter(text[i+size]):
			if n := clitic(text, i+size, all); n > 0 {
				i += size + n
				if !flush() {
					return
				}
				continue
			}
		case (r == '€' || r == '£' || r == '¥') && i+size < len(text) && '0' <= text[i+size] && text[i+size] <= '9':
			if !flush() || !yield("money") {
				return
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			w = utf8.AppendRune(w, unicode.ToLower(foldAccent(r)))
		default:
			if !flush() {
				return
			}
		}
		i += size
	}
	flush()
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isASCIIAlnum(c byte) bool  { return isASCIILetter(c) || '0' <= c && c <= '9' }

// foldAccent maps the common Latin accented letters to their base letter so
// "café" and "cafe" are one word. Other runes pass through.
func foldAccent(r rune) rune {
	if r < 0xC0 || r > 0x17F {
		return r
	}
	if i := strings.IndexRune(accented, r); i >= 0 {
		return rune(plain[utf8.RuneCountInString(accented[:i])])
	}
	return r
}

const (
	accented = "ÀÁÂÃÄÅàáâãäåÇçÈÉÊËèéêëÌÍÎÏìíîïÑñÒÓÔÕÖØòóôõöøÙÚÛÜùúûüÝýÿ"
	plain    = "AAAAAAaaaaaaCcEEEEeeeeIIIIiiiiNnOOOOOOooooooUUUUuuuuYyy"
)

// IsStopword reports whether w is a function word that carries no topic.
func IsStopword(w string) bool { _, ok := stopwords[w]; return ok }

var stopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself
no nor not of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we were what
when where which while who whom why will with would you your yours yourself yourselves im ive youre theyre
dont doesnt didnt cant wont isnt arent wasnt werent shouldnt couldnt wouldnt thats whats u ur ok okay oh yeah yes
yep lol haha also got get gets let lets one really still well like want know think go going gonna wanna s t d ll m
re ve`) {
		m[w] = struct{}{}
	}
	return m
}()

// Morph returns the dictionary form of w: w itself when has(w), else the
// first candidate produced by the exception table or WordNet's detachment
// rules (with consonant undoubling, "stopped" → "stop") that has accepts,
// else "". exc maps irregular forms to their base ("went" → "go"); it may be
// nil.
func Morph(w string, has func(string) bool, exc func(string) (string, bool)) string {
	if has(w) {
		return w
	}
	if exc != nil {
		if b, ok := exc(w); ok && has(b) {
			return b
		}
	}
	for _, r := range rules {
		if len(w) <= len(r.suf)+1 || !strings.HasSuffix(w, r.suf) {
			continue
		}
		c := w[:len(w)-len(r.suf)] + r.rep
		if has(c) {
			return c
		}
		// "stopped" → "stopp" → "stop", "running" → "run".
		if r.rep == "" && len(c) > 2 && c[len(c)-1] == c[len(c)-2] && !strings.ContainsRune("aeiouls", rune(c[len(c)-1])) {
			if has(c[:len(c)-1]) {
				return c[:len(c)-1]
			}
		}
	}
	return ""
}

var rules = []struct{ suf, rep string }{
	{"ies", "y"}, {"ches", "ch"}, {"shes", "sh"}, {"sses", "ss"}, {"xes", "x"}, {"zes", "z"}, {"ses", "s"},
	{"men", "man"}, {"s", ""}, {"ied", "y"}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"est", ""}, {"est", "e"}, {"er", ""}, {"er", "e"}, {"ly", ""}, {"ness", ""}, {"ful", ""},
}
