package service

import (
	"context"
	"fmt"
	"time"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/triage"
)

// Response-stats bounds: hours in (0, MaxStatsHours], default 24.
const (
	DefaultStatsHours = triage.DefaultHours
	MaxStatsHours     = triage.MaxHours
)

// statsMaxMessages bounds the messages one response_stats call reads.
const statsMaxMessages = 50000

// StatsParams are get_response_stats' arguments.
type StatsParams struct {
	// Chat names the person or conversation, like
	// get_conversation_messages' chat.
	Chat  string
	Hours float64
}

// ResponseStats is get_response_stats' result: the bridge protocol's
// response_stats fields. The figures (hours through total_outbound_messages)
// are triage's, whose second figures are null without a sample (never a false
// 0); Stats.Samples is left empty (it is not part of the result).
type ResponseStats struct {
	ChatQuery      string            `json:"chat_query"`
	ResolvedSubstr string            `json:"resolved_substr"`
	Contact        string            `json:"contact,omitempty"`
	Conversations  []ConversationRef `json:"conversations"`
	triage.Stats
	Note string `json:"note,omitempty"`
}

// ResponseStats measures how fast the owner replies to one person or
// conversation over the last Hours hours: a reply is the owner's first
// message after an inbound turn (consecutive messages of one side are one
// turn), timed from the first message of that turn.
func (s *Service) ResponseStats(ctx context.Context, prm StatsParams) (ResponseStats, error) {
	p, err := s.begin(ctx)
	if err != nil {
		return ResponseStats{}, err
	}
	hours := prm.Hours
	switch {
	case hours == 0:
		hours = DefaultStatsHours
	case hours < 0 || hours > MaxStatsHours:
		return ResponseStats{}, userErr("hours must be greater than 0 and at most %d", MaxStatsHours)
	}
	t, err := s.resolveChat(ctx, p, prm.Chat)
	if err != nil {
		return ResponseStats{}, err
	}
	book, err := s.contactBook(ctx)
	if err != nil {
		return ResponseStats{}, err
	}
	now := s.now()
	since := now.Add(-time.Duration(hours * float64(time.Hour)))
	var msgs []triage.Message
	seen := map[string]bool{}
	a := newAuthors(p) // a blocked person's messages in a group do not count
	cut := false
	for _, c := range t.convs {
		cursor := ""
		for {
			h, err := s.ix.History(ctx, index.HistoryQuery{Chat: c.ID, Since: since, Before: now.Add(time.Millisecond), Cursor: cursor, Limit: 500})
			if err != nil {
				return ResponseStats{}, indexErr("read messages", err)
			}
			for _, m := range a.filter(h.Messages) {
				if seen[m.ID] {
					continue
				}
				seen[m.ID] = true
				msgs = append(msgs, triage.Message{ID: m.ID, Time: m.Time, FromMe: m.FromMe, Sender: m.Sender, Kind: m.Kind, Error: m.Error, Unsent: m.Unsent})
			}
			if !h.More || h.NextCursor == "" {
				break
			}
			if len(msgs) >= statsMaxMessages {
				cut = true
				break
			}
			cursor = h.NextCursor
		}
	}
	st := triage.ResponseStats(msgs, now, hours)
	st.Samples = nil
	out := ResponseStats{ChatQuery: output.Name(t.query), ResolvedSubstr: t.substr, Conversations: []ConversationRef{}, Stats: st}
	if t.person != nil {
		out.Contact = output.Name(t.person.Name)
	}
	for _, c := range t.convs {
		out.Conversations = append(out.Conversations, s.ref(c, book))
	}
	switch {
	case cut:
		out.Note = fmt.Sprintf("only the newest %d messages of the window were measured", statsMaxMessages)
	case st.SampleSize == 0 && st.TotalInbound == 0:
		out.Note = fmt.Sprintf("no message from them in the last %s, so there is nothing to measure", humanHours(hours))
	case st.SampleSize == 0:
		out.Note = fmt.Sprintf("you did not reply to them in the last %s (they wrote %s)", humanHours(hours), output.Count(st.TotalInbound, "message"))
	}
	return out, nil
}

func humanHours(h float64) string {
	switch {
	case h == 1:
		return "hour"
	case h < 48:
		return fmt.Sprintf("%g hours", h)
	default:
		return fmt.Sprintf("%g days", h/24)
	}
}
