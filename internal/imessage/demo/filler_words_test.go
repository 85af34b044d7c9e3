package demo

import (
	"regexp"
	"strings"
	"testing"
)

// TestFillerHasNoDoubledWords: no template line, with any value of any of
// its slots, doubles a word ("the the billing fix numbers look off": a
// template's article before a value that carries its own). Such garbled
// lines came back as filler commitments in every work dossier.
func TestFillerHasNoDoubledWords(t *testing.T) {
	doubled := func(text string) string {
		w := strings.Fields(strings.ToLower(text))
		for i := 1; i < len(w); i++ {
			if w[i] == w[i-1] && strings.Contains(" the a an to at in on of for my your is ", " "+w[i]+" ") {
				return w[i-1] + " " + w[i]
			}
		}
		return ""
	}
	slotRE := regexp.MustCompile(`\{([a-z]+)\}`)
	var lines []string
	for _, d := range dialogues {
		for _, l := range d.lines {
			lines = append(lines, strings.Split(l, " || ")...)
		}
	}
	for _, ts := range automatedTexts {
		lines = append(lines, ts...)
	}
	for _, line := range lines {
		for _, m := range slotRE.FindAllStringSubmatch(line, -1) {
			for _, v := range vocab[m[1]] {
				text := strings.Replace(line, m[0], v, 1)
				if w := doubled(text); w != "" {
					t.Errorf("template %q with {%s} = %q reads %q", line, m[1], v, w)
				}
			}
		}
	}
}
