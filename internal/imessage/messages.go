package imessage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// pageSize is the number of message rows read per read transaction by
// Messages. Small pages keep memory flat and let Messages.app checkpoint its
// WAL between pages; large pages amortise per-page queries.
const pageSize = 4000

// attachmentWindow is how many message ROWIDs one attachment lookup covers.
const attachmentWindow = 4000

// Deletion is a tombstone from deleted_messages: a message row that was
// deleted from the database (also a removed tapback).
type Deletion struct {
	// RowID is deleted_messages.ROWID, the watermark for the next Deleted call.
	RowID int64
	// GUID is the deleted message's guid (model.Message.ID).
	GUID string
}

// msgRow holds one scanned row of the message query. The field order is the
// column order of messageSelect.
type msgRow struct {
	rowID          int64
	guid           string
	text           sql.RawBytes
	body           sql.RawBytes
	handleID       int64
	service        sql.RawBytes
	subject        sql.RawBytes
	date           int64
	dateRead       int64
	dateDelivered  int64
	isFromMe       int64
	isSent         int64
	isDelivered    int64
	isRead         int64
	errCode        int64
	itemType       int64
	groupAction    int64
	otherHandle    int64
	groupTitle     sql.RawBytes
	assocGUID      sql.RawBytes
	assocType      int64
	assocEmoji     sql.RawBytes
	balloon        sql.RawBytes
	effect         sql.RawBytes
	threadGUID     sql.RawBytes
	threadPart     sql.RawBytes
	dateEdited     int64
	dateRetracted  int64
	summary        sql.RawBytes
	chatID         sql.NullInt64
	recoverableFor sql.NullInt64 // from lookups.recoverable, not scanned
}

func (m *msgRow) dest() []any {
	return []any{&m.rowID, &m.guid, &m.text, &m.body, &m.handleID, &m.service, &m.subject,
		&m.date, &m.dateRead, &m.dateDelivered, &m.isFromMe, &m.isSent, &m.isDelivered, &m.isRead,
		&m.errCode, &m.itemType, &m.groupAction, &m.otherHandle, &m.groupTitle, &m.assocGUID,
		&m.assocType, &m.assocEmoji, &m.balloon, &m.effect, &m.threadGUID, &m.threadPart,
		&m.dateEdited, &m.dateRetracted, &m.summary, &m.chatID}
}

// messageSelect composes the SELECT list and FROM clause for this schema.
// Missing columns become neutral literals with the same meaning as an unset
// value (NULL text, 0 numbers), so one scan layout serves every version.
func (s *schema) messageSelect() string {
	c := func(name, neutral string) string { return s.col("message", "m", name, neutral) }
	ci := func(name string) string { // integer column, NULL → 0
		if s.cols.has("message", name) {
			return "COALESCE(m." + name + ", 0)"
		}
		return "0"
	}
	body := "NULL"
	if s.cols.has("message", "attributedBody") {
		// Always fetch raw bytes: in a UTF-16 database a TEXT-typed value
		// would be transcoded on read.
		body = "CAST(m.attributedBody AS BLOB)"
	}
	summary := "NULL"
	if s.cols.has("message", "message_summary_info") {
		summary = "CAST(m.message_summary_info AS BLOB)"
	}
	other := ci("other_handle")
	exprs := []string{
		"m.ROWID", "m.guid", c("text", "NULL"), body, ci("handle_id"), c("service", "NULL"), c("subject", "NULL"),
		ci("date"), ci("date_read"), ci("date_delivered"), ci("is_from_me"), ci("is_sent"), ci("is_delivered"),
		ci("is_read"), ci("error"), ci("item_type"), ci("group_action_type"), other, c("group_title", "NULL"),
		c("associated_message_guid", "NULL"), ci("associated_message_type"), c("associated_message_emoji", "NULL"),
		c("balloon_bundle_id", "NULL"), c("expressive_send_style_id", "NULL"), c("thread_originator_guid", "NULL"),
		c("thread_originator_part", "NULL"), ci("date_edited"), ci("date_retracted"), summary,
		"cmj.chat_id",
	}
	return "SELECT " + colList(exprs) + " FROM message m LEFT JOIN chat_message_join cmj ON cmj.message_id = m.ROWID"
}

// chatInfo is what message conversion needs to know about a chat.
type chatInfo struct {
	guid  string
	group bool
}

// lookups holds the handle and chat maps for one read, refreshed when a row
// names an id the maps do not know (a chat or handle created since).
type lookups struct {
	handles map[int64]string
	chats   map[int64]chatInfo
	// recoverable maps message ROWID → chat ROWID for rows in Recently
	// Deleted (chat_recoverable_message_join: at most 30 days of
	// deletions, so small).
	recoverable map[int64]int64
	fresh       bool // loaded within the current transaction
}

func (r *Reader) loadLookups(ctx context.Context, q queryer, l *lookups) error {
	handles := make(map[int64]string, len(l.handles))
	rows, err := q.QueryContext(ctx, "SELECT ROWID, COALESCE(id, '') FROM handle")
	if err != nil {
		return fmt.Errorf("read handles: %w", err)
	}
	for rows.Next() {
		var id int64
		var h string
		if err := rows.Scan(&id, &h); err != nil {
			rows.Close()
			return fmt.Errorf("read handles: %w", err)
		}
		handles[id] = h
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read handles: %w", err)
	}
	chats := make(map[int64]chatInfo, len(l.chats))
	convs, err := r.readChats(ctx, q, handles)
	if err != nil {
		return err
	}
	for _, c := range convs {
		chats[c.RowID] = chatInfo{guid: c.ID, group: c.Kind == model.KindGroup}
	}
	recoverable := map[int64]int64{}
	if r.sch.tables["chat_recoverable_message_join"] {
		rows, err := q.QueryContext(ctx, "SELECT message_id, chat_id FROM chat_recoverable_message_join")
		if err != nil {
			return fmt.Errorf("read recently deleted: %w", err)
		}
		for rows.Next() {
			var m, c int64
			if err := rows.Scan(&m, &c); err != nil {
				rows.Close()
				return fmt.Errorf("read recently deleted: %w", err)
			}
			recoverable[m] = c
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read recently deleted: %w", err)
		}
	}
	l.handles, l.chats, l.recoverable, l.fresh = handles, chats, recoverable, true
	return nil
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// MaxRowID returns the highest message ROWID, the watermark to store after a
// full Messages pass (0 for an empty database).
func (r *Reader) MaxRowID(ctx context.Context) (int64, error) {
	var n int64
	if err := r.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(ROWID), 0) FROM message").Scan(&n); err != nil {
		return 0, fmt.Errorf("read max message rowid: %w", err)
	}
	return n, nil
}

// Messages calls fn for every message with ROWID > afterRowID, in ROWID order,
// each message once (with all its chats in ConversationIDs). It reads in pages,
// each in its own read transaction, so memory stays flat on any database size
// and a live Messages.app is never blocked. fn may keep the message it is
// given. An error from fn stops the pass and is returned unchanged.
//
// Rows committed while a pass runs are included when their ROWID is higher
// than the page being read; edits to rows already passed are found by Changed.
func (r *Reader) Messages(ctx context.Context, afterRowID int64, fn func(model.Message) error) error {
	l := &lookups{}
	last := afterRowID
	for {
		n, next, err := r.messagePage(ctx, l, last, fn)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		last = next
	}
}

// messagePage reads one page after last; it returns the number of messages
// delivered and the highest ROWID covered.
func (r *Reader) messagePage(ctx context.Context, l *lookups, last int64, fn func(model.Message) error) (int, int64, error) {
	tx, err := r.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, 0, fmt.Errorf("read messages: %w", err)
	}
	defer tx.Rollback()
	hi := int64(math.MaxInt64)
	if r.caps.IndexedChatJoin {
		var h sql.NullInt64
		err := tx.QueryRowContext(ctx, "SELECT MAX(ROWID) FROM (SELECT ROWID FROM message WHERE ROWID > ? ORDER BY ROWID LIMIT ?)", last, pageSize).Scan(&h)
		if err != nil {
			return 0, 0, fmt.Errorf("read messages: %w", err)
		}
		if !h.Valid {
			return 0, last, nil
		}
		hi = h.Int64
	}
	l.fresh = false
	if l.handles == nil {
		if err := r.loadLookups(ctx, tx, l); err != nil {
			return 0, 0, err
		}
	}
	att := &windowAttachments{r: r, q: tx, limit: hi}
	q := r.sch.messageSelect() + " WHERE m.ROWID > ? AND m.ROWID <= ? ORDER BY m.ROWID"
	n, top, err := r.stream(ctx, tx, l, att, q, []any{last, hi}, fn)
	if err != nil {
		return 0, 0, err
	}
	if n > 0 && hi == math.MaxInt64 {
		hi = top
	}
	return n, hi, tx.Commit()
}

// ChangedLookback bounds how far before since Changed looks for messages
// whose state changed. Edits (allowed for 15 minutes after sending) and
// unsends (2 minutes) are always inside it; a read or delivery receipt for a
// message sent longer ago is not reported. Moves to Recently Deleted are
// reported whatever the message's age.
const ChangedLookback = 7 * 24 * time.Hour

// Changed calls fn, in ROWID order and once each, for every message whose
// state changed at or after since: edited, unsent, read, delivered or
// recovered (for messages sent within ChangedLookback before since), or
// moved to Recently Deleted at or after since. An index uses it to refresh
// rows it already holds. Apple indexes none of these dates, so the scan is
// bounded by message date through message_idx_date (schemas without that
// index, old iOS backups, are scanned in full). A recovery from Recently
// Deleted is dated only on macOS 26 (date_recovered); to notice recoveries
// of older messages, compare RecentlyDeleted with the previous set.
func (r *Reader) Changed(ctx context.Context, since time.Time, fn func(model.Message) error) error {
	where, args, err := r.changedWhere(since)
	if err != nil {
		return err
	}
	return r.sparse(ctx, where, args, fn)
}

// changedWhere composes Changed's WHERE clause.
func (r *Reader) changedWhere(since time.Time) (string, []any, error) {
	ns, s := sinceArgs(since)
	var conds []string
	var args []any
	for _, c := range []string{"date_edited", "date_retracted", "date_read", "date_delivered", "date_recovered"} {
		if r.sch.cols.has("message", c) {
			conds = append(conds, dateAtLeast(c))
			args = append(args, ns, s)
		}
	}
	if len(conds) == 0 {
		return "", nil, fmt.Errorf("read changed messages: %w: this schema records no change dates", errors.ErrUnsupported)
	}
	lns, ls := sinceArgs(since.Add(-ChangedLookback))
	// Two ranges of the date index, one per unit (second values are always
	// below 1e12). Separate branches, because SQLite does not use the index
	// for an OR of the two ranges; UNION ALL, because a plain UNION makes it
	// scan the table in ROWID order to merge (IN ignores duplicates anyway).
	changed := " AND (" + strings.Join(conds, " OR ") + ")"
	inner := "SELECT ROWID FROM message WHERE date >= ?" + changed +
		" UNION ALL SELECT ROWID FROM message WHERE date >= ? AND date < 1000000000000" + changed
	args = append(append(append([]any{lns}, args...), ls), args...)
	if r.sch.tables["chat_recoverable_message_join"] {
		inner += " UNION ALL SELECT message_id FROM chat_recoverable_message_join WHERE " + dateAtLeast("delete_date")
		args = append(args, ns, s)
	}
	return "WHERE m.ROWID IN (" + inner + ") ORDER BY m.ROWID", args, nil
}

// RecentlyDeleted returns the ROWIDs of the messages now in Recently
// Deleted, ascending (at most 30 days of deletions, so a short list); nil
// when the schema has no Recently Deleted.
func (r *Reader) RecentlyDeleted(ctx context.Context) ([]int64, error) {
	if !r.sch.tables["chat_recoverable_message_join"] {
		return nil, nil
	}
	rows, err := r.db.QueryContext(ctx, "SELECT DISTINCT message_id FROM chat_recoverable_message_join ORDER BY message_id")
	if err != nil {
		return nil, fmt.Errorf("read recently deleted: %w", err)
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read recently deleted: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read recently deleted: %w", err)
	}
	return ids, nil
}

// MessageByGUID returns one message by guid, or ErrNotFound.
func (r *Reader) MessageByGUID(ctx context.Context, guid string) (model.Message, error) {
	var got model.Message
	found := false
	err := r.sparse(ctx, "WHERE m.guid = ?", []any{guid}, func(m model.Message) error {
		got, found = m, true
		return nil
	})
	if err != nil {
		return model.Message{}, err
	}
	if !found {
		return model.Message{}, fmt.Errorf("message %s: %w", guid, ErrNotFound)
	}
	return got, nil
}

// sparse runs a filtered message query in one transaction, looking
// attachments up per message.
func (r *Reader) sparse(ctx context.Context, where string, args []any, fn func(model.Message) error) error {
	tx, err := r.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("read messages: %w", err)
	}
	defer tx.Rollback()
	l := &lookups{}
	if err := r.loadLookups(ctx, tx, l); err != nil {
		return err
	}
	att := &pointAttachments{r: r, q: tx}
	defer att.close()
	if _, _, err := r.stream(ctx, tx, l, att, r.sch.messageSelect()+" "+where, args, fn); err != nil {
		return err
	}
	return tx.Commit()
}

// Deleted calls fn for every tombstone in deleted_messages after the given
// deleted_messages ROWID, in order. It returns an error wrapping
// errors.ErrUnsupported when the schema keeps no tombstones (iOS 8 and older).
func (r *Reader) Deleted(ctx context.Context, afterRowID int64, fn func(Deletion) error) error {
	if !r.caps.DeletedLog {
		return fmt.Errorf("read deleted messages: %w: no deleted_messages table", errors.ErrUnsupported)
	}
	rows, err := r.db.QueryContext(ctx, "SELECT ROWID, guid FROM deleted_messages WHERE ROWID > ? ORDER BY ROWID", afterRowID)
	if err != nil {
		return fmt.Errorf("read deleted messages: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d Deletion
		var g sql.NullString
		if err := rows.Scan(&d.RowID, &g); err != nil {
			return fmt.Errorf("read deleted messages: %w", err)
		}
		d.GUID = g.String
		if err := fn(d); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read deleted messages: %w", err)
	}
	return nil
}

// stream runs q and converts its rows. Consecutive rows with the same ROWID
// (a message in several chats) become one message. It returns the number of
// messages delivered and the last ROWID seen.
func (r *Reader) stream(ctx context.Context, tx *sql.Tx, l *lookups, att attachmentSource, q string, args []any, fn func(model.Message) error) (int, int64, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, 0, fmt.Errorf("read messages: %w", err)
	}
	defer rows.Close()
	var (
		row     msgRow
		dest    = row.dest()
		cur     model.Message
		have    bool
		n       int
		lastRow int64
		conv    converter
	)
	conv.r, conv.l = r, l
	flush := func() error {
		if !have {
			return nil
		}
		have = false
		n++
		if len(cur.ConversationIDs) > 1 {
			slices.Sort(cur.ConversationIDs)
			cur.ConversationIDs = slices.Compact(cur.ConversationIDs)
		}
		return fn(cur)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return n, lastRow, fmt.Errorf("read messages: scan row after %d: %w", lastRow, err)
		}
		if have && row.rowID == cur.RowID {
			// The same message in another chat.
			if id, ok := conv.chatGUID(ctx, tx, row.chatID); ok {
				cur.ConversationIDs = append(cur.ConversationIDs, id)
			}
			continue
		}
		if err := flush(); err != nil {
			return n, lastRow, err
		}
		lastRow = row.rowID
		row.recoverableFor = sql.NullInt64{}
		if c, ok := l.recoverable[row.rowID]; ok {
			row.recoverableFor = sql.NullInt64{Int64: c, Valid: true}
		}
		cur, err = conv.convert(ctx, tx, &row)
		if err != nil {
			return n, lastRow, err
		}
		if cur.Attachments, err = att.get(ctx, row.rowID); err != nil {
			return n, lastRow, err
		}
		have = true
	}
	if err := rows.Err(); err != nil {
		return n, lastRow, fmt.Errorf("read messages after rowid %d: %w", lastRow, err)
	}
	if err := flush(); err != nil {
		return n, lastRow, err
	}
	return n, lastRow, nil
}

// converter turns scanned rows into model values.
type converter struct {
	r *Reader
	l *lookups
}

// chatGUID maps a chat ROWID to its guid, reloading the chat map once when
// the chat is new.
func (c *converter) chatGUID(ctx context.Context, q queryer, id sql.NullInt64) (string, bool) {
	if !id.Valid {
		return "", false
	}
	ci, ok := c.l.chats[id.Int64]
	if !ok && !c.l.fresh {
		if err := c.r.loadLookups(ctx, q, c.l); err == nil {
			ci, ok = c.l.chats[id.Int64]
		}
	}
	return ci.guid, ok
}

func (c *converter) isGroupChat(id int64) bool { return c.l.chats[id].group }

func (c *converter) handle(ctx context.Context, q queryer, id int64) string {
	if id <= 0 {
		return ""
	}
	h, ok := c.l.handles[id]
	if !ok && !c.l.fresh {
		if err := c.r.loadLookups(ctx, q, c.l); err == nil {
			h = c.l.handles[id]
		}
	}
	return h
}

// convert builds a model.Message from the first row of a message.
func (c *converter) convert(ctx context.Context, q queryer, row *msgRow) (model.Message, error) {
	m := model.Message{
		Source:        model.SourceIMessage,
		ID:            row.guid,
		RowID:         row.rowID,
		Service:       intern(row.service),
		Time:          appleTime(row.date),
		TimeRead:      appleTime(row.dateRead),
		TimeDelivered: appleTime(row.dateDelivered),
		Subject:       string(row.subject),
		IsSent:        row.isSent != 0,
		IsDelivered:   row.isDelivered != 0,
		IsRead:        row.isRead != 0,
		Error:         int(row.errCode),
		Kind:          model.MsgText,
	}
	if id, ok := c.chatGUID(ctx, q, row.chatID); ok {
		m.ConversationIDs = []string{id}
	} else if id, ok := c.chatGUID(ctx, q, row.recoverableFor); ok {
		// Recently deleted rows leave chat_message_join; their chat is
		// remembered in chat_recoverable_message_join.
		m.ConversationIDs = []string{id}
	}
	if m.ConversationIDs == nil {
		m.ConversationIDs = []string{}
	}
	m.RecentlyDeleted = row.recoverableFor.Valid
	m.FromMe = row.isFromMe != 0
	if !m.FromMe {
		if row.handleID == 0 && row.chatID.Valid && c.isGroupChat(row.chatID.Int64) {
			// Handle 0 is the owner in group chats.
			m.FromMe = true
		} else {
			m.Sender = c.handle(ctx, q, row.handleID)
		}
	}

	// Body: attributedBody when present, else the text column.
	switch {
	case len(row.body) > 0:
		text, runs, err := decodeBody(row.body)
		if err != nil {
			m.Text, m.TextSource = string(row.text), TextUndecodable
			c.r.log.Debug("undecodable attributedBody; using the text column", "rowid", row.rowID, "err", err)
		} else if text == "" && len(row.text) > 0 {
			m.Text, m.TextSource = string(row.text), TextColumn
		} else {
			m.Text, m.Runs, m.TextSource = text, runs, TextAttributedBody
		}
	case len(row.text) > 0:
		m.Text, m.TextSource = string(row.text), TextColumn
	default:
		m.TextSource = TextNone
	}

	if len(row.threadGUID) > 0 {
		m.ReplyTo = string(row.threadGUID)
		m.ReplyToPart = partIndex(row.threadPart)
	}
	m.Effect = intern(row.effect)
	c.kind(ctx, q, row, &m)
	if len(row.summary) > 0 || row.dateEdited != 0 || row.dateRetracted != 0 {
		applySummary(row.summary, row.dateEdited, row.dateRetracted, &m, c.r.log)
	}
	return m, nil
}

// TextSource values of model.Message.
const (
	TextAttributedBody = "attributedBody"
	TextColumn         = "text"
	TextNone           = "none"
	TextUndecodable    = "undecodable"
)

// partIndex parses thread_originator_part ("N:start:len", the part index is
// the text before the first ':'); -1 when absent or malformed.
func partIndex(b []byte) int {
	s := string(b)
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// kind classifies the row: reaction, group event, app balloon, other.
func (c *converter) kind(ctx context.Context, q queryer, row *msgRow, m *model.Message) {
	if rt, removed, ok := reactionType(row.assocType); ok && len(row.assocGUID) > 0 {
		target, part := parseAssociated(string(row.assocGUID))
		m.Kind = model.MsgReaction
		m.Reaction = &model.Reaction{Target: target, TargetPart: part, Type: rt, Removed: removed}
		if rt == model.ReactEmoji {
			m.Reaction.Emoji = string(row.assocEmoji)
		}
		return
	}
	switch row.itemType {
	case 0:
	case 1, 2, 3:
		if ev := groupEvent(row, c.handle(ctx, q, row.otherHandle)); ev != nil {
			m.Kind, m.GroupEvent = model.MsgGroupEvent, ev
			return
		}
		m.Kind, m.Detail = model.MsgOther, fmt.Sprintf("item_type_%d_%d", row.itemType, row.groupAction)
		return
	case 4:
		m.Kind, m.Detail = model.MsgOther, "shared_location"
		return
	case 5:
		m.Kind, m.Detail = model.MsgOther, "audio_kept"
		return
	case 6:
		m.Kind, m.Detail = model.MsgOther, "shareplay"
		return
	default:
		m.Kind, m.Detail = model.MsgOther, "item_type_"+strconv.FormatInt(row.itemType, 10)
		return
	}
	if len(row.balloon) > 0 {
		m.Kind, m.App = model.MsgApp, appID(row.balloon)
	}
}

// reactionType maps associated_message_type to a reaction.
func reactionType(t int64) (model.ReactionType, bool, bool) {
	types := [...]model.ReactionType{model.ReactLove, model.ReactLike, model.ReactDislike, model.ReactLaugh,
		model.ReactEmphasize, model.ReactQuestion, model.ReactEmoji, model.ReactSticker}
	switch {
	case t == 1000:
		return model.ReactSticker, false, true
	case t >= 2000 && t <= 2007:
		return types[t-2000], false, true
	case t >= 3000 && t <= 3007:
		return types[t-3000], true, true
	case t == 4000:
		return model.ReactPollVote, false, true
	}
	return "", false, false
}

// parseAssociated strips the "p:N/" and "bp:" prefixes of
// associated_message_guid and returns the target guid and part index.
func parseAssociated(s string) (string, int) {
	switch {
	case strings.HasPrefix(s, "p:"):
		rest := s[2:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			n, err := strconv.Atoi(rest[:i])
			if err != nil || n < 0 {
				n = 0
			}
			return rest[i+1:], n
		}
		return rest, 0
	case strings.HasPrefix(s, "bp:"):
		return s[3:], 0
	}
	return s, 0
}

// groupEvent decodes item_type/group_action_type (nil when unknown).
func groupEvent(row *msgRow, other string) *model.GroupEvent {
	switch row.itemType {
	case 1:
		switch row.groupAction {
		case 0:
			if row.otherHandle != 0 && row.otherHandle == row.handleID {
				return &model.GroupEvent{Type: model.GroupNumberChanged, Other: other}
			}
			return &model.GroupEvent{Type: model.GroupMemberAdded, Other: other}
		case 1:
			return &model.GroupEvent{Type: model.GroupMemberRemoved, Other: other}
		}
	case 2:
		return &model.GroupEvent{Type: model.GroupRenamed, Title: string(row.groupTitle)}
	case 3:
		switch row.groupAction {
		case 0:
			return &model.GroupEvent{Type: model.GroupMemberLeft}
		case 1:
			return &model.GroupEvent{Type: model.GroupIconChanged}
		case 2:
			return &model.GroupEvent{Type: model.GroupIconRemoved}
		case 4:
			return &model.GroupEvent{Type: model.GroupBackgroundChanged}
		case 6:
			return &model.GroupEvent{Type: model.GroupBackgroundRemoved}
		}
	}
	return nil
}

// appID returns the app part of a balloon bundle id: the third ':'-part of
// "com.apple.messages.MSMessageExtensionBalloonPlugin:<team>:<bundle>", else
// the id itself.
func appID(b []byte) string {
	s := string(b)
	if parts := strings.SplitN(s, ":", 3); len(parts) == 3 && parts[2] != "" {
		return parts[2]
	}
	return intern(b)
}

// interned holds strings that repeat on most rows (services, effects,
// balloons), so converting them allocates nothing.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{"iMessage", "SMS", "RCS", "",
		"com.apple.messages.URLBalloonProvider", "com.apple.Handwriting.HandwritingProvider",
		"com.apple.DigitalTouchBalloonProvider", "com.apple.messages.Polls",
		"com.apple.MobileSMS.expressivesend.gentle", "com.apple.MobileSMS.expressivesend.impact",
		"com.apple.MobileSMS.expressivesend.invisibleink", "com.apple.MobileSMS.expressivesend.loud"} {
		m[s] = s
	}
	for _, e := range []string{"Confetti", "Echo", "Fireworks", "HappyBirthday", "Heart", "Lasers", "ShootingStar", "Sparkles", "Spotlight"} {
		s := "com.apple.messages.effect.CK" + e + "Effect"
		m[s] = s
	}
	return m
}()

func intern(b []byte) string {
	if s, ok := interned[string(b)]; ok {
		return s
	}
	return string(b)
}
