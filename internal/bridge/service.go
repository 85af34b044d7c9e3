//go:build unix

package bridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tidings-mcp/tidings/internal/service"
)

// The query layer over the bridge. A host helper answers protocol 1.2's
// data actions from internal/service (ServiceData) and offers every
// message tool of the MCP server as a typed 1.3 action (ServiceExtensions),
// so `tidings serve --bridge` (RemoteMessages) returns exactly what the
// in-process server returns. Bodies arrive redacted and sanitised from the
// service and are returned plain, as the protocol says; the MCP side wraps
// them.

// The 1.3 extension actions, named after the MCP tools they serve.
const (
	ExtListConversations = "list_conversations"
	ExtMessages          = "get_conversation_messages"
	ExtSearchMessages    = "search_messages"
	ExtReviewMessages    = "review_messages"
	ExtResponseStats     = "get_response_stats"
	ExtLookupContacts    = "lookup_contacts"
	ExtDossier           = "get_contact_dossier"
	ExtServiceStatus     = "service_status"
	// ExtAttachmentImage returns an image attachment's checked bytes, as
	// stored, for save_attachment; the client writes the file (see
	// RemoteMessages.SaveAttachment). The name predates get_attachment
	// and stays: 1.3 clients call it.
	ExtAttachmentImage = "get_attachment_image"
	// ExtViewAttachment serves get_attachment: the helper decodes the
	// attachment and returns the re-encoded picture within the size's
	// byte budget (at most 3.5 MB), never the file as stored.
	ExtViewAttachment = "get_attachment"
)

// MaxBridgeAttachmentBytes caps an image sent over the bridge: as base64
// in a response file it stays well under the client's MaxResponseSize
// (64 MiB). Larger images are saved in-process only.
const MaxBridgeAttachmentBytes = 32 << 20

// seedTime is protocol 1.2's timestamp format (local time, no zone).
const seedTime = "2006-01-02T15:04:05"

// ServiceData answers review, search, chat_history, response_stats and
// contacts_lookup with protocol 1.2's response shapes.
type ServiceData struct {
	Unsupported
	S *service.Service
	// Now is the clock of chat_history's window; Location formats the
	// protocol 1.2's timestamps (default local time).
	Now      func() time.Time
	Location *time.Location
}

func (d *ServiceData) ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	loc := d.Location
	if loc == nil {
		loc = time.Local
	}
	return t.In(loc).Format(seedTime)
}

func (d *ServiceData) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Review implements Backend.
func (d *ServiceData) Review(ctx context.Context, p ReviewParams) (ReviewResult, error) {
	floor := d.S.ReadWindowStart(MaxReadDays)
	rv, err := d.S.Review(ctx, service.ReviewParams{Days: p.Days})
	if err != nil {
		return ReviewResult{}, serviceErr(err)
	}
	out := ReviewResult{Days: rv.Days, Counts: ReviewCounts(rv.Counts)}
	thread := func(t service.ReviewThread) ReviewThread {
		r := ReviewThread{ChatID: t.ChatID, Label: t.Label, ContactName: t.ContactName, DisplayName: t.DisplayName,
			LastTS: d.ts(t.LastTime), LastText: t.LastText, MsgCount: t.MsgCount, Context: []ContextMessage{}}
		for _, c := range recentReview(t.Context, floor) { // nothing older than the read window
			r.Context = append(r.Context, ContextMessage{TS: d.ts(c.Time), Me: c.Me, Text: c.Text})
		}
		return r
	}
	for _, t := range rv.NeedsReply {
		out.NeedsReply = append(out.NeedsReply, thread(t))
	}
	for _, t := range rv.LowPriority {
		out.LowPriority = append(out.LowPriority, thread(t))
	}
	for _, s := range rv.SkipSummary {
		out.SkipSummary = append(out.SkipSummary, SkipEntry{ChatID: s.ChatID, Label: s.Label, LastTS: d.ts(s.LastTime)})
	}
	return out, nil
}

// contactName is protocol 1.2's contact_name: the sender's name for an
// incoming message, "" for mine or an unknown handle.
func contactName(fromMe bool, sender, handle string) string {
	if fromMe || sender == handle {
		return ""
	}
	return sender
}

// Search implements Backend: protocol 1.2's case-insensitive substring search
// across all threads, newest first, read in pages of the query layer's
// size until limit hits are collected.
func (d *ServiceData) Search(ctx context.Context, p SearchParams) (SearchResult, error) {
	out := SearchResult{Matches: []Message{}}
	cursor := ""
	for len(out.Matches) < p.Limit {
		page := min(p.Limit-len(out.Matches), service.MaxSearchLimit)
		r, err := d.S.Search(ctx, service.SearchParams{Query: p.Term, Mode: "substring", Days: p.Days, Limit: page, Cursor: cursor})
		if err != nil {
			return SearchResult{}, serviceErr(err)
		}
		for _, h := range r.Hits {
			out.Matches = append(out.Matches, Message{ChatID: h.Conversation.ChatID, ContactName: contactName(h.FromMe, h.Sender, h.SenderHandle),
				TS: d.ts(h.Time), IsFromMe: h.FromMe, Text: h.Text})
		}
		if r.NextCursor == "" || len(r.Hits) == 0 {
			break
		}
		cursor = r.NextCursor
	}
	return out, nil
}

// ChatHistory implements Backend: the thread's messages of the last Days
// days (at most Limit, the newest), oldest first.
func (d *ServiceData) ChatHistory(ctx context.Context, p ChatHistoryParams) (ChatHistoryResult, error) {
	since := d.now().Add(-time.Duration(p.Days * float64(24*time.Hour)))
	out := ChatHistoryResult{Messages: []Message{}}
	page, err := d.S.Messages(ctx, service.MessagesParams{Chat: p.Chat, Limit: min(p.Limit, service.MaxMessagesLimit)})
	if err != nil {
		return ChatHistoryResult{}, serviceErr(err)
	}
	out.ResolvedSubstr = page.ResolvedSubstr
	chatIDs := map[string]string{}
	for _, c := range page.Conversations {
		chatIDs[c.ID] = c.ChatID
	}
	var msgs []service.Message
	// Older pages only while the window reaches further back.
	for {
		msgs = append(page.Messages, msgs...)
		if !page.More || len(page.Messages) == 0 || page.Messages[0].Time.Before(since) || len(msgs) >= p.Limit {
			break
		}
		page, err = d.S.Messages(ctx, service.MessagesParams{Chat: p.Chat, Limit: min(p.Limit-len(msgs), service.MaxMessagesLimit), Cursor: page.NextCursor})
		if err != nil {
			return ChatHistoryResult{}, serviceErr(err)
		}
	}
	for _, m := range msgs {
		if m.Time.Before(since) || m.Kind == "group_event" {
			continue
		}
		out.Messages = append(out.Messages, Message{ChatID: chatIDs[m.ConversationID], ContactName: contactName(m.FromMe, m.Sender, m.SenderHandle),
			TS: d.ts(m.Time), IsFromMe: m.FromMe, Text: m.Text})
	}
	if len(out.Messages) > p.Limit {
		out.Messages = out.Messages[len(out.Messages)-p.Limit:]
	}
	return out, nil
}

// ResponseStats implements Backend.
func (d *ServiceData) ResponseStats(ctx context.Context, p ResponseStatsParams) (ResponseStatsResult, error) {
	r, err := d.S.ResponseStats(ctx, service.StatsParams{Chat: p.Chat, Hours: p.Hours})
	if err != nil {
		return ResponseStatsResult{}, serviceErr(err)
	}
	return ResponseStatsResult{ResolvedSubstr: r.ResolvedSubstr, SampleSize: r.SampleSize, AvgSeconds: r.AvgSeconds, AvgHuman: r.AvgHuman,
		MedianSeconds: r.MedianSeconds, MinSeconds: r.MinSeconds, MaxSeconds: r.MaxSeconds,
		TotalInboundMessages: r.TotalInbound, TotalOutboundMessages: r.TotalOutbound}, nil
}

// ContactsLookup implements Backend, filtered by the read policy (a host
// bridge; the manager's unfiltered lookup is ManagerBackend's).
func (d *ServiceData) ContactsLookup(ctx context.Context, p ContactsLookupParams) (ContactsLookupResult, error) {
	r, err := d.S.LookupContacts(ctx, service.LookupParams{Name: p.Name})
	if err != nil {
		return ContactsLookupResult{}, serviceErr(err)
	}
	out := ContactsLookupResult{Matches: []ContactMatch{}}
	for _, m := range r.Matches {
		out.Matches = append(out.Matches, ContactMatch{Name: m.Name, PhoneLast10: m.PhoneLast10, Email: m.Email})
	}
	return out, nil
}

// serviceErr classifies a query-layer error for 1.3 clients; the message
// is the service's sentence unchanged.
func serviceErr(err error) error {
	if errors.Is(err, service.ErrNotFound) {
		return coded{err, CodeNotFound}
	}
	if errors.Is(err, service.ErrOutsideWindow) {
		return coded{err, CodeOutsideWindow}
	}
	var se *service.Error
	if errors.As(err, &se) {
		return coded{err, CodeInvalidParams}
	}
	return err
}

type coded struct {
	err  error
	code string
}

func (c coded) Error() string      { return c.err.Error() }
func (c coded) Unwrap() error      { return c.err }
func (c coded) BridgeCode() string { return c.code }

// ServiceExtensions are the 1.3 actions that carry the MCP message tools:
// params are the JSON of the service's parameter struct (read by
// DecodeParams), the result the JSON of its result. Host only.
//
// Protocol 1.2's host-bridge limits hold for them as for the 1.2 actions they
// extend: nothing older than the 90-day read window (MaxReadDays) leaves
// the helper through list_conversations (the listing), search_messages
// (search: days capped at 90, and 0 — "all" in-process — means 90, with a
// note), get_conversation_messages (chat_history: the window is forced,
// whatever the client sends) or review_messages (review: days (0, 90], and
// context messages older than the window are left out), and every count
// has the bounds of its MCP tool (negative values refused, values above
// the maximum capped). get_contact_dossier, get_attachment_image and
// get_attachment have no counterpart in protocol 1.2 and are not windowed
// (see docs/bridge.md).
//
// save_attachment is served as get_attachment_image: the helper returns
// the checked image (read policy, image only, at most
// MaxBridgeAttachmentBytes) and never learns or writes the destination;
// the client writes the file inside its own profile's file_dirs.
func ServiceExtensions(svc func(ctx context.Context, b Backend) (*service.Service, error)) []Extension {
	return []Extension{
		serviceExt(ExtListConversations, true, svc, boundedList),
		serviceExt(ExtMessages, true, svc, boundedMessages),
		serviceExt(ExtSearchMessages, true, svc, boundedSearch),
		serviceExt(ExtReviewMessages, true, svc, boundedReview),
		serviceExt(ExtResponseStats, false, svc, (*service.Service).ResponseStats),
		serviceExt(ExtLookupContacts, false, svc, func(s *service.Service, ctx context.Context, p service.LookupParams) (service.ContactLookup, error) {
			p.Unfiltered = false // a host bridge always filters by the read policy
			return s.LookupContacts(ctx, p)
		}),
		serviceExt(ExtDossier, true, svc, (*service.Service).Dossier),
		serviceExt(ExtAttachmentImage, true, svc, func(s *service.Service, ctx context.Context, p service.AttachmentParams) (service.AttachmentImage, error) {
			if p.MaxBytes <= 0 || p.MaxBytes > MaxBridgeAttachmentBytes {
				p.MaxBytes = MaxBridgeAttachmentBytes // a client cannot raise the cap
			}
			return s.AttachmentImage(ctx, p)
		}),
		serviceExt(ExtViewAttachment, true, svc, (*service.Service).ViewAttachment),
		Handler(ExtServiceStatus, false, func(ctx context.Context, b Backend, _ struct{}) (service.Status, error) {
			s, err := svc(ctx, b)
			if err != nil {
				return service.Status{}, err
			}
			return s.Status(ctx)
		}),
	}
}

// WindowNote is added to a search_messages answer whose window the bridge
// narrowed to the read window.
var WindowNote = fmt.Sprintf("over the bridge, search covers the last %d days only (the bridge protocol's read window); older messages are not searched", MaxReadDays)

// atLeast0 refuses a negative count; 0 means the default.
func atLeast0(name string, v int) error {
	if v < 0 {
		return paramErrf("%s must not be negative (0 or absent means the default)", name)
	}
	return nil
}

func boundedList(s *service.Service, ctx context.Context, p service.ListParams) (service.ConversationList, error) {
	if err := errors.Join(atLeast0("Limit", p.Limit), atLeast0("Offset", p.Offset)); err != nil {
		return service.ConversationList{}, err
	}
	if p.Days < 0 {
		return service.ConversationList{}, paramErrf("Days must be greater than 0 and at most %d (0 or absent means %d)", MaxReadDays, MaxReadDays)
	}
	p.Limit = min(p.Limit, service.MaxListLimit) // the MCP tool's bound (internal/service/limits.go)
	p.Days = min(p.Days, MaxReadDays)            // the service caps it too
	return s.ListConversations(ctx, p)
}

func boundedMessages(s *service.Service, ctx context.Context, p service.MessagesParams) (service.MessagePage, error) {
	if err := atLeast0("Limit", p.Limit); err != nil {
		return service.MessagePage{}, err
	}
	p.Limit = min(p.Limit, service.MaxMessagesLimit)
	p.WindowDays = MaxReadDays // chat_history's cap; a client cannot lift it
	return s.Messages(ctx, p)
}

func boundedSearch(s *service.Service, ctx context.Context, p service.SearchParams) (service.SearchResult, error) {
	if err := errors.Join(atLeast0("Limit", p.Limit), atLeast0("Context", p.Context)); err != nil {
		return service.SearchResult{}, err
	}
	if p.Days < 0 {
		return service.SearchResult{}, paramErrf("Days must be greater than 0 (0 or absent means the read window, %d days)", MaxReadDays)
	}
	floor := s.ReadWindowStart(MaxReadDays)
	p.Limit = min(p.Limit, service.MaxSearchLimit)
	p.Context = min(p.Context, service.MaxSearchContext)
	narrowed := p.Days == 0 || p.Days > MaxReadDays
	if narrowed {
		p.Days = MaxReadDays
	}
	r, err := s.Search(ctx, p)
	if err != nil {
		return r, err
	}
	// The index applies the window; this is the second line: no hit or
	// neighbour older than the window leaves, whatever a date in the query
	// asked for.
	hits := r.Hits[:0]
	for _, h := range r.Hits {
		if h.Time.Before(floor) {
			continue
		}
		h.Before = recentContext(h.Before, floor)
		h.After = recentContext(h.After, floor)
		hits = append(hits, h)
	}
	r.Hits, r.MatchCount = hits, len(hits)
	if narrowed {
		r.Notes = append(r.Notes, WindowNote)
	}
	return r, nil
}

func recentContext(ms []service.ContextMessage, floor time.Time) []service.ContextMessage {
	if len(ms) == 0 {
		return ms
	}
	out := ms[:0]
	for _, m := range ms {
		if !m.Time.Before(floor) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func boundedReview(s *service.Service, ctx context.Context, p service.ReviewParams) (service.Review, error) {
	if err := atLeast0("Context", p.Context); err != nil {
		return service.Review{}, err
	}
	p.Context = min(p.Context, service.MaxReviewContext)
	floor := s.ReadWindowStart(MaxReadDays)
	r, err := s.Review(ctx, p) // days: (0, 90], refused outside, as the MCP tool
	if err != nil {
		return r, err
	}
	for _, list := range [][]service.ReviewThread{r.NeedsReply, r.LowPriority} {
		for i := range list {
			list[i].Context = recentReview(list[i].Context, floor)
		}
	}
	return r, nil
}

// recentReview drops a review entry's context messages older than the
// read window (a thread active in the window brings a few earlier messages
// as context, which may be older still).
func recentReview(ms []service.ReviewContext, floor time.Time) []service.ReviewContext {
	out := ms[:0]
	for _, m := range ms {
		if !m.Time.Before(floor) {
			out = append(out, m)
		}
	}
	return out
}

func serviceExt[P, R any](name string, bodies bool, svc func(context.Context, Backend) (*service.Service, error),
	fn func(*service.Service, context.Context, P) (R, error)) Extension {
	return Handler(name, bodies, func(ctx context.Context, b Backend, p P) (R, error) {
		var zero R
		s, err := svc(ctx, b)
		if err != nil {
			return zero, err
		}
		r, err := fn(s, ctx, p)
		if err != nil {
			return zero, serviceErr(err)
		}
		return r, nil
	})
}

// ServiceOf returns the query layer behind a host backend built with
// ServiceData, for ServiceExtensions.
func ServiceOf(_ context.Context, b Backend) (*service.Service, error) {
	if h, ok := b.(*HostBackend); ok {
		if d, ok := h.Data.(*ServiceData); ok && d.S != nil {
			return d.S, nil
		}
	}
	return nil, fmt.Errorf("this helper has no message index: %w", ErrUnavailable)
}

// RemoteMessages is the query layer of a `tidings serve --bridge` process:
// each method forwards to the helper's 1.3 action of the same tool, so the
// MCP tools get the values the helper's service returned.
type RemoteMessages struct{ C *Client }

func (r RemoteMessages) ListConversations(ctx context.Context, p service.ListParams) (service.ConversationList, error) {
	return Forward[service.ConversationList](ctx, r.C, ExtListConversations, p)
}
func (r RemoteMessages) Messages(ctx context.Context, p service.MessagesParams) (service.MessagePage, error) {
	return Forward[service.MessagePage](ctx, r.C, ExtMessages, p)
}
func (r RemoteMessages) Search(ctx context.Context, p service.SearchParams) (service.SearchResult, error) {
	return Forward[service.SearchResult](ctx, r.C, ExtSearchMessages, p)
}
func (r RemoteMessages) Review(ctx context.Context, p service.ReviewParams) (service.Review, error) {
	return Forward[service.Review](ctx, r.C, ExtReviewMessages, p)
}
func (r RemoteMessages) ResponseStats(ctx context.Context, p service.StatsParams) (service.ResponseStats, error) {
	return Forward[service.ResponseStats](ctx, r.C, ExtResponseStats, p)
}
func (r RemoteMessages) LookupContacts(ctx context.Context, p service.LookupParams) (service.ContactLookup, error) {
	return Forward[service.ContactLookup](ctx, r.C, ExtLookupContacts, p)
}
func (r RemoteMessages) Dossier(ctx context.Context, p service.DossierParams) (service.DossierReport, error) {
	return Forward[service.DossierReport](ctx, r.C, ExtDossier, p)
}
func (r RemoteMessages) Status(ctx context.Context) (service.Status, error) {
	return Forward[service.Status](ctx, r.C, ExtServiceStatus, struct{}{})
}

// ViewAttachment is get_attachment over the bridge: the helper applies the
// read policy, reads and decodes the file and returns the rendered picture
// (service.ViewedImage), exactly what the in-process tool returns.
func (r RemoteMessages) ViewAttachment(ctx context.Context, p service.ViewParams) (service.ViewedImage, error) {
	return Forward[service.ViewedImage](ctx, r.C, ExtViewAttachment, p)
}

// SaveAttachment saves an image attachment with this process writing the
// file: the arguments and the destination (inside this side's AllowedDirs,
// the profile's file_dirs) are checked first, the helper is asked only for
// the checked image (get_attachment_image; it never sees the destination,
// since a helper with Full Disk Access must never write where a client
// asks), and the bytes are checked again before they are written.
func (r RemoteMessages) SaveAttachment(ctx context.Context, p service.SaveParams) (service.Saved, error) {
	if err := service.CheckSave(p); err != nil {
		return service.Saved{}, err
	}
	img, err := Forward[service.AttachmentImage](ctx, r.C, ExtAttachmentImage,
		service.AttachmentParams{AttachmentID: p.AttachmentID, MaxBytes: MaxBridgeAttachmentBytes})
	if err != nil {
		return service.Saved{}, err
	}
	return service.WriteAttachment(p, img)
}
