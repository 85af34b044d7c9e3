package service

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy"
)

// SearchParams are search_messages' arguments.
type SearchParams struct {
	Query string
	// Mode is hybrid (default), fulltext, substring or semantic.
	Mode string
	// ConversationID restricts to one conversation (id or chat id); Contact
	// to the conversations with a person (name, phone, e-mail), resolved
	// like get_conversation_messages' chat.
	ConversationID string
	Contact        string
	// Days restricts to the last Days days (0: no limit).
	Days float64
	// DateFrom and DateTo are explicit ISO-8601 bounds, both inclusive
	// (a date-only value is a day in the user's zone; dateRange), applied
	// with Days and any dates the query's words name.
	DateFrom, DateTo string
	// FromMe keeps only my messages (true) or only others' (false).
	FromMe *bool
	// Limit is the page size (default 10, at most MaxSearchLimit).
	Limit int
	// Context adds up to this many neighbouring messages before and after
	// each hit (0 to MaxSearchContext).
	Context int
	Cursor  string
	// LiteralDates keeps words such as "yesterday" as words instead of a
	// date filter (the CLI's --literal-dates).
	LiteralDates bool
}

// ContextMessage is a neighbouring message of a search hit.
type ContextMessage struct {
	ID     string    `json:"id"`
	Time   time.Time `json:"ts"`
	FromMe bool      `json:"from_me"`
	Sender string    `json:"sender"`
	Text   string    `json:"text"`
}

// SearchHit is one result.
type SearchHit struct {
	MessageID    string          `json:"message_id"`
	Conversation ConversationRef `json:"conversation"`
	Sender       string          `json:"sender"`
	SenderHandle string          `json:"sender_handle,omitempty"`
	FromMe       bool            `json:"from_me"`
	Time         time.Time       `json:"ts"`
	Text         string          `json:"text"`
	// Snippet is an excerpt of a long text around the matches, each match
	// marked **like this**; absent when Text is short.
	Snippet       string `json:"snippet,omitempty"`
	TextTruncated bool   `json:"text_truncated,omitempty"`
	// Transcript and TranscriptNote are as in Message (voice notes).
	Transcript     string `json:"transcript,omitempty"`
	TranscriptNote string `json:"transcript_note,omitempty"`
	// IsRead and SendError are as in Message: an unread message and a
	// failed send read the same in hits as in history.
	IsRead    *bool      `json:"is_read,omitempty"`
	SendError *SendError `json:"send_error,omitempty"`
	// Attachments are the hit's attachments; viewable ones can be shown
	// with get_attachment.
	Attachments []Attachment `json:"attachments,omitempty"`
	Score       float64      `json:"score"`
	// Before and After are neighbouring messages (context > 0), oldest
	// first.
	Before []ContextMessage `json:"before,omitempty"`
	After  []ContextMessage `json:"after,omitempty"`
}

// DateFilter is the date range read from words in the query ("last week").
type DateFilter struct {
	Text  string    `json:"text"`
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
}

// SearchResult is search_messages' result. ScanComplete and Coverage are
// always reported: when the scan was not complete, a missing hit may exist.
type SearchResult struct {
	Query         string         `json:"query"`
	Mode          string         `json:"mode"`
	RequestedMode string         `json:"requested_mode"`
	Days          float64        `json:"days,omitempty"`
	MatchCount    int            `json:"match_count"`
	Hits          []SearchHit    `json:"hits"`
	ScanComplete  bool           `json:"scan_complete"`
	Coverage      index.Coverage `json:"coverage"`
	DateFilter    *DateFilter    `json:"date_filter,omitempty"`
	NextCursor    string         `json:"next_cursor,omitempty"`
	Notes         []string       `json:"notes"`
}

// Search runs a search through the index; without a query it browses
// (the messages the filters allow, newest first, capped by Limit).
//
// Search runs a search through the index (hybrid by default: reciprocal
// rank fusion of BM25 and vector ranks; full text alone, said in Notes,
// while vectors are not ready).
func (s *Service) Search(ctx context.Context, prm SearchParams) (SearchResult, error) {
	p, err := s.begin(ctx)
	if err != nil {
		return SearchResult{}, err
	}
	q := index.Query{Text: strings.TrimSpace(prm.Query), Mode: index.Mode(strings.ToLower(strings.TrimSpace(prm.Mode))), Limit: prm.Limit, Cursor: prm.Cursor, FromMe: prm.FromMe,
		LiteralDates: prm.LiteralDates}
	switch {
	case utf8.RuneCountInString(q.Text) > 500:
		return SearchResult{}, userErr("query is longer than 500 characters; use a few words")
	case prm.Limit < 0 || prm.Limit > MaxSearchLimit:
		return SearchResult{}, userErr("limit must be from 1 to %d", MaxSearchLimit)
	case prm.Context < 0 || prm.Context > MaxSearchContext:
		return SearchResult{}, userErr("context must be from 0 to %d", MaxSearchContext)
	case prm.Days < 0 || prm.Days > MaxSearchDays:
		return SearchResult{}, userErr("days must be greater than 0 and at most %d", MaxSearchDays)
	}
	switch q.Mode {
	case "":
		q.Mode = index.ModeHybrid
	case index.ModeHybrid, index.ModeFulltext, index.ModeSubstring, index.ModeSemantic:
	default:
		return SearchResult{}, userErr("mode must be hybrid, fulltext, substring or semantic (got %q)", output.Name(prm.Mode))
	}
	if prm.Days > 0 {
		q.Since = s.now().Add(-time.Duration(prm.Days * float64(24*time.Hour)))
	}
	from, until, err := s.dateRange(prm.DateFrom, prm.DateTo)
	if err != nil {
		return SearchResult{}, err
	}
	if from.After(q.Since) {
		q.Since = from
	}
	q.Until = until
	book, err := s.contactBook(ctx)
	if err != nil {
		return SearchResult{}, err
	}
	var scope []string
	if c := strings.TrimSpace(prm.ConversationID); c != "" {
		t, err := s.resolveChat(ctx, p, c)
		if err != nil {
			return SearchResult{}, err
		}
		scope = convIDs(t.convs)
	}
	if c := strings.TrimSpace(prm.Contact); c != "" {
		t, err := s.resolveChat(ctx, p, c)
		if err != nil {
			return SearchResult{}, err
		}
		ids := convIDs(t.convs)
		if scope != nil {
			ids = intersect(scope, ids)
			if len(ids) == 0 {
				return SearchResult{}, notFound("that conversation is not one of the conversations with %s", output.Name(c))
			}
		}
		scope = ids
	}
	res := SearchResult{Query: output.Name(q.Text), RequestedMode: string(q.Mode), Days: prm.Days, Hits: []SearchHit{}, Notes: []string{}}
	if s.semanticOff != "" && (q.Mode == index.ModeHybrid || q.Mode == index.ModeSemantic) {
		// No vectors in this process by configuration (Options.SemanticOff):
		// say that, not "not ready", which would promise vectors.
		q.Mode = index.ModeFulltext
		res.Notes = append(res.Notes, s.semanticOff)
	}
	var r *index.Result
	if len(scope) <= 1 {
		if len(scope) == 1 {
			q.ConversationID = scope[0]
		}
		r, err = s.ix.Search(ctx, q)
	} else {
		r, err = s.searchScoped(ctx, q, scope)
	}
	if err != nil {
		return SearchResult{}, indexErr("search", err)
	}
	res.Mode = string(r.Mode)
	res.ScanComplete = r.ScanComplete
	res.Coverage = r.Coverage
	res.NextCursor = r.NextCursor
	for _, n := range r.Notes {
		res.Notes = append(res.Notes, output.Name(n))
	}
	if sem := r.Coverage.Semantic; sem != nil && sem.Unembedded > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%s in scope not embedded yet: semantic ranking covers the others, full text covers all", output.Count(sem.Unembedded, "message")))
	}
	if r.Mode != q.Mode {
		res.Notes = append(res.Notes, "full text only: semantic search is not ready, so these results match words, not meaning")
	}
	if in := r.Interpretation; in != nil && in.DateText != "" {
		res.DateFilter = &DateFilter{Text: output.Name(in.DateText), Since: s.ts(in.Since), Until: s.ts(in.Until)}
	}
	a := newAuthors(p)
	for _, h := range r.Hits {
		if !allowRef(p, h.Conversation) || (!h.FromMe && a.hidden(h.Sender)) {
			continue
		}
		hit, err := s.hit(ctx, h, prm.Context, book, a)
		if err != nil {
			return SearchResult{}, err
		}
		res.Hits = append(res.Hits, hit)
	}
	res.MatchCount = len(res.Hits)
	if !res.ScanComplete {
		res.Notes = append(res.Notes, "the scan was not complete (see coverage): a matching message may exist that is not listed")
	}
	return res, nil
}

// searchScoped searches several conversations (a person's SMS and
// iMessage threads): the index takes one conversation reference, so the
// query is restricted to the person's handles instead.
func (s *Service) searchScoped(ctx context.Context, q index.Query, convs []string) (*index.Result, error) {
	var hs []string
	for _, id := range convs {
		c, err := s.ix.Conversation(ctx, id)
		if err != nil {
			return nil, err
		}
		if c.Kind != model.KindGroup {
			hs = append(hs, c.Identifier)
		}
	}
	q.Handles = hs
	r, err := s.ix.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, id := range convs {
		keep[id] = true
	}
	kept := r.Hits[:0]
	for _, h := range r.Hits {
		if keep[h.Conversation.ID] {
			kept = append(kept, h)
		}
	}
	r.Hits = kept
	return r, nil
}

func convIDs(cs []index.Conversation) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			if x == y {
				out = append(out, x)
			}
		}
	}
	return out
}

// hit converts an index hit through the output boundary. The snippet is
// built from the redacted text, never from the index's raw excerpt, so a
// highlight or an excerpt boundary cannot split a secret past the
// redactor.
func (s *Service) hit(ctx context.Context, h index.Hit, nctx int, book *contacts.Book, a *authors) (SearchHit, error) {
	out := SearchHit{MessageID: h.MessageID, Conversation: refOf(h.Conversation), FromMe: h.FromMe, Time: s.ts(h.Time), Score: h.Score,
		Attachments: attachmentsOf(h.Attachments)}
	if h.FromMe {
		out.Sender = "me"
	} else {
		out.SenderHandle = output.Name(h.Sender)
		out.Sender = output.Name(cmpOr(s.nameOf(h.Sender, h.SenderName, book), h.Sender, "unknown"))
	}
	out.Transcript, out.TranscriptNote = s.transcript(h.Runs, h.Attachments)
	if h.FromMe {
		out.SendError = sendErrorOf(h.Error)
	} else if h.Kind != model.MsgGroupEvent && h.Kind != model.MsgReaction {
		read := h.IsRead
		out.IsRead = &read
	}
	full := s.out.Body(h.Text, h.Runs) // one-time codes masked as in history
	out.Text, out.TextTruncated = capRunes(full, snippetThreshold*4)
	if utf8.RuneCountInString(full) > snippetThreshold {
		out.Snippet = snippet(full, matchedWords(h))
	}
	if nctx > 0 {
		var err error
		if out.Before, out.After, err = s.neighbours(ctx, h, nctx, book, a); err != nil {
			return out, err
		}
	}
	return out, nil
}

// snippetThreshold is the text length above which a hit gets a snippet.
const snippetThreshold = 280

// matchedWords returns the distinct raw matches the index highlighted.
func matchedWords(h index.Hit) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range h.Highlights {
		if r[0] < 0 || r[1] > len(h.Text) || r[0] >= r[1] {
			continue
		}
		w := strings.ToLower(h.Text[r[0]:r[1]])
		if !seen[w] && strings.TrimSpace(w) != "" {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// snippet cuts about snippetThreshold characters of text around the first
// of words and marks every occurrence of words inside it.
func snippet(text string, words []string) string {
	var re *regexp.Regexp
	if len(words) > 0 {
		parts := make([]string, len(words))
		for i, w := range words {
			parts[i] = regexp.QuoteMeta(w)
		}
		re = regexp.MustCompile(`(?i)` + strings.Join(parts, "|"))
	}
	start := 0
	if re != nil {
		if loc := re.FindStringIndex(text); loc != nil {
			start = loc[0]
		}
	}
	// Back up about a third of the window to a rune boundary.
	runes := []rune(text)
	pos := utf8.RuneCountInString(text[:start])
	from := max(0, pos-snippetThreshold/3)
	to := min(len(runes), from+snippetThreshold)
	ex := string(runes[from:to])
	if re != nil {
		ex = re.ReplaceAllString(ex, index.SnippetOpen+"$0"+index.SnippetClose)
	}
	if from > 0 {
		ex = "…" + ex
	}
	if to < len(runes) {
		ex += "…"
	}
	return ex
}

// neighbours returns up to n messages before and after a hit in its
// conversation.
func (s *Service) neighbours(ctx context.Context, h index.Hit, n int, book *contacts.Book, a *authors) (before, after []ContextMessage, err error) {
	conv := h.Conversation.ID
	hb, err := s.ix.History(ctx, index.HistoryQuery{Chat: conv, Before: h.Time, Limit: n})
	if err != nil {
		return nil, nil, indexErr("read context", err)
	}
	shown := map[string]bool{h.MessageID: true}
	for _, m := range a.filter(hb.Messages) {
		if m.ID != h.MessageID && m.Kind != model.MsgReaction {
			shown[m.ID] = true
			before = append(before, s.contextMessage(m, book))
		}
	}
	// After: the index pages backwards, so read a window after the hit and
	// narrow it when it holds too many messages, widen it when too few.
	w := 24 * time.Hour
	for range 6 {
		ha, err := s.ix.History(ctx, index.HistoryQuery{Chat: conv, Since: h.Time, Before: h.Time.Add(w), Limit: 200})
		if err != nil {
			return nil, nil, indexErr("read context", err)
		}
		if ha.More && w > time.Minute {
			w /= 16
			continue
		}
		after = after[:0]
		for _, m := range a.filter(ha.Messages) {
			if shown[m.ID] || m.Kind == model.MsgReaction {
				continue
			}
			after = append(after, s.contextMessage(m, book))
			if len(after) == n {
				break
			}
		}
		if len(after) == n || ha.More || w >= 30*24*time.Hour {
			break
		}
		w *= 16
	}
	return before, after, nil
}

func (s *Service) contextMessage(m index.Message, book *contacts.Book) ContextMessage {
	c := ContextMessage{ID: m.ID, Time: s.ts(m.Time), FromMe: m.FromMe}
	if m.FromMe {
		c.Sender = "me"
	} else {
		c.Sender = output.Name(cmpOr(s.nameOf(m.Sender, m.SenderName, book), m.Sender, "unknown"))
	}
	c.Text, _ = capRunes(s.out.Body(m.Text, m.Runs), 600)
	return c
}

// visibleConv reports whether a conversation id may be read now.
func (s *Service) visibleConv(ctx context.Context, p *policy.Policy, id string) bool {
	c, err := s.ix.Conversation(ctx, id)
	return err == nil && allowConv(p, c)
}
