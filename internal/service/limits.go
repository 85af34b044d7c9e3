package service

import (
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/triage"
)

// The bounds of the query layer's pages and lists, in one place: the
// service applies them, the MCP tools (internal/mcpserver) clamp their
// arguments with them and state them in their schemas, and the bridge
// (internal/bridge) caps the pages it asks for with them, so the three can
// not drift apart (docs/tools.md lists them per tool).
const (
	// list_conversations: conversations per page.
	DefaultListLimit = 20
	MaxListLimit     = 200

	// get_conversation_messages: messages per page (the page cap the
	// bridge's chat_history pages through).
	DefaultMessagesLimit = 50
	MaxMessagesLimit     = 200

	// search_messages: hits per page (the index's own bounds, which it
	// applies), neighbouring messages per hit, and how far back a days
	// filter may reach.
	DefaultSearchLimit = index.DefaultLimit
	MaxSearchLimit     = index.MaxLimit
	MaxSearchContext   = 5
	MaxSearchDays      = 3650

	// review_messages: the bridge protocol's days, (0, 90], default 2, and the
	// recent messages shown per thread.
	DefaultReviewDays    = triage.DefaultDays
	MaxReviewDays        = triage.MaxDays
	DefaultReviewContext = triage.DefaultContext
	MaxReviewContext     = 10
)
