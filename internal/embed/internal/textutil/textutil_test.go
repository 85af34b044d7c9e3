package textutil

import (
	"slices"
	"strings"
	"testing"
)

// TestWordsFoldCaseAccentsAndApostrophes: Words lower-cases, strips accents,
// drops apostrophes and a possessive 's ("don't" → "dont", "Sam's" → "sam"),
// splits on everything else, adds the word "money" for a currency sign, and
// keeps non-Latin scripts whole.
func TestWordsFoldCaseAccentsAndApostrophes(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"btw you still owe me $40 for the tix", []string{"btw", "you", "still", "owe", "me", "money", "40", "for", "the", "tix"}},
		{"Sam's CAFÉ, don't!", []string{"sam", "cafe", "dont"}},
		{"Sam’s 3:15pm €20", []string{"sam", "3", "15pm", "money", "20"}},
		{"  ", nil},
		{"it's 'quoted'", []string{"it", "quoted"}},
		{"日本語 text", []string{"日本語", "text"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var got []string
			Words(tt.in, func(w string) bool { got = append(got, strings.Clone(w)); return true })
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Words(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMessageWordsClitics(t *testing.T) {
	for in, want := range map[string][]string{
		"I'll bring it, we’re late": {"i", "bring", "it", "we", "late"},
		"I'd say you've won":        {"i", "say", "you", "won"},
		"don't ill":                 {"dont", "ill"},
		"Sam's":                     {"sam"},
	} {
		var got []string
		MessageWords(in, func(w string) bool { got = append(got, strings.Clone(w)); return true })
		if !slices.Equal(got, want) {
			t.Errorf("MessageWords(%q) = %q, want %q", in, got, want)
		}
	}
	var got []string
	Words("I'll", func(w string) bool { got = append(got, strings.Clone(w)); return true })
	if !slices.Equal(got, []string{"ill"}) {
		t.Errorf("Words keeps the generator's rule: got %q", got)
	}
}

func TestWordsStops(t *testing.T) {
	n := 0
	Words("a b c d", func(string) bool { n++; return n < 2 })
	if n != 2 {
		t.Fatalf("yield called %d times after returning false, want 2", n)
	}
}

// TestMorphReducesInflectionsToAVocabularyWord: Morph maps an inflected form
// (-s, -es, -ies, -ed, -ing, a doubled consonant, an irregular exception) to
// its base when the base is in the vocabulary, keeps a vocabulary word, and
// gives "" for an unknown word.
func TestMorphReducesInflectionsToAVocabularyWord(t *testing.T) {
	vocab := map[string]bool{"owe": true, "stop": true, "party": true, "go": true, "box": true, "run": true, "ticket": true}
	has := func(s string) bool { return vocab[s] }
	exc := func(s string) (string, bool) {
		if s == "went" {
			return "go", true
		}
		return "", false
	}
	for in, want := range map[string]string{
		"owes": "owe", "owed": "owe", "owing": "owe", "stopped": "stop", "parties": "party",
		"went": "go", "boxes": "box", "running": "run", "tickets": "ticket", "zzz": "", "owe": "owe",
	} {
		if got := Morph(in, has, exc); got != want {
			t.Errorf("Morph(%q) = %q, want %q", in, got, want)
		}
	}
}
