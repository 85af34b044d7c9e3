package imessage

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

// Capabilities is what a database's schema supports, probed once at Open with
// pragma_table_info. Each flag names the feature, not an OS version: two Macs
// on the same release can carry different columns.
type Capabilities struct {
	MessageColumns  int    // number of columns in message
	AttributedBody  bool   // message.attributedBody (bodies of modern rows live only here)
	Reactions       bool   // message.associated_message_guid/_type (iOS 10+)
	ReactionEmoji   bool   // message.associated_message_emoji (custom emoji tapbacks, iOS 18)
	Balloons        bool   // message.balloon_bundle_id (app messages)
	Effects         bool   // message.expressive_send_style_id
	Replies         bool   // message.thread_originator_guid (inline replies, iOS 14)
	Edits           bool   // message.date_edited + message_summary_info (iOS 16)
	Retractions     bool   // message.date_retracted (unsend, iOS 16)
	GroupEvents     bool   // message.item_type/group_action_type (iOS 9)
	RecentlyDeleted bool   // chat_recoverable_message_join (iOS 16)
	DeletedLog      bool   // deleted_messages tombstones (iOS 9)
	ChatDisplayName bool   // chat.display_name
	TransferName    bool   // attachment.transfer_name
	Stickers        bool   // attachment.is_sticker
	IndexedChatJoin bool   // an index on chat_message_join(message_id): paged reads are cheap
	NanosecondDates bool   // the newest message date is in nanoseconds (informational)
	JournalMode     string // as reported by SQLite ("wal", "delete", …)
}

// tableCols maps table → set of column names.
type tableCols map[string]map[string]bool

func (t tableCols) has(table, col string) bool { return t[table][col] }

// schema is the probed layout used to compose queries.
type schema struct {
	cols   tableCols
	tables map[string]bool
}

// probe reads the table list and the columns of the tables the reader uses.
func probe(ctx context.Context, db *sql.DB) (*schema, Capabilities, error) {
	s, err := probeSchema(ctx, db)
	if err != nil {
		return nil, Capabilities{}, err
	}
	c := s.capabilities()
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err == nil {
		c.JournalMode = mode
	}
	var maxDate sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT date FROM message ORDER BY ROWID DESC LIMIT 1").Scan(&maxDate); err == nil {
		c.NanosecondDates = maxDate.Int64 >= nsThreshold
	}
	return s, c, nil
}

// neededColumns are the columns the reader names directly in its queries
// (not through schema.col, which turns a missing column into a neutral
// value), per table. A required table must exist; an optional one (older
// schemas lack it) must have them when it exists. Without one of them a
// sync would stop halfway with a raw SQL error or, for message.date,
// is_from_me and handle_id, read every message as sent in 2001, received
// and from nobody, without an error; so Open refuses the file and says
// which table and column are missing (docs/imessage.md).
var neededColumns = []struct {
	table    string
	required bool
	cols     []string
}{
	{"message", true, []string{"guid", "date", "is_from_me", "handle_id"}},
	{"chat", true, []string{"guid"}},
	{"handle", true, []string{"id"}},
	{"chat_message_join", true, []string{"chat_id", "message_id"}},
	{"chat_handle_join", false, []string{"chat_id", "handle_id"}},
	{"attachment", false, []string{"guid"}},
	{"message_attachment_join", false, []string{"message_id", "attachment_id"}},
	{"deleted_messages", false, []string{"guid"}},
	{"chat_recoverable_message_join", false, []string{"message_id", "chat_id", "delete_date"}},
}

// needed checks neededColumns, and that message has a body column (text,
// or attributedBody where modern rows keep their text).
func (s *schema) needed() error {
	for _, n := range neededColumns {
		if !s.tables[n.table] {
			continue
		}
		for _, c := range n.cols {
			if !s.cols.has(n.table, c) {
				return fmt.Errorf("%w: table %s has no column %s", ErrIncompleteSchema, n.table, c)
			}
		}
	}
	if !s.cols.has("message", "text") && !s.cols.has("message", "attributedBody") {
		return fmt.Errorf("%w: table message has neither a text nor an attributedBody column", ErrIncompleteSchema)
	}
	return nil
}

var probedTables = []string{
	"message", "chat", "handle", "attachment", "chat_message_join", "chat_handle_join",
	"message_attachment_join", "deleted_messages", "chat_recoverable_message_join",
}

func probeSchema(ctx context.Context, db *sql.DB) (*schema, error) {
	s := &schema{cols: tableCols{}, tables: map[string]bool{}}
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type='table'")
	if err != nil {
		return nil, fmt.Errorf("probe schema: %w", err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("probe schema: %w", err)
		}
		s.tables[n] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("probe schema: %w", err)
	}
	if !s.tables["message"] && !s.tables["chat"] {
		return nil, ErrNotMessagesDB
	}
	for _, n := range neededColumns {
		if n.required && !s.tables[n.table] {
			return nil, fmt.Errorf("%w: table %s is missing", ErrIncompleteSchema, n.table)
		}
	}
	for _, t := range probedTables {
		if !s.tables[t] {
			continue
		}
		set := map[string]bool{}
		rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", t)
		if err != nil {
			return nil, fmt.Errorf("probe columns of %s: %w", t, err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return nil, fmt.Errorf("probe columns of %s: %w", t, err)
			}
			set[n] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("probe columns of %s: %w", t, err)
		}
		s.cols[t] = set
	}
	if err := s.needed(); err != nil {
		return nil, err
	}
	// Is there an index whose first column is chat_message_join.message_id?
	// Without one, every paged lookup by message would scan the whole join.
	rows, err = db.QueryContext(ctx, `SELECT ii.name FROM pragma_index_list('chat_message_join') il
		JOIN pragma_index_info(il.name) ii WHERE ii.seqno = 0`)
	if err != nil {
		return nil, fmt.Errorf("probe indexes: %w", err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("probe indexes: %w", err)
		}
		if n == "message_id" {
			s.tables["#cmj_message_id_index"] = true
		}
	}
	rows.Close()
	return s, rows.Err()
}

func (s *schema) capabilities() Capabilities {
	m := func(c string) bool { return s.cols.has("message", c) }
	c := Capabilities{
		MessageColumns:  len(s.cols["message"]),
		AttributedBody:  m("attributedBody"),
		Reactions:       m("associated_message_guid") && m("associated_message_type"),
		ReactionEmoji:   m("associated_message_emoji"),
		Balloons:        m("balloon_bundle_id"),
		Effects:         m("expressive_send_style_id"),
		Replies:         m("thread_originator_guid"),
		Edits:           m("date_edited") && m("message_summary_info"),
		Retractions:     m("date_retracted"),
		GroupEvents:     m("item_type") && m("group_action_type"),
		RecentlyDeleted: s.tables["chat_recoverable_message_join"],
		DeletedLog:      s.tables["deleted_messages"],
		ChatDisplayName: s.cols.has("chat", "display_name"),
		TransferName:    s.cols.has("attachment", "transfer_name"),
		Stickers:        s.cols.has("attachment", "is_sticker"),
		IndexedChatJoin: s.tables["#cmj_message_id_index"],
	}
	return c
}

// Summary lists the supported and missing features in one line each, for
// `tidings doctor`.
func (c Capabilities) Summary() (have, missing []string) {
	feats := []struct {
		name string
		ok   bool
	}{
		{"attributedBody", c.AttributedBody}, {"tapbacks", c.Reactions}, {"custom emoji tapbacks", c.ReactionEmoji},
		{"app balloons", c.Balloons}, {"send effects", c.Effects}, {"inline replies", c.Replies},
		{"edits", c.Edits}, {"unsend", c.Retractions}, {"group events", c.GroupEvents},
		{"recently deleted", c.RecentlyDeleted}, {"deletion log", c.DeletedLog},
		{"group names", c.ChatDisplayName}, {"attachment names", c.TransferName}, {"stickers", c.Stickers},
	}
	for _, f := range feats {
		if f.ok {
			have = append(have, f.name)
		} else {
			missing = append(missing, f.name)
		}
	}
	sort.Strings(missing)
	return have, missing
}

// col returns "alias.name" when the column exists, else the neutral literal.
func (s *schema) col(table, alias, name, neutral string) string {
	if s.cols.has(table, name) {
		return alias + "." + name
	}
	return neutral
}

// colList joins expressions for a SELECT list.
func colList(exprs []string) string { return strings.Join(exprs, ", ") }
