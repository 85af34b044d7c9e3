package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Backend answers the data actions. It is the consumer-owned interface the
// worker calls after it has validated the request, the role and the
// parameters; implementations apply the read policy and redaction (the
// bridge returns plain text fields, never untrusted-content wrapping).
//
// The worker opens a Backend lazily through [Options.Open], only for an
// action the role permits, so a refused request never opens a database.
// Echo fields (days, term, chat_query, hours, window_days) and counts are
// set by the worker from the validated parameters and the returned lists.
// The worker answers several requests at once (Options.Parallel), so the
// methods must be safe for concurrent use.
type Backend interface {
	Review(ctx context.Context, p ReviewParams) (ReviewResult, error)
	Search(ctx context.Context, p SearchParams) (SearchResult, error)
	ChatHistory(ctx context.Context, p ChatHistoryParams) (ChatHistoryResult, error)
	ResponseStats(ctx context.Context, p ResponseStatsParams) (ResponseStatsResult, error)
	ContactsLookup(ctx context.Context, p ContactsLookupParams) (ContactsLookupResult, error)
	ListChats(ctx context.Context, p ListChatsParams) (ListChatsResult, error)
	SendPreview(ctx context.Context, p SendPreviewParams) (SendPreviewResult, error)
	Send(ctx context.Context, p SendParams) (SendResult, error)
}

// ErrUnavailable is wrapped by a Backend that cannot serve an action in
// this process (no index yet, no send gate on this platform).
var ErrUnavailable = errors.New("not available")

// ErrNotFound is wrapped when a chat, contact or item does not exist (or
// the read policy hides it); it is never turned into an empty result.
var ErrNotFound = errors.New("not found")

// Unsupported is a Backend whose every method returns ErrUnavailable.
// Embed it to implement part of the interface.
type Unsupported struct{ Reason string }

func (u Unsupported) err(action string) error {
	if u.Reason != "" {
		return fmt.Errorf("%s is %w: %s", action, ErrUnavailable, u.Reason)
	}
	return fmt.Errorf("%s is %w in this helper", action, ErrUnavailable)
}

func (u Unsupported) Review(context.Context, ReviewParams) (ReviewResult, error) {
	return ReviewResult{}, u.err(ActionReview)
}
func (u Unsupported) Search(context.Context, SearchParams) (SearchResult, error) {
	return SearchResult{}, u.err(ActionSearch)
}
func (u Unsupported) ChatHistory(context.Context, ChatHistoryParams) (ChatHistoryResult, error) {
	return ChatHistoryResult{}, u.err(ActionChatHistory)
}
func (u Unsupported) ResponseStats(context.Context, ResponseStatsParams) (ResponseStatsResult, error) {
	return ResponseStatsResult{}, u.err(ActionResponseStats)
}
func (u Unsupported) ContactsLookup(context.Context, ContactsLookupParams) (ContactsLookupResult, error) {
	return ContactsLookupResult{}, u.err(ActionContactsLookup)
}
func (u Unsupported) ListChats(context.Context, ListChatsParams) (ListChatsResult, error) {
	return ListChatsResult{}, u.err(ActionListChats)
}
func (u Unsupported) SendPreview(context.Context, SendPreviewParams) (SendPreviewResult, error) {
	return SendPreviewResult{}, u.err(ActionSendPreview)
}
func (u Unsupported) Send(context.Context, SendParams) (SendResult, error) {
	return SendResult{}, u.err(ActionSend)
}

// Extension is a protocol 1.3 action: served only to requests that carry
// "protocol_version": "1.3" (a 1.2 client sees exactly 1.2) and only to
// the roles it names. An extension that returns message bodies is never
// served on a manager bridge, whatever Manager says.
type Extension struct {
	Name          string
	Host, Manager bool
	ReturnsBodies bool
	// Handle answers the request. params is the request's params object;
	// b is the lazily opened Backend (type-assert it to what you need).
	// The result must marshal to a JSON object without the envelope keys
	// id, ok, action, error and error_code.
	Handle func(ctx context.Context, b Backend, params json.RawMessage) (any, error)
}

func (e Extension) spec() actionSpec {
	return actionSpec{host: e.Host, manager: e.Manager, bodies: e.ReturnsBodies}
}

// Parameters, validated by the worker (see params.go for bounds and
// defaults).
type (
	ReviewParams struct{ Days float64 }
	SearchParams struct {
		Term  string
		Days  float64
		Limit int
	}
	ChatHistoryParams struct {
		Chat  string
		Days  float64
		Limit int
	}
	ResponseStatsParams struct {
		Chat  string
		Hours float64
	}
	// ContactsLookupParams carries the role: a host bridge filters matches
	// by the read policy, a manager bridge does not (role table,
	// docs/bridge.md).
	ContactsLookupParams struct {
		Name string
		Role Role
	}
	ListChatsParams struct {
		Days          float64
		Limit         int
		IncludeGroups bool
		// Query is a case-insensitive substring of label, display_name,
		// chat_id or a participant handle; "" means no filter.
		Query string
	}
	SendPreviewParams struct{ To, Text, Service string }
	SendParams        struct{ To, Text, Service, Nonce string }
)

// Results: protocol 1.2's response shapes, minus the envelope (id, ok,
// action). Lists are never null on the wire (the worker fills nil slices).
type (
	ReviewResult struct {
		Days        float64        `json:"days"`
		Counts      ReviewCounts   `json:"counts"`
		NeedsReply  []ReviewThread `json:"needs_reply"`
		LowPriority []ReviewThread `json:"low_priority"`
		SkipSummary []SkipEntry    `json:"skip_summary"`
	}
	ReviewCounts struct {
		NeedsReply    int `json:"needs_reply"`
		LowPriority   int `json:"low_priority"`
		Skip          int `json:"skip"`
		TotalMessages int `json:"total_messages"`
	}
	ReviewThread struct {
		ChatID      string           `json:"chat_id"`
		Label       string           `json:"label"`
		ContactName string           `json:"contact_name"`
		DisplayName string           `json:"display_name"`
		LastTS      string           `json:"last_ts"`
		LastText    string           `json:"last_text"`
		Context     []ContextMessage `json:"context"`
		MsgCount    int              `json:"msg_count"`
	}
	ContextMessage struct {
		TS   string `json:"ts"`
		Me   bool   `json:"me"`
		Text string `json:"text"`
	}
	SkipEntry struct {
		ChatID string `json:"chat_id"`
		Label  string `json:"label"`
		LastTS string `json:"last_ts"`
	}

	SearchResult struct {
		Term       string    `json:"term"`
		Days       float64   `json:"days"`
		MatchCount int       `json:"match_count"`
		Matches    []Message `json:"matches"`
	}
	// Message is a message in search and chat_history results.
	Message struct {
		ChatID      string `json:"chat_id"`
		ContactName string `json:"contact_name"`
		TS          string `json:"ts"`
		IsFromMe    bool   `json:"is_from_me"`
		Text        string `json:"text"`
	}

	ChatHistoryResult struct {
		ChatQuery      string    `json:"chat_query"`
		ResolvedSubstr string    `json:"resolved_substr"`
		Count          int       `json:"count"`
		Messages       []Message `json:"messages"`
	}

	// ResponseStatsResult's second figures are null when there is no
	// sample (no reply in the window): a zero would be a false average.
	ResponseStatsResult struct {
		ChatQuery             string  `json:"chat_query"`
		ResolvedSubstr        string  `json:"resolved_substr"`
		Hours                 float64 `json:"hours"`
		SampleSize            int     `json:"sample_size"`
		AvgSeconds            *int64  `json:"avg_seconds"`
		AvgHuman              string  `json:"avg_human"`
		MedianSeconds         *int64  `json:"median_seconds"`
		MinSeconds            *int64  `json:"min_seconds"`
		MaxSeconds            *int64  `json:"max_seconds"`
		TotalInboundMessages  int     `json:"total_inbound_messages"`
		TotalOutboundMessages int     `json:"total_outbound_messages"`
	}

	ContactsLookupResult struct {
		Query      string         `json:"query"`
		MatchCount int            `json:"match_count"`
		Matches    []ContactMatch `json:"matches"`
	}
	// ContactMatch holds phone_last10 or email, depending on the contact's
	// identifier.
	ContactMatch struct {
		Name        string `json:"name"`
		PhoneLast10 string `json:"phone_last10,omitempty"`
		Email       string `json:"email,omitempty"`
	}

	ListChatsResult struct {
		WindowDays float64     `json:"window_days"`
		ChatCount  int         `json:"chat_count"`
		Truncated  bool        `json:"truncated"`
		Chats      []ChatEntry `json:"chats"`
	}
	ChatEntry struct {
		ChatID           string   `json:"chat_id"`
		Kind             string   `json:"kind"` // "group" or "direct"
		DisplayName      string   `json:"display_name"`
		Label            string   `json:"label"`
		Participants     []string `json:"participants"` // at most 10
		ParticipantCount int      `json:"participant_count"`
		Service          string   `json:"service"`
		MessageCount     int      `json:"message_count"`
		LastActivityDate string   `json:"last_activity_date"` // ISO day
	}

	SendPreviewResult struct {
		Preview             PreviewInfo `json:"preview"`
		SendNonce           string      `json:"send_nonce,omitempty"`
		SendNonceTTLSeconds int         `json:"send_nonce_ttl_seconds,omitempty"`
		// Extra fields are sent to 1.3 clients only.
		Extra map[string]any `json:"-"`
	}
	PreviewInfo struct {
		To           string `json:"to"`
		ResolvedName string `json:"resolved_name"`
		Service      string `json:"service"`
		Text         string `json:"text"`
		TextLength   int    `json:"text_length"`
		Blocked      bool   `json:"blocked"`
	}

	SendResult struct {
		Sent SentInfo `json:"sent"`
		// Extra fields (delivery verification) go to 1.3 clients only.
		Extra map[string]any `json:"-"`
	}
	SentInfo struct {
		To           string `json:"to"`
		ResolvedName string `json:"resolved_name"`
		Service      string `json:"service"`
		TextLength   int    `json:"text_length"`
		SentAt       string `json:"sent_at"`
	}
)

// Coded is implemented by backend errors that carry a 1.3 error_code.
type Coded interface{ BridgeCode() string }

// Detailed is implemented by backend errors that carry extra fields for a
// 1.3 error response (a failed send's "sent" and "delivery"). Keys that
// collide with the error envelope are dropped.
type Detailed interface{ BridgeDetail() map[string]any }

// errorCode classifies a backend error for 1.3 responses.
func errorCode(err error) string {
	var c Coded
	if errors.As(err, &c) && c.BridgeCode() != "" {
		return c.BridgeCode()
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return CodeNotFound
	case errors.Is(err, ErrUnavailable):
		return CodeUnavailable
	}
	var re *RequestError
	if errors.As(err, &re) {
		return re.Code
	}
	return CodeInternal
}
