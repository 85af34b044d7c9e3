package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidings-mcp/tidings/internal/output"
	"github.com/tidings-mcp/tidings/internal/policy/coerce"
	"github.com/tidings-mcp/tidings/internal/service"
)

// MessageService is what the message, triage, contacts and attachment
// tools need; internal/service's *Service implements it. Its results carry
// bodies already redacted and sanitised; the tools wrap them in
// <untrusted_external_content> (the bridge does not).
type MessageService interface {
	ListConversations(ctx context.Context, p service.ListParams) (service.ConversationList, error)
	Messages(ctx context.Context, p service.MessagesParams) (service.MessagePage, error)
	Search(ctx context.Context, p service.SearchParams) (service.SearchResult, error)
	Review(ctx context.Context, p service.ReviewParams) (service.Review, error)
	ResponseStats(ctx context.Context, p service.StatsParams) (service.ResponseStats, error)
	LookupContacts(ctx context.Context, p service.LookupParams) (service.ContactLookup, error)
	Dossier(ctx context.Context, p service.DossierParams) (service.DossierReport, error)
	SaveAttachment(ctx context.Context, p service.SaveParams) (service.Saved, error)
	ViewAttachment(ctx context.Context, p service.ViewParams) (service.ViewedImage, error)
	Status(ctx context.Context) (service.Status, error)
}

// errNoMessages is the answer of every message tool in a process without
// message data.
var errNoMessages = errors.New("no message index is available in this process: run `tidings index` (or configure a source and restart) and see get_status for what was found")

func messages(d *Deps) (MessageService, error) {
	if d.Messages == nil {
		return nil, errNoMessages
	}
	return d.Messages, nil
}

// wrapBody wraps a non-empty body (already redacted and sanitised by the
// service) in the untrusted-content element.
func wrapBody(s string) string {
	if s == "" {
		return ""
	}
	return output.Wrapped(s)
}

// ---- list_conversations ----

// ListConversationsInput is list_conversations' argument object.
type ListConversationsInput struct {
	Limit      coerce.Number `json:"limit,omitzero" jsonschema:"1-200 (default 20)"`
	Days       coerce.Number `json:"days,omitzero" jsonschema:"active in the last N days, at most 90 (default 90)"`
	Query      string        `json:"query,omitempty" jsonschema:"keep conversations whose name, chat id or a participant's handle contains this"`
	UnreadOnly bool          `json:"unread_only,omitempty"`
	Cursor     string        `json:"cursor,omitempty" jsonschema:"next_cursor of a previous call"`
}

// ListConversationsOutput is list_conversations' result.
type ListConversationsOutput struct {
	WindowDays    float64                       `json:"window_days"`
	Count         int                           `json:"count"`
	Total         int                           `json:"total" jsonschema:"conversations active in the window that the read policy allows"`
	Conversations []service.ConversationSummary `json:"conversations"`
	// Page says whether more conversations exist (the service's own
	// truncated flag is folded into it: one meaning, one field).
	Page Page `json:"page"`
}

var listConversations = Define(Tool{
	Name:         "list_conversations",
	Title:        "List recent conversations",
	Description:  "Conversations active in the last 90 days (or days) that the read policy allows, newest first: id, kind, label, up to 10 participants, service, message count, last activity. No message text.",
	Toolset:      ToolsetMessages,
	ReadOnly:     Yes,
	Destructive:  No,
	Idempotent:   Yes,
	OpenWorld:    No,
	Instructions: "list_conversations is for browsing; to find what needs attention use review_messages instead.",
}, func(d *Deps) mcp.ToolHandlerFor[ListConversationsInput, ListConversationsOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in ListConversationsInput) (*mcp.CallToolResult, ListConversationsOutput, error) {
		svc, err := messages(d)
		if err != nil {
			return nil, ListConversationsOutput{}, err
		}
		limit, err := coerce.Int(in.Limit, coerce.IntSpec{Name: "limit", Default: service.DefaultListLimit, Min: 1, Max: service.MaxListLimit, Clamp: true})
		if err != nil {
			return nil, ListConversationsOutput{}, err
		}
		days, err := coerce.Days(in.Days, coerce.DaysSpec{Name: "days", Default: service.ReadWindowDays, Max: service.ReadWindowDays, Clamp: true})
		if err != nil {
			return nil, ListConversationsOutput{}, err
		}
		offset, err := offsetCursor(in.Cursor)
		if err != nil {
			return nil, ListConversationsOutput{}, err
		}
		l, err := svc.ListConversations(ctx, service.ListParams{Limit: limit, Offset: offset, Days: days, Query: in.Query, UnreadOnly: in.UnreadOnly})
		if err != nil {
			return nil, ListConversationsOutput{}, err
		}
		kept, page, err := Cut(l.Conversations, 512, func(n int) string { return "o" + strconv.Itoa(offset+n) })
		if err != nil {
			return nil, ListConversationsOutput{}, err
		}
		if !page.Truncated && l.Truncated && offset+len(kept) < l.Total {
			page.Truncated = true
			page.NextCursor = "o" + strconv.Itoa(offset+len(kept))
			page.Note = fmt.Sprintf("%s more active in the window; pass next_cursor to continue, or narrow with query or days", output.Count(l.Total-offset-len(kept), "conversation"))
		}
		page.Total = l.Total
		return nil, ListConversationsOutput{WindowDays: l.WindowDays, Count: len(kept), Total: l.Total, Conversations: kept, Page: page}, nil
	}
})

func offsetCursor(c string) (int, error) {
	c = strings.TrimSpace(c)
	if c == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(c, "o"))
	if err != nil || !strings.HasPrefix(c, "o") || n < 0 || n > 100000 {
		return 0, errors.New("the cursor is not valid for this request; start again without it")
	}
	return n, nil
}

// ---- get_conversation_messages ----

// GetMessagesInput is get_conversation_messages' argument object.
type GetMessagesInput struct {
	ConversationID  string        `json:"conversation_id,omitempty" jsonschema:"a conversation id (or chat id); give this or chat"`
	Chat            string        `json:"chat,omitempty" jsonschema:"a contact name, phone number, e-mail address or chat id"`
	Limit           coerce.Number `json:"limit,omitzero" jsonschema:"1-200 (default 50)"`
	BeforeTimestamp string        `json:"before_timestamp,omitempty" jsonschema:"RFC 3339 time: only messages before it"`
	DateFrom        string        `json:"date_from,omitempty" jsonschema:"ISO-8601; date_to inclusive"`
	DateTo          string        `json:"date_to,omitempty"`
	UnreadOnly      bool          `json:"unread_only,omitempty"`
	Cursor          string        `json:"cursor,omitempty" jsonschema:"next_cursor of a previous page"`
}

// GetMessagesOutput is get_conversation_messages' result.
type GetMessagesOutput struct {
	service.MessagePage
	Page Page `json:"page"`
}

var getConversationMessages = Define(Tool{
	Name:         "get_conversation_messages",
	Title:        "Read a conversation",
	Description:  "Read one conversation, oldest first: the newest limit messages before the cursor. Name it by conversation_id or chat (a name, phone number, e-mail address or chat id; a person's SMS and iMessage threads are read together). Messages carry sender, time, text, reactions, edits, attachment ids and send errors. An ambiguous name is an error listing the matches: ask the user.",
	Toolset:      ToolsetMessages,
	ReadOnly:     Yes,
	Destructive:  No,
	Idempotent:   Yes,
	OpenWorld:    No,
	Instructions: "Use get_conversation_messages with a conversation_id from another tool's result, or with chat set to the person's name, number or address; when a name fits several people the error lists them: ask the user which one, never guess.",
}, func(d *Deps) mcp.ToolHandlerFor[GetMessagesInput, GetMessagesOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in GetMessagesInput) (*mcp.CallToolResult, GetMessagesOutput, error) {
		svc, err := messages(d)
		if err != nil {
			return nil, GetMessagesOutput{}, err
		}
		limit, err := coerce.Int(in.Limit, coerce.IntSpec{Name: "limit", Default: service.DefaultMessagesLimit, Min: 1, Max: service.MaxMessagesLimit, Clamp: true})
		if err != nil {
			return nil, GetMessagesOutput{}, err
		}
		if strings.TrimSpace(in.ConversationID) == "" && strings.TrimSpace(in.Chat) == "" {
			return nil, GetMessagesOutput{}, errors.New("give conversation_id (from list_conversations) or chat (a contact name, phone number, e-mail address or chat id)")
		}
		var before time.Time
		if in.BeforeTimestamp != "" && in.Cursor == "" {
			if before, err = ParseTimestamp(in.BeforeTimestamp, d.Now()); err != nil {
				return nil, GetMessagesOutput{}, err
			}
		}
		pg, err := svc.Messages(ctx, service.MessagesParams{ConversationID: in.ConversationID, Chat: in.Chat, Limit: limit, Before: before, Cursor: in.Cursor,
			DateFrom: in.DateFrom, DateTo: in.DateTo, UnreadOnly: in.UnreadOnly})
		if err != nil {
			return nil, GetMessagesOutput{}, err
		}
		for i := range pg.Messages {
			pg.Messages[i] = wrapMessage(pg.Messages[i])
		}
		// Keep the newest messages that fit; the cursor continues before
		// the oldest one kept.
		rev := slices.Clone(pg.Messages)
		slices.Reverse(rev)
		n, err := FitItems(rev, MaxResultBytes, 1024)
		if err != nil {
			return nil, GetMessagesOutput{}, err
		}
		page := Page{Returned: n, Total: len(pg.Messages)}
		if n < len(pg.Messages) {
			drop := len(pg.Messages) - n
			pg.Messages = pg.Messages[drop:]
			pg.More = true
			pg.NextCursor = service.PageCursor(pg.Messages, in.Cursor)
			pg.NextBeforeTimestamp = pg.Messages[0].Time.Format("2006-01-02T15:04:05.000Z07:00")
			page.Truncated = true
			page.Note = fmt.Sprintf("showing the newest %d of %d messages to stay under %d KB; pass next_cursor for the older ones", n, page.Total, MaxResultBytes>>10)
		}
		pg.Count = len(pg.Messages)
		page.NextCursor = pg.NextCursor
		if pg.More && !page.Truncated {
			page.Note = "older messages exist; pass next_cursor (or next_before_timestamp as before_timestamp) to read them"
		}
		return nil, GetMessagesOutput{MessagePage: pg, Page: page}, nil
	}
})

// wrapMessage wraps a message's body fields.
func wrapMessage(m service.Message) service.Message {
	m.Text = wrapBody(m.Text)
	m.Subject = wrapBody(m.Subject)
	m.Transcript = wrapBody(m.Transcript)
	if m.Edits != nil {
		edits := make([]service.Edit, len(m.Edits))
		for i, e := range m.Edits {
			e.Text = wrapBody(e.Text)
			edits[i] = e
		}
		m.Edits = edits
	}
	return m
}

// ParseTimestamp reads an ISO-8601 time: RFC 3339 with or without
// fractional seconds, a local date-time without offset (read in now's
// zone), or a date (its midnight). The year must be 1..9999.
func ParseTimestamp(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02"} {
		var t time.Time
		var err error
		if strings.Contains(layout, "Z07") {
			t, err = time.Parse(layout, s)
		} else {
			t, err = time.ParseInLocation(layout, s, now.Location())
		}
		if err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("before_timestamp must be an ISO-8601 time such as 2026-11-30T09:00:00-08:00 or a date such as 2026-11-30 (got %q)", output.Name(clip(s, 40)))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := n; i > 0; i-- {
		if (s[i] & 0xC0) != 0x80 {
			return s[:i] + "…"
		}
	}
	return ""
}

// ---- search_messages ----

// SearchMessagesInput is search_messages' argument object.
type SearchMessagesInput struct {
	Query          string        `json:"query,omitempty" jsonschema:"a question, words or a \"quoted phrase\" (omit to browse)"`
	ConversationID string        `json:"conversation_id,omitempty" jsonschema:"only this conversation id or chat id"`
	Contact        string        `json:"contact,omitempty" jsonschema:"only this person: a name, phone number or e-mail address"`
	Limit          coerce.Number `json:"limit,omitzero" jsonschema:"1-100 (default 10)"`
	Mode           string        `json:"mode,omitempty" jsonschema:"default hybrid"`
	Days           coerce.Number `json:"days,omitzero" jsonschema:"only the last N days, at most 3650"`
	DateFrom       string        `json:"date_from,omitempty" jsonschema:"ISO-8601; date_to inclusive"`
	DateTo         string        `json:"date_to,omitempty"`
	FromMe         *bool         `json:"from_me,omitempty" jsonschema:"true: only the user's messages; false: only others'"`
	Context        coerce.Number `json:"context,omitzero" jsonschema:"neighbouring messages per hit, 0-5 (default 0)"`
	Cursor         string        `json:"cursor,omitempty" jsonschema:"next_cursor of a previous call"`
}

// SearchMessagesOutput is search_messages' result.
type SearchMessagesOutput struct {
	service.SearchResult
	Page Page `json:"page"`
}

// inferSchema infers an input schema the way Define does, for tools that
// then adjust it (enums).
func inferSchema[In any]() *jsonschema.Schema {
	s, err := jsonschema.ForType(reflect.TypeFor[In](), &jsonschema.ForOptions{TypeSchemas: coerce.TypeSchemas()})
	if err != nil {
		panic("input schema: " + err.Error())
	}
	return s
}

func searchSchema() any {
	s := inferSchema[SearchMessagesInput]()
	s.Properties["mode"].Enum = []any{"hybrid", "fulltext", "substring", "semantic"}
	return s
}

var searchMessages = Define(Tool{
	Name:        "search_messages",
	Title:       "Search messages",
	Description: "Search the user's messages. hybrid (default) fuses words (stemming, typos) and meaning; fulltext, substring (exact, newest first) and semantic also exist. 'last week' or 'in March' filter dates. Hits carry conversation, sender, time and text (a snippet with **matches** when long). When scan_complete is false a match may be missing; notes say why.",
	Toolset:     ToolsetMessages,
	ReadOnly:    Yes,
	Destructive: No,
	Idempotent:  Yes,
	OpenWorld:   No,
	// The query is embedded through the configured embedder: open world
	// when that is an allowed http endpoint.
	OpenWorldVia: []Endpoint{EndpointEmbedder},
	Instructions: "For what someone said about something, call search_messages once with a natural-language query and contact (and days when the user gives a period); add context: 2 to see the surrounding conversation in the same call. If scan_complete is false, say the answer may be incomplete.",
	InputSchema:  searchSchema(),
}, func(d *Deps) mcp.ToolHandlerFor[SearchMessagesInput, SearchMessagesOutput] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in SearchMessagesInput) (*mcp.CallToolResult, SearchMessagesOutput, error) {
		svc, err := messages(d)
		if err != nil {
			return nil, SearchMessagesOutput{}, err
		}
		limit, err := coerce.Int(in.Limit, coerce.IntSpec{Name: "limit", Default: service.DefaultSearchLimit, Min: 1, Max: service.MaxSearchLimit, Clamp: true})
		if err != nil {
			return nil, SearchMessagesOutput{}, err
		}
		days, err := coerce.Days(in.Days, coerce.DaysSpec{Name: "days", Max: service.MaxSearchDays, Clamp: true})
		if err != nil {
			return nil, SearchMessagesOutput{}, err
		}
		nctx, err := coerce.Int(in.Context, coerce.IntSpec{Name: "context", Default: 0, Min: 0, Max: service.MaxSearchContext, Clamp: true})
		if err != nil {
			return nil, SearchMessagesOutput{}, err
		}
		prm := service.SearchParams{Query: in.Query, Mode: in.Mode, ConversationID: in.ConversationID, Contact: in.Contact,
			Days: days, DateFrom: in.DateFrom, DateTo: in.DateTo, FromMe: in.FromMe, Limit: limit, Context: nctx, Cursor: in.Cursor}
		res, err := svc.Search(ctx, prm)
		if err != nil {
			return nil, SearchMessagesOutput{}, err
		}
		wrapHits(&res)
		n, err := FitItems(res.Hits, MaxResultBytes, 2048)
		if err != nil {
			return nil, SearchMessagesOutput{}, err
		}
		page := Page{Returned: len(res.Hits), Total: len(res.Hits), NextCursor: res.NextCursor}
		if n < len(res.Hits) && in.Cursor == "" {
			// Ask again for fewer hits so the index's cursor continues
			// exactly after the last one shown.
			prm.Limit = n
			if res, err = svc.Search(ctx, prm); err != nil {
				return nil, SearchMessagesOutput{}, err
			}
			wrapHits(&res)
			page = Page{Returned: len(res.Hits), Total: len(res.Hits), NextCursor: res.NextCursor, Truncated: true,
				Note: fmt.Sprintf("showing %s to stay under %d KB; pass next_cursor (with the same arguments) for more, or use less context", output.Count(len(res.Hits), "hit"), MaxResultBytes>>10)}
		} else if n < len(res.Hits) {
			res.Hits = res.Hits[:n]
			page = Page{Returned: n, Total: page.Total, Truncated: true,
				Note: fmt.Sprintf("showing %d of %d hits to stay under %d KB; repeat the search with a smaller limit or less context", n, page.Total, MaxResultBytes>>10)}
			res.NextCursor = ""
		}
		res.MatchCount = len(res.Hits)
		return nil, SearchMessagesOutput{SearchResult: res, Page: page}, nil
	}
})

func wrapHits(res *service.SearchResult) {
	for i := range res.Hits {
		h := &res.Hits[i]
		h.Text = wrapBody(h.Text)
		h.Snippet = wrapBody(h.Snippet)
		h.Transcript = wrapBody(h.Transcript)
		for j := range h.Before {
			h.Before[j].Text = wrapBody(h.Before[j].Text)
		}
		for j := range h.After {
			h.After[j].Text = wrapBody(h.After[j].Text)
		}
	}
}
