//go:build unix

package bridge

import (
	"context"
	"fmt"
)

// HostBackend serves a host bridge. Each part is optional; a missing part
// answers its actions with ErrUnavailable and a sentence saying why.
type HostBackend struct {
	// Data answers review, search, chat_history, response_stats and
	// contacts_lookup (the query layer, with read policy and redaction).
	Data Backend
	// Send is the send gate for send_preview and send.
	Gate *SendGate
	// Closers run when the worker closes the backend.
	Closers []func()
}

func (h *HostBackend) data() Backend {
	if h.Data == nil {
		return Unsupported{Reason: "this helper has no message index"}
	}
	return h.Data
}

func (h *HostBackend) Review(ctx context.Context, p ReviewParams) (ReviewResult, error) {
	return h.data().Review(ctx, p)
}
func (h *HostBackend) Search(ctx context.Context, p SearchParams) (SearchResult, error) {
	return h.data().Search(ctx, p)
}
func (h *HostBackend) ChatHistory(ctx context.Context, p ChatHistoryParams) (ChatHistoryResult, error) {
	return h.data().ChatHistory(ctx, p)
}
func (h *HostBackend) ResponseStats(ctx context.Context, p ResponseStatsParams) (ResponseStatsResult, error) {
	return h.data().ResponseStats(ctx, p)
}
func (h *HostBackend) ContactsLookup(ctx context.Context, p ContactsLookupParams) (ContactsLookupResult, error) {
	return h.data().ContactsLookup(ctx, p)
}

// ListChats is never served to a host (the worker refuses it first); the
// backend refuses too.
func (h *HostBackend) ListChats(context.Context, ListChatsParams) (ListChatsResult, error) {
	return ListChatsResult{}, fmt.Errorf("list_chats is %w on a host bridge", ErrUnavailable)
}

func (h *HostBackend) SendPreview(ctx context.Context, p SendPreviewParams) (SendPreviewResult, error) {
	if h.Gate == nil {
		return SendPreviewResult{}, fmt.Errorf("send_preview is %w: this helper has no send gate", ErrUnavailable)
	}
	return h.Gate.SendPreview(ctx, p)
}

func (h *HostBackend) Send(ctx context.Context, p SendParams) (SendResult, error) {
	if h.Gate == nil {
		return SendResult{}, fmt.Errorf("send is %w: this helper has no send gate", ErrUnavailable)
	}
	return h.Gate.Send(ctx, p)
}

// Close runs the closers, last first.
func (h *HostBackend) Close() error {
	for i := len(h.Closers) - 1; i >= 0; i-- {
		h.Closers[i]()
	}
	return nil
}
