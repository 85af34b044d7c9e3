package service

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzPageCursor feeds arbitrary cursors to the decoder a caller reaches
// through get_conversation_messages: it must never panic, must refuse
// anything it did not produce the shape of, and what it accepts must
// re-encode to a cursor that decodes to the same position.
func FuzzPageCursor(f *testing.F) {
	f.Add("")
	f.Add("m1.eyJ0IjoxNzY0NTIyMDAwMDAwfQ")
	f.Add("m1.eyJ0IjoxLCJzIjpbImEiLCJiIl19")
	f.Add("m1.eyJ0IjotMX0")
	f.Add("m1.!!!")
	f.Add("h1a2b.3c")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodePageCursor(s)
		if err != nil {
			return
		}
		if c.T <= 0 || len(c.Skip) > maxSkip {
			t.Fatalf("accepted an out-of-range cursor %+v", c)
		}
		var msgs []Message
		for _, id := range c.Skip {
			if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
				return
			}
			msgs = append(msgs, Message{ID: id, Time: time.UnixMilli(c.T)})
		}
		if len(msgs) == 0 {
			return
		}
		again, err := decodePageCursor(PageCursor(msgs, ""))
		if err != nil || again.T != c.T || len(again.Skip) != len(c.Skip) {
			t.Fatalf("round trip %+v → %+v (%v)", c, again, err)
		}
	})
}

// FuzzSnippet checks that a snippet is valid UTF-8 cut from the text and
// never longer than the threshold plus its markers.
func FuzzSnippet(f *testing.F) {
	f.Add(strings.Repeat("word ", 100)+"deposit here", "deposit")
	f.Add("ünïcödé "+strings.Repeat("é", 400), "é")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, text, word string) {
		if !utf8.ValidString(text) || !utf8.ValidString(word) {
			return
		}
		var words []string
		if strings.TrimSpace(word) != "" {
			words = []string{strings.ToLower(word)}
		}
		s := snippet(text, words)
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 snippet %q", s)
		}
		plain := strings.TrimSuffix(strings.TrimPrefix(strings.ReplaceAll(s, "**", ""), "…"), "…")
		if !strings.Contains(strings.ReplaceAll(text, "**", ""), plain) {
			t.Fatalf("snippet %q is not cut from the text", s)
		}
	})
}
