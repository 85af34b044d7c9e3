package bridge

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/output"
	_ "modernc.org/sqlite" // the project's SQLite driver ("sqlite")
)

// ChatDB answers list_chats from a Messages database (chat.db or an iOS
// sms.db) opened read-only. It reads chat, handle, chat_handle_join and
// chat_message_join (ids and dates) — never the message table's text or
// attributedBody: chat_message_join's message_date supplies activity, and
// only when a row has no message_date is message.date read, by ROWID.
// The read policy is deliberately not applied (docs/bridge.md, list_chats).
type ChatDB struct {
	db   *sql.DB
	path string
	// cmjDate: chat_message_join has message_date (macOS 10.13+, iOS 11+).
	cmjDate bool
	// chat columns that old schemas lack.
	hasStyle, hasDisplay, hasService bool
}

// Queries, kept as constants so a test can assert that none of them names
// a body column.
const (
	qChats   = "SELECT ROWID, COALESCE(guid, ''), %s, COALESCE(chat_identifier, ''), %s, %s FROM chat"
	qMembers = "SELECT chj.chat_id, COALESCE(h.id, '') FROM chat_handle_join chj JOIN handle h ON h.ROWID = chj.handle_id ORDER BY chj.chat_id, h.ROWID"
)

// dateExpr is the per-row date: message_date when set, else message.date
// looked up by ROWID (only the date column).
func (c *ChatDB) dateExpr() string {
	if c.cmjDate {
		return "CASE WHEN cmj.message_date > 0 THEN cmj.message_date ELSE (SELECT m.date FROM message m WHERE m.ROWID = cmj.message_id) END"
	}
	return "(SELECT m.date FROM message m WHERE m.ROWID = cmj.message_id)"
}

// OpenChatDB opens a Messages database read-only (mode=ro; no pragma that
// writes) and probes the columns list_chats uses.
func OpenChatDB(ctx context.Context, path string) (*ChatDB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open messages database: %w", err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	db, err := sql.Open("sqlite", u.String()+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("open messages database %s: %w", abs, err)
	}
	db.SetMaxOpenConns(2)
	c := &ChatDB{db: db, path: abs}
	cols := map[string]map[string]bool{}
	for _, table := range []string{"chat", "chat_message_join", "chat_handle_join", "handle", "message"} {
		cols[table] = map[string]bool{}
		rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("open messages database %s: %w", abs, err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err == nil {
				cols[table][n] = true
			}
		}
		rows.Close()
		if len(cols[table]) == 0 {
			db.Close()
			return nil, fmt.Errorf("open messages database %s: no %s table (not a Messages database, or not readable: on macOS grant Full Disk Access)", abs, table)
		}
	}
	c.cmjDate = cols["chat_message_join"]["message_date"]
	c.hasStyle, c.hasDisplay, c.hasService = cols["chat"]["style"], cols["chat"]["display_name"], cols["chat"]["service_name"]
	return c, nil
}

// Close closes the database.
func (c *ChatDB) Close() error { return c.db.Close() }

// Path is the database file.
func (c *ChatDB) Path() string { return c.path }

// NameResolver gives a handle's contact name ("" when unknown).
type NameResolver interface {
	DisplayName(handle string) string
}

// chat styles in chat.style (docs/bridge.md, list_chats: 43 group, 45
// direct).
const (
	styleGroup  = 43
	styleDirect = 45
)

type chatRow struct {
	rowid      int64
	guid, id   string
	style      int64
	display    string
	service    string
	members    []string
	count      int
	lastActive int64 // ns since 2001
}

// appleEpochNs is 2001-01-01 in Unix nanoseconds.
const appleEpochNs = 978307200 * int64(time.Second)

// ListChats lists the chats with activity in the last p.Days days before
// now, newest activity first (docs/bridge.md, list_chats). message_count counts
// the chat's messages inside the window; last_activity_date is the day of
// its newest message in loc. names may be nil.
func (c *ChatDB) ListChats(ctx context.Context, p ListChatsParams, now time.Time, names NameResolver, loc *time.Location) (ListChatsResult, error) {
	if loc == nil {
		loc = time.Local
	}
	res := ListChatsResult{WindowDays: p.Days, Chats: []ChatEntry{}}
	cutoff := now.Add(-time.Duration(p.Days*float64(24*time.Hour))).UnixNano() - appleEpochNs
	tx, err := c.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return res, fmt.Errorf("list chats: %w", err)
	}
	defer tx.Rollback()

	active := map[int64]*chatRow{}
	rows, err := tx.QueryContext(ctx, fmt.Sprintf(activitySQL, c.dateExpr()), cutoff)
	if err != nil {
		return res, fmt.Errorf("list chats: %w", err)
	}
	for rows.Next() {
		var r chatRow
		var last sql.NullInt64
		if err := rows.Scan(&r.rowid, &r.count, &last); err != nil {
			rows.Close()
			return res, fmt.Errorf("list chats: %w", err)
		}
		r.lastActive = last.Int64
		active[r.rowid] = &r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("list chats: %w", err)
	}
	if len(active) == 0 {
		return res, nil
	}

	col := func(ok bool, expr, neutral string) string {
		if ok {
			return expr
		}
		return neutral
	}
	q := fmt.Sprintf(qChats, col(c.hasStyle, "COALESCE(style, 0)", "0"),
		col(c.hasDisplay, "COALESCE(display_name, '')", "''"), col(c.hasService, "COALESCE(service_name, '')", "''"))
	rows, err = tx.QueryContext(ctx, q)
	if err != nil {
		return res, fmt.Errorf("list chats: %w", err)
	}
	for rows.Next() {
		var r chatRow
		if err := rows.Scan(&r.rowid, &r.guid, &r.style, &r.id, &r.display, &r.service); err != nil {
			rows.Close()
			return res, fmt.Errorf("list chats: %w", err)
		}
		if a := active[r.rowid]; a != nil {
			r.count, r.lastActive = a.count, a.lastActive
			*a = r
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("list chats: %w", err)
	}
	rows, err = tx.QueryContext(ctx, qMembers)
	if err != nil {
		return res, fmt.Errorf("list chats: %w", err)
	}
	for rows.Next() {
		var id int64
		var h string
		if err := rows.Scan(&id, &h); err != nil {
			rows.Close()
			return res, fmt.Errorf("list chats: %w", err)
		}
		if a := active[id]; a != nil && h != "" && !slices.Contains(a.members, h) {
			a.members = append(a.members, h)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("list chats: %w", err)
	}

	list := make([]*chatRow, 0, len(active))
	for _, r := range active {
		if r.guid == "" && r.id == "" {
			continue // a join row whose chat is gone
		}
		list = append(list, r)
	}
	slices.SortFunc(list, func(a, b *chatRow) int {
		return cmp.Or(cmp.Compare(b.lastActive, a.lastActive), cmp.Compare(a.rowid, b.rowid))
	})
	// The query matches the names as chat.db and the contacts hold them,
	// or the escaped form output.Name shows (docs/security.md, "Names").
	var queries []string
	for _, f := range output.NameForms(p.Query) {
		queries = append(queries, strings.ToLower(f))
	}
	for _, r := range list {
		e := r.entry(names, loc)
		if e.Kind == "group" && !p.IncludeGroups {
			continue
		}
		if queries[0] != "" && !slices.ContainsFunc(queries, func(q string) bool { return r.matches(e, q) }) {
			continue
		}
		if len(res.Chats) == p.Limit {
			res.Truncated = true
			break
		}
		res.Chats = append(res.Chats, outputEntry(e))
	}
	res.ChatCount = len(res.Chats)
	return res, nil
}

// activitySQL selects (chat ROWID, messages in the window, newest date)
// over chat_message_join. Dates are nanoseconds since 2001 on modern
// systems and seconds on old ones, per value; the CASE normalises to
// nanoseconds. %s is dateExpr.
const activitySQL = `SELECT chat_id, COUNT(*), MAX(d) FROM (
	SELECT cmj.chat_id AS chat_id, CASE WHEN d0 > 0 AND d0 < 1000000000000 THEN d0 * 1000000000 ELSE d0 END AS d
	FROM (SELECT cmj.chat_id, cmj.message_id, %s AS d0 FROM chat_message_join cmj) cmj
) WHERE d >= ? GROUP BY chat_id`

func (r *chatRow) kind() string {
	switch r.style {
	case styleGroup:
		return "group"
	case styleDirect:
		return "direct"
	}
	// Protocol 1.2's fallback: a chat… identifier is a group.
	if strings.HasPrefix(r.id, "chat") && len(r.id) > 4 {
		if _, err := strconv.ParseUint(r.id[4:], 10, 64); err == nil {
			return "group"
		}
	}
	return "direct"
}

func (r *chatRow) entry(names NameResolver, loc *time.Location) ChatEntry {
	chatID := r.id
	if chatID == "" {
		chatID = r.guid
	}
	e := ChatEntry{
		ChatID:           chatID,
		Kind:             r.kind(),
		DisplayName:      r.display,
		Participants:     r.members,
		ParticipantCount: len(r.members),
		Service:          r.service,
		MessageCount:     r.count,
	}
	if len(e.Participants) > maxListedParticipants {
		e.Participants = e.Participants[:maxListedParticipants]
	}
	if e.Participants == nil {
		e.Participants = []string{}
	}
	if r.lastActive > 0 {
		e.LastActivityDate = time.Unix(0, r.lastActive+appleEpochNs).In(loc).Format(time.DateOnly)
	}
	name := func(h string) string {
		if names != nil {
			if n := names.DisplayName(h); n != "" {
				return n
			}
		}
		return h
	}
	switch {
	case e.Kind == "group" && r.display != "":
		e.Label = r.display
	case e.Kind == "group" && len(r.members) > 0:
		e.Label = groupLabel(r.members, name)
	case e.Kind == "direct" && len(r.members) > 0:
		e.Label = name(r.members[0])
	case e.Kind == "direct" && r.id != "":
		e.Label = name(r.id)
	}
	if e.Label == "" {
		e.Label = chatID
	}
	return e
}

// outputEntry passes every string of an entry that a third party controls
// (chat.db's identifiers, titles and handles, contact names) through
// output.Name, the one treatment of names at the output boundary.
func outputEntry(e ChatEntry) ChatEntry {
	e.ChatID, e.DisplayName, e.Label, e.Service = output.Name(e.ChatID), output.Name(e.DisplayName), output.Name(e.Label), output.Name(e.Service)
	ps := make([]string, len(e.Participants))
	for i, h := range e.Participants {
		ps[i] = output.Name(h)
	}
	e.Participants = ps
	return e
}

// groupLabel names an unnamed group after its first three members.
func groupLabel(members []string, name func(string) string) string {
	n := min(len(members), 3)
	parts := make([]string, n)
	for i := range n {
		parts[i] = name(members[i])
	}
	label := strings.Join(parts, ", ")
	if len(members) > n {
		label += fmt.Sprintf(" +%d", len(members)-n)
	}
	return label
}

// matches is protocol 1.2's query filter: case-insensitive substring of label,
// display_name, chat_id or any participant handle.
func (r *chatRow) matches(e ChatEntry, q string) bool {
	for _, s := range []string{e.Label, e.DisplayName, e.ChatID} {
		if strings.Contains(strings.ToLower(s), q) {
			return true
		}
	}
	for _, h := range r.members {
		if strings.Contains(strings.ToLower(h), q) {
			return true
		}
	}
	return false
}

// ErrNoDatabase is returned by a manager backend without a messages
// database configured.
var ErrNoDatabase = errors.New("no messages database is configured for this helper (set --imessage or TIDINGS_IMESSAGE)")
