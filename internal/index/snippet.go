package index

import (
	"context"
	"strings"

	"github.com/tidings-mcp/tidings/internal/index/fold"
)

// hydrateHits loads the page's messages and builds snippets.
func (ix *Index) hydrateHits(ctx context.Context, page []rankedHit, pq *parsedQuery, f *filter, explain bool) ([]Hit, error) {
	ids := make([]int64, len(page))
	for i, h := range page {
		ids[i] = h.id
	}
	var prefer map[uint32]bool
	if f.convOK != nil {
		prefer = map[uint32]bool{}
		for c, ok := range f.convOK {
			if ok {
				prefer[uint32(c)] = true
			}
		}
	}
	msgs, err := ix.loadMessages(ctx, ids, prefer)
	if err != nil {
		return nil, err
	}
	byID := map[int64]*Message{}
	for i := range msgs {
		byID[msgs[i].id] = &msgs[i]
	}
	hits := make([]Hit, 0, len(page))
	for _, r := range page {
		m := byID[r.id]
		if m == nil {
			continue // deleted since it was ranked
		}
		// Spans were found in the stored text, which has secrets blanked
		// (same length as Text); matching again works on it too.
		stored := indexedText(m.Text, m.Runs)
		spans := r.spans
		if spans == nil || r.text != stored {
			spans = matchSpans(stored, pq)
		}
		h := Hit{MessageID: m.ID, Source: m.Source, Conversation: m.Conversation, Sender: m.Sender, SenderName: m.SenderName,
			FromMe: m.FromMe, Time: m.Time, Text: m.Text, Runs: m.Runs, Attachments: m.Attachments, Score: r.score, Highlights: spans,
			Kind: m.Kind, IsRead: m.IsRead, Error: m.Error}
		h.Snippet = snippet(stored, spans)
		if explain {
			h.Explain = &Explanation{Fulltext: r.ft, Semantic: r.sem, Fused: r.fused, Matched: r.matched}
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// matchSpans finds the byte ranges of text's tokens that match a query term
// variant or phrase word.
func matchSpans(text string, pq *parsedQuery) [][2]int {
	if pq == nil {
		return nil
	}
	want := map[string]bool{}
	for _, t := range pq.terms {
		for _, v := range t.variants {
			want[v.term] = true
		}
	}
	var spans [][2]int
	fold.Tokenize(text, nil, func(t []byte, s, e int) {
		if want[string(t)] {
			spans = append(spans, [2]int{s, e})
		}
	})
	return spans
}

// snippetWidth is the target snippet length in bytes.
const snippetWidth = 200

// snippet returns an excerpt of text around its first highlighted span,
// with spans wrapped in the markers and "…" where text was cut.
func snippet(text string, spans [][2]int) string {
	start, end := 0, len(text)
	if len(text) > snippetWidth {
		center := 0
		if len(spans) > 0 {
			center = spans[0][0]
		}
		start = max(0, center-snippetWidth/4)
		end = min(len(text), start+snippetWidth)
		if end == len(text) {
			start = max(0, end-snippetWidth)
		}
		// Align to word boundaries.
		if start > 0 {
			if i := strings.IndexAny(text[start:], " \n\t"); i >= 0 && i < 30 {
				start += i + 1
			}
		}
		if end < len(text) {
			if i := strings.LastIndexAny(text[start:end], " \n\t"); i > 0 && end-(start+i) < 30 {
				end = start + i
			}
		}
		for start > 0 && start < len(text) && !isRuneStart(text[start]) {
			start++
		}
		for end < len(text) && !isRuneStart(text[end]) {
			end--
		}
	}
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	pos := start
	for _, sp := range spans {
		if sp[1] <= start || sp[0] >= end {
			continue
		}
		s, e := max(sp[0], start), min(sp[1], end)
		if s < pos {
			continue
		}
		b.WriteString(text[pos:s])
		b.WriteString(SnippetOpen)
		b.WriteString(text[s:e])
		b.WriteString(SnippetClose)
		pos = e
	}
	b.WriteString(text[pos:end])
	if end < len(text) {
		b.WriteString("…")
	}
	return b.String()
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
