package imessage

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/tidings-mcp/tidings/internal/model"
)

// styleGroup is chat.style's value for group chats in the convention most
// readers use. It is only a hint: public sources disagree on it, so the guid
// and the participant count decide first.
const styleGroup = 43

// Conversations returns every chat with its participants, ordered by ROWID.
// The list is small (one row per chat) and is read in one query pair.
func (r *Reader) Conversations(ctx context.Context) ([]model.Conversation, error) {
	tx, err := r.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read chats: %w", err)
	}
	defer tx.Rollback()
	handles := map[int64]string{}
	rows, err := tx.QueryContext(ctx, "SELECT ROWID, COALESCE(id, '') FROM handle")
	if err != nil {
		return nil, fmt.Errorf("read handles: %w", err)
	}
	for rows.Next() {
		var id int64
		var h string
		if err := rows.Scan(&id, &h); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read handles: %w", err)
		}
		handles[id] = h
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read handles: %w", err)
	}
	convs, err := r.readChats(ctx, tx, handles)
	if err != nil {
		return nil, err
	}
	return convs, tx.Commit()
}

// readChats reads chats and participants with the given handle map.
func (r *Reader) readChats(ctx context.Context, q queryer, handles map[int64]string) ([]model.Conversation, error) {
	s := r.sch
	display := "NULL"
	if s.cols.has("chat", "display_name") {
		display = "c.display_name"
	}
	query := "SELECT c.ROWID, COALESCE(c.guid, ''), COALESCE(" + s.col("chat", "c", "style", "0") + ", 0), " +
		"COALESCE(" + s.col("chat", "c", "chat_identifier", "NULL") + ", ''), COALESCE(" + display + ", ''), " +
		"COALESCE(" + s.col("chat", "c", "service_name", "NULL") + ", ''), COALESCE(" + s.col("chat", "c", "is_archived", "0") + ", 0) " +
		"FROM chat c ORDER BY c.ROWID"
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("read chats: %w", err)
	}
	var convs []model.Conversation
	styles := map[int64]int64{}
	index := map[int64]int{}
	for rows.Next() {
		var c model.Conversation
		var style, archived int64
		if err := rows.Scan(&c.RowID, &c.ID, &style, &c.Identifier, &c.DisplayName, &c.Service, &archived); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read chats: %w", err)
		}
		c.Source = model.SourceIMessage
		c.Archived = archived != 0
		c.DisplayName = strings.TrimSpace(c.DisplayName)
		if c.Identifier == "" {
			c.Identifier = guidPart(c.ID, 2)
		}
		if c.Service == "" {
			c.Service = guidPart(c.ID, 0)
		}
		c.Participants = []string{}
		styles[c.RowID] = style
		index[c.RowID] = len(convs)
		convs = append(convs, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read chats: %w", err)
	}
	if r.sch.tables["chat_handle_join"] {
		rows, err = q.QueryContext(ctx, "SELECT chat_id, handle_id FROM chat_handle_join ORDER BY chat_id, handle_id")
		if err != nil {
			return nil, fmt.Errorf("read chat participants: %w", err)
		}
		for rows.Next() {
			var chatID, handleID int64
			if err := rows.Scan(&chatID, &handleID); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read chat participants: %w", err)
			}
			i, ok := index[chatID]
			h := handles[handleID]
			if !ok || h == "" {
				continue
			}
			convs[i].Participants = append(convs[i].Participants, h)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read chat participants: %w", err)
		}
	}
	for i := range convs {
		c := &convs[i]
		sort.Strings(c.Participants)
		c.Participants = dedupe(c.Participants)
		c.Kind = chatKind(c.ID, c.Identifier, len(c.Participants), styles[c.RowID])
	}
	return convs, nil
}

// chatKind decides whether a chat is a group. The guid's middle part is the
// primary signal ('+' group, '-' one-to-one); more than one participant makes
// a group whatever the guid says; style is consulted only when neither the
// guid nor the participants tell.
func chatKind(guid, identifier string, participants int, style int64) model.ConversationKind {
	if participants > 1 || strings.Contains(guid, ";+;") {
		return model.KindGroup
	}
	if strings.Contains(guid, ";-;") || participants == 1 {
		return model.KindDirect
	}
	if style == styleGroup || (strings.HasPrefix(identifier, "chat") && len(identifier) > 4 && isDigits(identifier[4:])) {
		return model.KindGroup
	}
	return model.KindDirect
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// guidPart returns the i-th ';'-separated part of a chat guid
// ("iMessage;-;+15551234567").
func guidPart(guid string, i int) string {
	parts := strings.SplitN(guid, ";", 3)
	if i < len(parts) {
		return parts[i]
	}
	return ""
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i > 0 && v == s[i-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}
