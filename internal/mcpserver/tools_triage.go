package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/service"
)

// ---- review_messages ----

// ReviewMessagesInput is review_messages' argument object.
type ReviewMessagesInput struct {
	Days       coerce.Number `json:"days,omitzero" jsonschema:"days back, at most 90 (default 2)"`
	Context    coerce.Number `json:"context,omitzero" jsonschema:"messages per thread, 1-10 (default 5)"`
	UnreadOnly bool          `json:"unread_only,omitempty"`
}

// ReviewMessagesOutput is review_messages' result.
type ReviewMessagesOutput struct {
	service.Review
	Page Page `json:"page"`
}

var reviewMessages = Define(Tool{
	Name:        "review_messages",
	Title:       "Catch up: who is waiting on me",
	Description: "Catch-up triage of the last days days (default 2): needs_reply (someone waits on the user: a question, a request, a failed send, a promised follow-up), low_priority (nothing asked) and skip_summary (automated, answered last, ended with 'ok'; no text), with recent messages, reasons and pending ids. The one call for 'what did I miss'.",
	Toolset:     ToolsetTriage,
	ReadOnly:    Yes,
	Destructive: No,
	Idempotent:  Yes,
	OpenWorld:   No,
	Instructions: "To catch up (what did I miss, who is waiting on me), call review_messages once: each needs_reply and low_priority thread already carries its recent messages, so answer from it directly and do not re-read those threads; call get_conversation_messages only for the one thread the user wants to go into, with its conversation_id. " +
		"To answer someone, draft the reply and, when preview_message is available, preview it (never send without the user's approval).",
}, func(d *Deps) mcp.ToolHandlerFor[ReviewMessagesInput, ReviewMessagesOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in ReviewMessagesInput) (*mcp.CallToolResult, ReviewMessagesOutput, error) {
		svc, err := messages(d)
		if err != nil {
			return nil, ReviewMessagesOutput{}, err
		}
		days, err := coerce.Days(in.Days, coerce.DaysSpec{Name: "days", Default: service.DefaultReviewDays, Max: service.MaxReviewDays})
		if err != nil {
			return nil, ReviewMessagesOutput{}, err
		}
		nctx, err := coerce.Int(in.Context, coerce.IntSpec{Name: "context", Default: service.DefaultReviewContext, Min: 1, Max: service.MaxReviewContext, Clamp: true})
		if err != nil {
			return nil, ReviewMessagesOutput{}, err
		}
		rv, err := svc.Review(ctx, service.ReviewParams{Days: days, Context: nctx, UnreadOnly: in.UnreadOnly})
		if err != nil {
			return nil, ReviewMessagesOutput{}, err
		}
		wrapReview(&rv)
		page, err := fitReview(&rv)
		if err != nil {
			return nil, ReviewMessagesOutput{}, err
		}
		return nil, ReviewMessagesOutput{Review: rv, Page: page}, nil
	}
})

func wrapReview(rv *service.Review) {
	for _, list := range [][]service.ReviewThread{rv.NeedsReply, rv.LowPriority} {
		for i := range list {
			t := &list[i]
			t.LastText = wrapBody(t.LastText)
			for j := range t.Context {
				t.Context[j].Text = wrapBody(t.Context[j].Text)
				t.Context[j].Transcript = wrapBody(t.Context[j].Transcript)
			}
		}
	}
}

// fitReview keeps a review under MaxResultBytes: skip_summary first, then
// low_priority threads, then needs_reply threads are cut from the end
// (least urgent first); the counts still report every thread.
func fitReview(rv *service.Review) (Page, error) {
	total := len(rv.NeedsReply) + len(rv.LowPriority) + len(rv.SkipSummary)
	page := Page{Returned: total, Total: total}
	size := func() (int, error) { return jsonSize(rv) }
	n, err := size()
	if err != nil {
		return page, err
	}
	for n > MaxResultBytes-512 {
		switch {
		case len(rv.SkipSummary) > 0:
			rv.SkipSummary = rv.SkipSummary[:len(rv.SkipSummary)-1]
		case len(rv.LowPriority) > 0:
			rv.LowPriority = rv.LowPriority[:len(rv.LowPriority)-1]
		case len(rv.NeedsReply) > 1:
			rv.NeedsReply = rv.NeedsReply[:len(rv.NeedsReply)-1]
		default:
			n = 0
			continue
		}
		if n, err = size(); err != nil {
			return page, err
		}
	}
	page.Returned = len(rv.NeedsReply) + len(rv.LowPriority) + len(rv.SkipSummary)
	if page.Returned < total {
		page.Truncated = true
		page.Note = fmt.Sprintf("showing %d of %d threads to stay under %d KB (the least urgent were left out; counts include all): review fewer days or ask for less context", page.Returned, total, MaxResultBytes>>10)
	}
	return page, nil
}

// ---- get_response_stats ----

// ResponseStatsInput is get_response_stats' argument object.
type ResponseStatsInput struct {
	Chat  string        `json:"chat" jsonschema:"a contact name, phone number, e-mail address, conversation id or chat id"`
	Hours coerce.Number `json:"hours,omitzero" jsonschema:"at most 8760 (default 24)"`
}

// ResponseStatsOutput is get_response_stats' result.
type ResponseStatsOutput struct {
	service.ResponseStats
}

var getResponseStats = Define(Tool{
	Name:         "get_response_stats",
	Title:        "How fast do I reply",
	Description:  "How fast the user replies to one person or conversation over the last hours hours (default 24): reply count, average, median, minimum and maximum in seconds, message totals. A reply is the user's first message after the other side's turn; with none the times are null. No message text.",
	Toolset:      ToolsetTriage,
	ReadOnly:     Yes,
	Destructive:  No,
	Idempotent:   Yes,
	OpenWorld:    No,
	Instructions: "get_response_stats answers how fast the user replies to someone; it returns figures, not messages.",
}, func(d *Deps) mcp.ToolHandlerFor[ResponseStatsInput, ResponseStatsOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in ResponseStatsInput) (*mcp.CallToolResult, ResponseStatsOutput, error) {
		svc, err := messages(d)
		if err != nil {
			return nil, ResponseStatsOutput{}, err
		}
		hours, err := coerce.Float(in.Hours, coerce.FloatSpec{Name: "hours", Default: service.DefaultStatsHours, Min: 0, MinExclusive: true, Max: service.MaxStatsHours})
		if err != nil {
			return nil, ResponseStatsOutput{}, err
		}
		st, err := svc.ResponseStats(ctx, service.StatsParams{Chat: in.Chat, Hours: hours})
		if err != nil {
			return nil, ResponseStatsOutput{}, err
		}
		return nil, ResponseStatsOutput{st}, nil
	}
})
