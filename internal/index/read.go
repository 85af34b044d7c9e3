package index

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tidings-mcp/tidings/internal/model"
)

// maxParticipantsShown bounds Conversation.Participants (at most 10, as
// list_chats' participants in docs/bridge.md).
const maxParticipantsShown = 10

// nameOfLocked returns the contact name of a handle id ("" when unknown).
// Callers hold mem.mu.
func (ix *Index) nameOfLocked(h uint32) string {
	m := ix.mem
	if n := m.names[m.handleKey[h]]; n != "" {
		return n
	}
	if l := last10(m.handleStr[h]); l != "" {
		return m.names["l10:"+l]
	}
	return ""
}

// labelLocked computes a conversation's label. Callers hold mem.mu.
func (ix *Index) labelLocked(ci *convInfo) string {
	if ci.c.DisplayName != "" {
		return ci.c.DisplayName
	}
	var names []string
	for _, h := range ci.handles {
		n := ix.nameOfLocked(h)
		if n == "" {
			n = ix.mem.handleStr[h]
		}
		names = append(names, n)
	}
	switch {
	case len(names) == 0:
		return ci.c.Identifier
	case len(names) <= 4:
		return strings.Join(names, ", ")
	default:
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
}

func (ix *Index) refLocked(ci *convInfo) ConversationRef {
	return ConversationRef{ID: ci.c.ID, Identifier: ci.c.Identifier, Label: ix.labelLocked(ci), Kind: ci.c.Kind}
}

func (ix *Index) conversationLocked(ci *convInfo) Conversation {
	c := Conversation{ID: ci.c.ID, Source: ci.c.Source, Identifier: ci.c.Identifier, Kind: ci.c.Kind,
		DisplayName: ci.c.DisplayName, Label: ix.labelLocked(ci), ParticipantCount: len(ci.handles),
		Service: ci.c.Service, MessageCount: ci.msgCount, Archived: ci.c.Archived, Participants: []Participant{}}
	if ci.lastTime > 0 {
		c.LastActivity = time.UnixMilli(ci.lastTime).UTC()
	}
	for i, h := range ci.handles {
		if i == maxParticipantsShown {
			break
		}
		c.Participants = append(c.Participants, Participant{Handle: ix.mem.handleStr[h], Name: ix.nameOfLocked(h)})
	}
	return c
}

// visible applies the read policy again at query time (defence in depth).
func (ix *Index) visible(ci *convInfo) bool {
	return ci != nil && ix.allow(ci.c)
}

// fixStaleLocked re-reads last_time of conversations whose newest message
// was deleted. Callers hold mem.mu (write).
func (ix *Index) fixStale(ctx context.Context) {
	ix.mem.mu.RLock()
	var stale []uint32
	for id, ci := range ix.mem.convByID {
		if ci.stale {
			stale = append(stale, id)
		}
	}
	ix.mem.mu.RUnlock()
	for _, id := range stale {
		var last, count int64
		if err := ix.rdb.QueryRowContext(ctx, "SELECT last_time, msg_count FROM conversations WHERE id = ?", id).Scan(&last, &count); err != nil {
			continue
		}
		ix.mem.mu.Lock()
		if ci := ix.mem.convByID[id]; ci != nil {
			ci.lastTime, ci.msgCount, ci.stale = last, count, false
		}
		ix.mem.mu.Unlock()
	}
}

// ListOptions filter ListConversations.
type ListOptions struct {
	// Limit bounds the result (default 20, at most 500).
	Limit int
	// Since keeps conversations with activity at or after it.
	Since time.Time
	// ExcludeGroups drops group conversations.
	ExcludeGroups bool
	// Query keeps conversations whose label, display name, identifier or a
	// participant handle contains it (case-insensitive).
	Query string
}

// ConversationList is ListConversations' answer.
type ConversationList struct {
	Conversations []Conversation `json:"conversations"`
	// Total is the number of conversations that matched; Truncated says
	// Limit cut the list.
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
}

// ListConversations returns conversations ordered by newest activity, with
// message counts, participants and last activity. Threads the policy blocks
// are never listed.
func (ix *Index) ListConversations(ctx context.Context, opts ListOptions) (ConversationList, error) {
	if err := ix.refresh(ctx); err != nil {
		return ConversationList{}, err
	}
	ix.fixStale(ctx)
	limit := clampInt(opts.Limit, 20, 500)
	q := strings.ToLower(strings.TrimSpace(opts.Query))
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	var all []*convInfo
	for _, ci := range ix.mem.convByID {
		if !ix.visible(ci) || (opts.ExcludeGroups && ci.c.Kind == model.KindGroup) {
			continue
		}
		if !opts.Since.IsZero() && ci.lastTime < opts.Since.UnixMilli() {
			continue
		}
		if q != "" && !ix.convMatchesLocked(ci, q) {
			continue
		}
		all = append(all, ci)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].lastTime != all[j].lastTime {
			return all[i].lastTime > all[j].lastTime
		}
		return all[i].id < all[j].id
	})
	out := ConversationList{Total: len(all), Conversations: []Conversation{}}
	for i, ci := range all {
		if i == limit {
			out.Truncated = true
			break
		}
		out.Conversations = append(out.Conversations, ix.conversationLocked(ci))
	}
	return out, nil
}

func (ix *Index) convMatchesLocked(ci *convInfo, q string) bool {
	if strings.Contains(strings.ToLower(ix.labelLocked(ci)), q) || strings.Contains(strings.ToLower(ci.c.DisplayName), q) ||
		strings.Contains(strings.ToLower(ci.c.Identifier), q) {
		return true
	}
	for _, h := range ci.handles {
		if strings.Contains(strings.ToLower(ix.mem.handleStr[h]), q) {
			return true
		}
	}
	return false
}

// Conversation returns one conversation by id or chat identifier (the
// most recently active when an identifier names several, e.g. the SMS and
// iMessage threads with one person).
func (ix *Index) Conversation(ctx context.Context, id string) (Conversation, error) {
	if err := ix.refresh(ctx); err != nil {
		return Conversation{}, err
	}
	ix.fixStale(ctx)
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	var best *convInfo
	for _, ci := range ix.mem.convByID {
		if (ci.c.ID == id || ci.c.Identifier == id) && ix.visible(ci) && (best == nil || ci.lastTime > best.lastTime) {
			best = ci
		}
	}
	if best == nil {
		return Conversation{}, fmt.Errorf("conversation %q: %w", id, ErrNotFound)
	}
	return ix.conversationLocked(best), nil
}

func sortedKeys(m map[uint32]bool) []uint32 {
	out := make([]uint32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// isPhoneLike reports whether s looks like a phone number.
func isPhoneLike(s string) bool {
	d := 0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			d++
		case strings.ContainsRune("+-() .", r):
		default:
			return false
		}
	}
	return d >= 5
}

// handlesMatchingLocked returns handle ids matching a phone (last ten
// digits, or the normalised form) or an email (case-insensitive).
func (ix *Index) handlesMatchingLocked(h string) map[uint32]bool {
	out := map[uint32]bool{}
	h = strings.TrimSpace(h)
	norm := ix.opts.NormalizeHandle(h)
	l10 := last10(h)
	for id, s := range ix.mem.handleStr {
		switch {
		case strings.EqualFold(s, h), ix.mem.handleKey[id] == norm:
			out[id] = true
		case l10 != "" && last10(s) == l10:
			out[id] = true
		}
	}
	return out
}

// handlesNamedLocked returns handle ids whose contact name matches name:
// every word of name starts a word of the contact name (case-insensitive).
func (ix *Index) handlesNamedLocked(name string) map[uint32]bool {
	want := strings.Fields(strings.ToLower(name))
	out := map[uint32]bool{}
	if len(want) == 0 {
		return out
	}
	for id := range ix.mem.handleStr {
		n := ix.nameOfLocked(id)
		if n == "" {
			continue
		}
		words := strings.FieldsFunc(strings.ToLower(n), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		ok := true
		for _, w := range want {
			hit := false
			for _, x := range words {
				if strings.HasPrefix(x, w) {
					hit = true
					break
				}
			}
			if !hit {
				ok = false
				break
			}
		}
		if ok {
			out[id] = true
		}
	}
	return out
}

// resolveLocked maps what a caller wrote to visible conversations: a
// conversation id, a chat identifier, a phone number in any format, an
// email address or a contact name. directOnly keeps one-to-one chats for
// person lookups. It fails with ErrNotFound rather than returning nothing.
func (ix *Index) resolveLocked(chat string, directOnly bool) (map[uint32]bool, error) {
	chat = strings.TrimSpace(chat)
	if chat == "" {
		return nil, fmt.Errorf("empty conversation: %w", ErrNotFound)
	}
	out := map[uint32]bool{}
	for id, ci := range ix.mem.convByID {
		if (ci.c.ID == chat || ci.c.Identifier == chat) && ix.visible(ci) {
			out[id] = true
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	var hs map[uint32]bool
	switch {
	case strings.Contains(chat, "@") || isPhoneLike(chat):
		hs = ix.handlesMatchingLocked(chat)
	default:
		hs = ix.handlesNamedLocked(chat)
	}
	for id, ci := range ix.mem.convByID {
		if !ix.visible(ci) || (directOnly && ci.c.Kind == model.KindGroup) {
			continue
		}
		for _, h := range ci.handles {
			if hs[h] {
				out[id] = true
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no conversation matches %q: %w", chat, ErrNotFound)
	}
	return out, nil
}

// ResolveConversations maps a chat reference (conversation id, chat
// identifier, phone number in any format, email, or contact name) to the
// visible conversations it names, newest activity first. directOnly keeps
// one-to-one chats. An unknown reference is an error wrapping ErrNotFound.
func (ix *Index) ResolveConversations(ctx context.Context, chat string, directOnly bool) ([]Conversation, error) {
	if err := ix.refresh(ctx); err != nil {
		return nil, err
	}
	ix.fixStale(ctx)
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	set, err := ix.resolveLocked(chat, directOnly)
	if err != nil {
		return nil, err
	}
	var out []Conversation
	for _, id := range sortedKeys(set) {
		out = append(out, ix.conversationLocked(ix.mem.convByID[id]))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].LastActivity.After(out[j].LastActivity) })
	return out, nil
}

// HistoryQuery selects messages of conversations for History.
type HistoryQuery struct {
	// Chat names the conversations: anything ResolveConversations accepts.
	Chat string
	// DirectOnly keeps one-to-one chats when Chat names a person.
	DirectOnly bool
	// Before returns messages strictly older than it (zero: the newest).
	Before time.Time
	// Cursor continues a previous page (History.NextCursor); it overrides
	// Before.
	Cursor string
	// Since returns messages at or after it (zero: no bound).
	Since time.Time
	// Limit bounds the page (default 50, at most 500).
	Limit int
}

// History is a page of messages, oldest first.
type History struct {
	Conversations []ConversationRef `json:"conversations"`
	Messages      []Message         `json:"messages"`
	// More says older messages exist; NextCursor (or NextBefore) fetches
	// them.
	More       bool      `json:"more"`
	NextCursor string    `json:"next_cursor,omitempty"`
	NextBefore time.Time `json:"next_before,omitzero"`
}

// History returns messages of the conversations Chat names, chronological,
// with reactions, reply and edit state and attachment metadata.
func (ix *Index) History(ctx context.Context, q HistoryQuery) (History, error) {
	if err := ix.refresh(ctx); err != nil {
		return History{}, err
	}
	limit := clampInt(q.Limit, 50, 500)
	ix.mem.mu.RLock()
	set, err := ix.resolveLocked(q.Chat, q.DirectOnly)
	var refs []ConversationRef
	if err == nil {
		for _, id := range sortedKeys(set) {
			refs = append(refs, ix.refLocked(ix.mem.convByID[id]))
		}
	}
	ix.mem.mu.RUnlock()
	if err != nil {
		return History{}, err
	}
	beforeT, beforeID := int64(1<<62), int64(1<<62)
	if !q.Before.IsZero() {
		// Strict: nothing at or after Before (id 0 excludes every tie).
		beforeT, beforeID = q.Before.UnixMilli(), 0
	}
	if q.Cursor != "" {
		if beforeT, beforeID, err = decodeHistoryCursor(q.Cursor); err != nil {
			return History{}, err
		}
	}
	sinceT := int64(-1 << 62)
	if !q.Since.IsZero() {
		sinceT = q.Since.UnixMilli()
	}
	ids, times, err := ix.historyPage(ctx, sortedKeys(set), beforeT, beforeID, sinceT, limit+1)
	if err != nil {
		return History{}, err
	}
	h := History{Conversations: refs, Messages: []Message{}}
	if len(ids) > limit {
		h.More = true
		ids, times = ids[:limit], times[:limit]
		last := len(ids) - 1
		h.NextCursor = encodeHistoryCursor(times[last], ids[last])
		h.NextBefore = time.UnixMilli(times[last]).UTC()
	}
	msgs, err := ix.loadMessages(ctx, ids, set)
	if err != nil {
		return History{}, err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		h.Messages = append(h.Messages, msgs[i])
	}
	return h, nil
}

// historySQL selects a page of one conversation's history ids, newest
// first: ?1 the conversation, ?2/?3 the exclusive (time, id) upper bound,
// ?4 the inclusive lower time bound, ?5 the row limit. Each branch reads
// at most ?5 rows in page order — the conversation's own messages as a
// range of messages_conv_time, then the messages linked to it from another
// chat (message_chats, rare) — so a page costs the page, not the thread
// (TestHistoryReadsOnlyThePage). The branches may overlap; historyPage
// merges them.
const historySQL = `SELECT id, time FROM (SELECT id, time FROM messages WHERE conv = ?1 AND (time, id) < (?2, ?3) AND time >= ?4 ORDER BY time DESC, id DESC LIMIT ?5)
UNION ALL SELECT id, time FROM (SELECT m.id, m.time FROM message_chats c JOIN messages m ON m.id = c.msg
	WHERE c.conv = ?1 AND (m.time, m.id) < (?2, ?3) AND m.time >= ?4 ORDER BY m.time DESC, m.id DESC LIMIT ?5)`

// historyPage returns up to limit message ids of convs (with their times),
// newest first by (time, id), below the (beforeT, beforeID) bound and at or
// after sinceT: historySQL per conversation, merged.
func (ix *Index) historyPage(ctx context.Context, convs []uint32, beforeT, beforeID, sinceT int64, limit int) (ids, times []int64, err error) {
	st, err := ix.rstmt(ctx, historySQL)
	if err != nil {
		return nil, nil, fmt.Errorf("read history: %w", err)
	}
	type row struct{ id, t int64 }
	var all []row
	seen := map[int64]bool{}
	for _, c := range convs {
		rows, err := st.QueryContext(ctx, int64(c), beforeT, beforeID, sinceT, limit)
		if err != nil {
			return nil, nil, fmt.Errorf("read history: %w", err)
		}
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.t); err != nil {
				rows.Close()
				return nil, nil, fmt.Errorf("read history: %w", err)
			}
			if !seen[r.id] {
				seen[r.id] = true
				all = append(all, r)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, nil, fmt.Errorf("read history: %w", err)
		}
	}
	slices.SortFunc(all, func(a, b row) int {
		if a.t != b.t {
			return cmp.Compare(b.t, a.t)
		}
		return cmp.Compare(b.id, a.id)
	})
	for _, r := range all[:min(limit, len(all))] {
		ids, times = append(ids, r.id), append(times, r.t)
	}
	return ids, times, nil
}

func encodeHistoryCursor(t, id int64) string {
	return "h" + strconv.FormatInt(t, 36) + "." + strconv.FormatInt(id, 36)
}

func decodeHistoryCursor(s string) (int64, int64, error) {
	a, b, ok := strings.Cut(strings.TrimPrefix(s, "h"), ".")
	if !ok || !strings.HasPrefix(s, "h") {
		return 0, 0, fmt.Errorf("history cursor %q: %w", s, ErrBadCursor)
	}
	t, err1 := strconv.ParseInt(a, 36, 64)
	id, err2 := strconv.ParseInt(b, 36, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("history cursor %q: %w", s, ErrBadCursor)
	}
	return t, id, nil
}

// WindowQuery selects messages in a time window across conversations (the
// triage input).
type WindowQuery struct {
	Since, Until time.Time
	// Limit bounds the answer (default 2000, at most 20000); the newest
	// messages are kept when it cuts.
	Limit         int
	ExcludeGroups bool
}

// Window is WindowQuery's answer, oldest first.
type Window struct {
	Messages  []Message `json:"messages"`
	Total     int       `json:"total"`
	Truncated bool      `json:"truncated"`
}

// MessagesInWindow returns the messages of visible conversations with
// Since <= time < Until (Until zero: now), oldest first.
func (ix *Index) MessagesInWindow(ctx context.Context, q WindowQuery) (Window, error) {
	if err := ix.refresh(ctx); err != nil {
		return Window{}, err
	}
	limit := clampInt(q.Limit, 2000, 20000)
	until := q.Until
	if until.IsZero() {
		until = ix.now().Add(time.Millisecond)
	}
	lo, hi := q.Since.UnixMilli(), until.UnixMilli()-1
	ix.mem.mu.Lock()
	idLo, idHi := ix.mem.idRange(lo, hi)
	var ids []int64
	var allowed map[uint32]bool = map[uint32]bool{}
	for id, ci := range ix.mem.convByID {
		if ix.visible(ci) && !(q.ExcludeGroups && ci.c.Kind == model.KindGroup) {
			allowed[id] = true
		}
	}
	for id := min(idHi, int64(len(ix.mem.times))-1); id >= max(idLo, 1); id-- {
		if ix.mem.flags[id]&fLive == 0 {
			continue
		}
		if t := ix.mem.times[id]; t < lo || t > hi {
			continue
		}
		if ix.mem.inConv(id, allowed) {
			ids = append(ids, id)
		}
	}
	times := ix.mem.times
	sort.Slice(ids, func(i, j int) bool {
		if times[ids[i]] != times[ids[j]] {
			return times[ids[i]] > times[ids[j]]
		}
		return ids[i] > ids[j]
	})
	ix.mem.mu.Unlock()
	w := Window{Total: len(ids), Messages: []Message{}}
	if len(ids) > limit {
		ids, w.Truncated = ids[:limit], true
	}
	msgs, err := ix.loadMessages(ctx, ids, allowed)
	if err != nil {
		return Window{}, err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		w.Messages = append(w.Messages, msgs[i])
	}
	return w, nil
}

func idsJSON[T int64 | uint32](ids []T) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(int64(id), 10))
	}
	b.WriteByte(']')
	return b.String()
}

func clampInt(v, def, hi int) int {
	if v <= 0 {
		return def
	}
	return min(v, hi)
}

// loadMessages reads full messages by id, in the order of ids. prefer
// picks the conversation shown for a message in several (nil: primary).
func (ix *Index) loadMessages(ctx context.Context, ids []int64, prefer map[uint32]bool) ([]Message, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	tx, err := ix.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	defer tx.Rollback()
	js := idsJSON(ids)
	txq := func(q string, args ...any) (*sql.Rows, error) {
		st, err := ix.rstmt(ctx, q)
		if err != nil {
			return nil, err
		}
		return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	rows, err := txq(`SELECT id, source, guid, conv, sender, from_me, kind, detail, service, time, time_read,
time_delivered, time_edited, time_unsent, text, subject, flags, error, reply_to, reply_to_part, app, effect, extra
FROM messages WHERE id IN (SELECT value FROM json_each(?))`, js)
	if err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	byID := map[int64]*Message{}
	type srcGUID struct {
		src  int64
		guid string
	}
	guids := map[srcGUID][]*Message{}
	ix.mem.mu.RLock()
	for rows.Next() {
		var (
			m                                          Message
			src, conv, sender, flags                   int64
			fromMe                                     bool
			kind                                       string
			detail, service, subject, replyTo, app, ef sql.NullString
			extra                                      sql.NullString
			t                                          int64
			tRead, tDel, tEd, tUn, replyPart           sql.NullInt64
		)
		if err := rows.Scan(&m.id, &src, &m.ID, &conv, &sender, &fromMe, &kind, &detail, &service, &t, &tRead, &tDel, &tEd, &tUn,
			&m.Text, &subject, &flags, &m.Error, &replyTo, &replyPart, &app, &ef, &extra); err != nil {
			rows.Close()
			ix.mem.mu.RUnlock()
			return nil, fmt.Errorf("read messages: %w", err)
		}
		m.Source = ix.mem.sourceKind[src]
		m.FromMe, m.Kind, m.Detail, m.Service = fromMe, model.MessageKind(kind), detail.String, service.String
		m.Time = time.UnixMilli(t).UTC()
		m.TimeRead, m.TimeDelivered, m.TimeEdited, m.TimeUnsent = msTime(tRead), msTime(tDel), msTime(tEd), msTime(tUn)
		m.Subject, m.ReplyTo, m.App, m.Effect = subject.String, replyTo.String, app.String, ef.String
		if replyTo.Valid {
			m.ReplyToPart = int(replyPart.Int64)
		}
		m.IsSent, m.IsDelivered, m.IsRead = flags&mfSent != 0, flags&mfDelivered != 0, flags&mfRead != 0
		m.Edited, m.Unsent, m.RecentlyDeleted = flags&mfEdited != 0, flags&mfUnsent != 0, flags&mfRecentlyDeleted != 0
		if !fromMe && sender != 0 {
			m.Sender = ix.mem.handleStr[uint32(sender)]
			m.SenderName = ix.nameOfLocked(uint32(sender))
		}
		c := uint32(conv)
		if prefer != nil && !prefer[c] {
			for _, x := range ix.mem.extra[uint32(m.id)] {
				if prefer[x] {
					c = x
					break
				}
			}
		}
		if ci := ix.mem.convByID[c]; ci != nil {
			m.Conversation = ix.refLocked(ci)
		}
		if extra.Valid {
			var x messageExtra
			if err := json.Unmarshal([]byte(extra.String), &x); err == nil {
				m.Edits, m.UnsentParts, m.Runs, m.GroupEvent = x.Edits, x.UnsentParts, x.Runs, x.GroupEvent
				if x.Text != "" {
					m.Text = x.Text // the stored text has its one-time codes masked
				}
			}
		}
		mm := m
		byID[m.id] = &mm
		guids[srcGUID{src, m.ID}] = append(guids[srcGUID{src, m.ID}], &mm)
	}
	ix.mem.mu.RUnlock()
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read messages: %w", err)
	}
	// Attachments.
	err = eachRow(txq(`SELECT msg, guid, row_id, filename, mime, uti, size, sticker FROM attachments
WHERE msg IN (SELECT value FROM json_each(?)) ORDER BY msg, idx`, js))(func(r *sql.Rows) error {
		var id, rowID int64
		var a Attachment
		if err := r.Scan(&id, &a.GUID, &rowID, &a.Filename, &a.MimeType, &a.UTI, &a.Size, &a.Sticker); err != nil {
			return err
		}
		a.ID = a.GUID
		if rowID > 0 {
			a.ID = strconv.FormatInt(rowID, 10)
		}
		if m := byID[id]; m != nil {
			m.Attachments = append(m.Attachments, a)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read attachments: %w", err)
	}
	// Reactions, by source and target guid.
	bySource := map[int64][]string{}
	for k := range guids {
		bySource[k.src] = append(bySource[k.src], k.guid)
	}
	for src, gs := range bySource {
		b, _ := json.Marshal(gs)
		rows, err := txq(`SELECT target, part, sender, from_me, type, emoji, time FROM reactions
WHERE source = ? AND target IN (SELECT value FROM json_each(?)) ORDER BY time`, src, string(b))
		ix.mem.mu.RLock()
		err = eachRow(rows, err)(func(row *sql.Rows) error {
			var target, typ string
			var r Reaction
			var t int64
			if err := row.Scan(&target, &r.Part, &r.Sender, &r.FromMe, &typ, &r.Emoji, &t); err != nil {
				return err
			}
			r.Type, r.Time = model.ReactionType(typ), time.UnixMilli(t).UTC()
			if r.Sender != "" {
				if h, ok := ix.mem.handleByS[r.Sender]; ok {
					r.SenderName = ix.nameOfLocked(h)
				}
			}
			for _, m := range guids[srcGUID{src, target}] {
				m.Reactions = append(m.Reactions, r)
			}
			return nil
		})
		ix.mem.mu.RUnlock()
		if err != nil {
			return nil, fmt.Errorf("read reactions: %w", err)
		}
	}
	out := make([]Message, 0, len(ids))
	for _, id := range ids {
		if m := byID[id]; m != nil {
			out = append(out, *m)
		}
	}
	return out, nil
}

func msTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// AttachmentLocation is what the index knows about one attachment: its
// metadata, the message and conversation it belongs to (so a caller can
// apply the read policy to the attachment's own thread), and where its file
// is.
type AttachmentLocation struct {
	Attachment
	// Source is the kind of source the message came from (model.SourceIMessage,
	// model.SourceAndroid); RowID is the attachment's row id in it (0: none).
	Source string `json:"source"`
	RowID  int64  `json:"row_id,omitempty"`
	// MessageID is the id of the message carrying the attachment.
	MessageID string `json:"message_id"`
	// Sender is the message's sender handle ("" when FromMe), so a caller
	// can refuse the attachment where it would leave out its message (a
	// blocked person's photo in a group they left).
	Sender string `json:"sender,omitempty"`
	FromMe bool   `json:"from_me"`
	// Conversation is the message's conversation (its primary one when it
	// is in several), with its participants.
	Conversation Conversation `json:"conversation"`
	// Path is the file on this machine; "" when the index holds none (the
	// source never named one, or it was not downloaded). Never shown to a
	// model.
	Path string `json:"-"`
}

// AttachmentFile returns an attachment (for save_attachment) with its
// message and that message's sender, its conversation and its file's path. id is Attachment.ID: the
// source's row id, or the guid when the source has none. An unknown
// attachment, or one in a thread the policy blocks, wraps ErrNotFound. An
// attachment without a file on this machine is not an error: Path is ""
// and the caller decides (e.g. asks the source by RowID).
func (ix *Index) AttachmentFile(ctx context.Context, id string) (AttachmentLocation, error) {
	if err := ix.refresh(ctx); err != nil {
		return AttachmentLocation{}, err
	}
	const cols = `SELECT a.path, a.mime, a.filename, a.uti, a.size, a.sticker, a.guid, a.row_id, a.conv, m.guid, m.source, m.sender, m.from_me
FROM attachments a JOIN messages m ON m.id = a.msg WHERE `
	q := cols + "a.guid = ? LIMIT 1"
	var arg any = id
	if n, perr := strconv.ParseInt(id, 10, 64); perr == nil {
		q, arg = cols+"a.row_id = ? LIMIT 1", n
	}
	var loc AttachmentLocation
	var conv, src, sender int64
	err := ix.rdb.QueryRowContext(ctx, q, arg).Scan(&loc.Path, &loc.MimeType, &loc.Filename, &loc.UTI, &loc.Size, &loc.Sticker,
		&loc.GUID, &loc.RowID, &conv, &loc.MessageID, &src, &sender, &loc.FromMe)
	if err == sql.ErrNoRows {
		return AttachmentLocation{}, fmt.Errorf("attachment %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return AttachmentLocation{}, fmt.Errorf("read attachment: %w", err)
	}
	loc.ID = loc.GUID
	if loc.RowID > 0 {
		loc.ID = strconv.FormatInt(loc.RowID, 10)
	}
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	ci := ix.mem.convByID[uint32(conv)]
	if !ix.visible(ci) {
		return AttachmentLocation{}, fmt.Errorf("attachment %s: %w", id, ErrNotFound)
	}
	loc.Source = ix.mem.sourceKind[src]
	if !loc.FromMe && sender != 0 {
		loc.Sender = ix.mem.handleStr[uint32(sender)]
	}
	loc.Conversation = ix.conversationLocked(ci)
	return loc, nil
}
