package dossier

import (
	"strings"
	"unicode"
)

// textInfo is what the dossier reads from one message body.
type textInfo struct {
	words     int
	question  bool
	tokens    []string // lower-case words (apostrophes kept, curly ones folded)
	sentences []sentence
}

// sentence is one sentence of a message: its text as written (trimmed)
// and lower-cased with curly apostrophes folded.
type sentence struct {
	text  string
	low   string
	quest bool
}

var apostrophes = strings.NewReplacer("\u2019", "'", "\u2018", "'", "\u201c", "\"", "\u201d", "\"")

func newTextInfo(text string) textInfo {
	var t textInfo
	text = strings.ReplaceAll(text, "\ufffc", " ")
	if strings.TrimSpace(text) == "" {
		return t
	}
	t.sentences = splitSentences(text)
	for _, s := range t.sentences {
		if s.quest {
			t.question = true
		}
	}
	low := apostrophes.Replace(strings.ToLower(text))
	t.tokens = tokens(low)
	t.words = len(t.tokens)
	return t
}

// splitSentences cuts at "!", "?", newlines and at "." followed by a space
// or the end, so "$1,249.00", "7:30" and "venmo.com" stay whole. Runs of
// terminators ("?!") stay with their sentence.
func splitSentences(text string) []sentence {
	var out []sentence
	start := 0
	emit := func(end int) {
		raw := strings.TrimSpace(text[start:end])
		start = end
		if raw == "" || strings.Trim(raw, ".!?…") == "" {
			return
		}
		out = append(out, sentence{text: raw, low: apostrophes.Replace(strings.ToLower(raw)), quest: strings.Contains(raw, "?")})
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n':
			emit(i + 1)
		case c == '!' || c == '?' || c == '.':
			j := i + 1
			for j < len(text) && (text[j] == '!' || text[j] == '?' || text[j] == '.') {
				j++
			}
			if c == '.' && (j < len(text) && text[j] != ' ' && text[j] != '\n' || abbreviation(text[start:i])) {
				i = j - 1
				continue
			}
			emit(j)
			i = j - 1
		}
	}
	emit(len(text))
	return out
}

// tokens splits lower-cased text into words; URLs are dropped.
func tokens(low string) []string {
	var out []string
	for _, f := range strings.Fields(low) {
		if strings.Contains(f, "://") || strings.HasPrefix(f, "www.") {
			continue
		}
		for _, w := range strings.FieldsFunc(f, func(r rune) bool {
			return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'')
		}) {
			if w = strings.Trim(w, "'"); w != "" {
				out = append(out, w)
			}
		}
	}
	return out
}

// abbreviations end in a period without ending the sentence.
var abbreviations = map[string]bool{"dr": true, "mr": true, "mrs": true, "ms": true, "st": true, "jr": true, "sr": true,
	"vs": true, "etc": true, "e.g": true, "i.e": true, "a.m": true, "p.m": true, "approx": true, "ave": true, "no": false,
	"prof": true, "mt": true, "ft": true, "inc": true, "co": true, "dept": true, "apt": true}

// abbreviation reports whether the text before a period ends with an
// abbreviation ("… with Dr").
func abbreviation(before string) bool {
	i := strings.LastIndexAny(before, " \n(")
	w := strings.ToLower(before[i+1:])
	return abbreviations[w]
}
