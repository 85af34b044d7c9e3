// Package chatdb writes rows into a Messages database (chat.db or an
// iPhone backup's sms.db) built from one of the real schemas of
// internal/imessage/schemas. It is the one place that spells out chat.db
// INSERT statements: the reader's, the service's, the bridge's and the
// commands' tests, and `tidings bench` (which plays Messages.app), all
// write through it.
//
// A column the database's schema lacks is dropped, the way data written by
// an older OS simply has no such column; a zero field of a row type
// ([Handle], [Chat], [Message], [Attachment]) is not written and takes the
// schema's default, so a row holds exactly the columns its caller set.
package chatdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"
)

// DB is what a Writer writes through: a *sql.DB, *sql.Conn or *sql.Tx.
type DB interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// TB is the part of testing.TB a test Writer reports failures to.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Writer inserts rows. A Writer from [New] keeps the first error (later
// writes do nothing; [Writer.Err] reports it); one from [ForTest] fails the
// test at the failing write. Like the connection under it, a Writer is used
// by one goroutine at a time.
type Writer struct {
	ctx    context.Context
	db     DB
	tb     TB
	shared *shared // with the Writers On makes
}

type shared struct {
	mu   sync.Mutex
	cols map[string]map[string]bool // per table
	err  error
}

// New returns a Writer on db.
func New(ctx context.Context, db DB) *Writer {
	return &Writer{ctx: ctx, db: db, shared: &shared{cols: map[string]map[string]bool{}}}
}

// ForTest returns a Writer on db that calls tb.Fatalf on the first error.
func ForTest(tb TB, db DB) *Writer {
	w := New(context.Background(), db)
	w.tb = tb
	return w
}

// On returns a Writer that writes through db (a transaction of the same
// database, typically), sharing w's error and column cache.
func (w *Writer) On(db DB) *Writer {
	c := *w
	c.db = db
	return &c
}

// Err is the first error of w (and of the Writers On made from it).
func (w *Writer) Err() error {
	w.shared.mu.Lock()
	defer w.shared.mu.Unlock()
	return w.shared.err
}

func (w *Writer) fail(err error) {
	w.shared.mu.Lock()
	if w.shared.err == nil {
		w.shared.err = err
	}
	w.shared.mu.Unlock()
	if w.tb != nil {
		w.tb.Helper()
		w.tb.Fatalf("chatdb: %v", err)
	}
}

// Has reports whether the schema's table has column col.
func (w *Writer) Has(table, col string) bool { return w.columns(table)[col] }

func (w *Writer) columns(table string) map[string]bool {
	w.shared.mu.Lock()
	set, ok := w.shared.cols[table]
	w.shared.mu.Unlock()
	if ok {
		return set
	}
	set = map[string]bool{}
	rows, err := w.db.QueryContext(w.ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		w.fail(fmt.Errorf("columns of %s: %w", table, err))
		return set
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			w.fail(fmt.Errorf("columns of %s: %w", table, err))
			return set
		}
		set[n] = true
	}
	if err := rows.Err(); err != nil {
		w.fail(fmt.Errorf("columns of %s: %w", table, err))
		return set
	}
	w.shared.mu.Lock()
	w.shared.cols[table] = set
	w.shared.mu.Unlock()
	return set
}

// Insert adds a row to table and returns its ROWID; kv alternates column
// names and values. Columns the table lacks are dropped (with none left the
// row takes every default).
func (w *Writer) Insert(table string, kv ...any) int64 {
	if w.tb != nil {
		w.tb.Helper()
	}
	if w.Err() != nil {
		return 0
	}
	if len(kv)%2 != 0 {
		w.fail(fmt.Errorf("insert %s: odd key/value list", table))
		return 0
	}
	have := w.columns(table)
	var names, marks []string
	var args []any
	for i := 0; i < len(kv); i += 2 {
		name, ok := kv[i].(string)
		if !ok {
			w.fail(fmt.Errorf("insert %s: column name %v is not a string", table, kv[i]))
			return 0
		}
		if !have[name] {
			continue
		}
		names = append(names, name)
		marks = append(marks, "?")
		args = append(args, kv[i+1])
	}
	q := "INSERT INTO " + table + " (" + strings.Join(names, ", ") + ") VALUES (" + strings.Join(marks, ", ") + ")"
	if len(names) == 0 {
		q = "INSERT INTO " + table + " DEFAULT VALUES"
	}
	res, err := w.db.ExecContext(w.ctx, q, args...)
	if err != nil {
		w.fail(fmt.Errorf("%s: %w", q, err))
		return 0
	}
	id, err := res.LastInsertId()
	if err != nil {
		w.fail(fmt.Errorf("%s: %w", q, err))
		return 0
	}
	return id
}

// row collects the columns of a typed row, leaving zero values out.
type row []any

func (r *row) set(col string, v any) { *r = append(*r, col, v) }

func (r *row) id(col string, v int64) {
	if v != 0 {
		r.set(col, v)
	}
}

func (r *row) str(col, v string) {
	if v != "" {
		r.set(col, v)
	}
}

func (r *row) num(col string, v int) {
	if v != 0 {
		r.set(col, v)
	}
}

func (r *row) flag(col string, v bool) {
	if v {
		r.set(col, 1)
	}
}

func (r *row) blob(col string, v []byte) {
	if v != nil {
		r.set(col, v)
	}
}

// appleEpoch is chat.db's epoch, 2001-01-01 00:00 UTC.
var appleEpoch = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

// Nanos encodes t as a date column of a nanosecond-era schema (macOS 10.13
// and iOS 11 on; docs/imessage.md): nanoseconds since 2001-01-01 UTC.
func Nanos(t time.Time) int64 { return t.Sub(appleEpoch).Nanoseconds() }

// Seconds encodes t as a date column of an older schema: seconds since
// 2001-01-01 UTC.
func Seconds(t time.Time) int64 { return t.Unix() - appleEpoch.Unix() }

// Handle is a row of handle: one address of a person.
type Handle struct {
	ROWID           int64 // 0: the next one
	ID              string
	Service         string // "iMessage", "SMS"
	Country         string
	Uncanonicalized string // uncanonicalized_id
}

// Handle inserts h and returns its ROWID.
func (w *Writer) Handle(h Handle) int64 {
	if w.tb != nil {
		w.tb.Helper()
	}
	var r row
	r.id("ROWID", h.ROWID)
	r.str("id", h.ID)
	r.str("country", h.Country)
	r.str("service", h.Service)
	r.str("uncanonicalized_id", h.Uncanonicalized)
	return w.Insert("handle", r...)
}

// Chat is a row of chat, with its members (chat_handle_join rows, written
// right after it in order).
type Chat struct {
	ROWID       int64 // 0: the next one
	GUID        string
	Style       int // 45 one-to-one, 43 group; 0: NULL
	State       int
	Identifier  string  // chat_identifier
	Service     string  // service_name
	DisplayName *string // nil: NULL (Messages stores "" for an unnamed chat)
	Archived    bool
	Handles     []int64
}

// Chat inserts c and its members and returns its ROWID.
func (w *Writer) Chat(c Chat) int64 {
	if w.tb != nil {
		w.tb.Helper()
	}
	var r row
	r.id("ROWID", c.ROWID)
	r.str("guid", c.GUID)
	r.num("style", c.Style)
	r.num("state", c.State)
	r.str("chat_identifier", c.Identifier)
	r.str("service_name", c.Service)
	if c.DisplayName != nil {
		r.set("display_name", *c.DisplayName)
	}
	r.flag("is_archived", c.Archived)
	id := w.Insert("chat", r...)
	for _, h := range c.Handles {
		w.Member(id, h)
	}
	return id
}

// Member links handle to chat (a chat_handle_join row).
func (w *Writer) Member(chat, handle int64) {
	if w.tb != nil {
		w.tb.Helper()
	}
	w.Insert("chat_handle_join", "chat_id", chat, "handle_id", handle)
}

// Message is a row of message, with the chats it is in (chat_message_join
// rows dated Date, written right after it in order). Dates are stored
// values: [Nanos] or [Seconds] of a time.
type Message struct {
	ROWID   int64 // 0: the next one
	GUID    string
	Text    string // "": NULL (recent macOS keeps the body in Body only)
	Body    []byte // attributedBody (a typedstream)
	Subject string
	Handle  int64 // handle_id; 0 for the owner's own messages and events
	Service string
	Error   int
	Date    int64

	DateRead, DateDelivered int64
	DateEdited              int64
	DateRetracted           int64  // unsent
	SummaryInfo             []byte // message_summary_info: the edit and unsend plist

	FromMe, Read, Delivered, Sent, Finished bool
	HasAttachments                          bool // cache_has_attachments
	PartCount                               int  // 0: NULL

	ItemType, GroupActionType int
	OtherHandle               *int64 // nil: the schema's default (-1 on macOS 15)
	GroupTitle                string

	AssocGUID  string // associated_message_guid: the tapback's target
	AssocType  int
	AssocEmoji string

	ReplyTo   string // thread_originator_guid
	ReplyPart string // thread_originator_part

	Chats []int64
}

// Message inserts m and its chat links and returns its ROWID.
func (w *Writer) Message(m Message) int64 {
	if w.tb != nil {
		w.tb.Helper()
	}
	var r row
	r.id("ROWID", m.ROWID)
	r.str("guid", m.GUID)
	r.str("text", m.Text)
	r.blob("attributedBody", m.Body)
	r.str("subject", m.Subject)
	r.id("handle_id", m.Handle)
	r.str("service", m.Service)
	r.num("error", m.Error)
	r.id("date", m.Date)
	r.id("date_read", m.DateRead)
	r.id("date_delivered", m.DateDelivered)
	r.id("date_edited", m.DateEdited)
	r.id("date_retracted", m.DateRetracted)
	r.blob("message_summary_info", m.SummaryInfo)
	r.flag("is_delivered", m.Delivered)
	r.flag("is_finished", m.Finished)
	r.flag("is_from_me", m.FromMe)
	r.flag("is_read", m.Read)
	r.flag("is_sent", m.Sent)
	r.flag("cache_has_attachments", m.HasAttachments)
	r.num("item_type", m.ItemType)
	r.num("group_action_type", m.GroupActionType)
	if m.OtherHandle != nil {
		r.set("other_handle", *m.OtherHandle)
	}
	r.str("group_title", m.GroupTitle)
	r.str("associated_message_guid", m.AssocGUID)
	r.num("associated_message_type", m.AssocType)
	r.str("associated_message_emoji", m.AssocEmoji)
	r.str("thread_originator_guid", m.ReplyTo)
	r.str("thread_originator_part", m.ReplyPart)
	r.num("part_count", m.PartCount)
	id := w.Insert("message", r...)
	for _, c := range m.Chats {
		w.Join(c, id, m.Date)
	}
	return id
}

// Join links message to chat (a chat_message_join row); date is its
// message_date (0: the column's default, 0).
func (w *Writer) Join(chat, message, date int64) {
	if w.tb != nil {
		w.tb.Helper()
	}
	var r row
	r.set("chat_id", chat)
	r.set("message_id", message)
	r.id("message_date", date)
	w.Insert("chat_message_join", r...)
}

// Attachment is a row of attachment, with the messages it belongs to
// (message_attachment_join rows, written right after it in order).
type Attachment struct {
	ROWID         int64 // 0: the next one
	GUID          string
	Created       int64  // created_date
	Filename      string // "": NULL (no file on this Mac)
	UTI           string
	MIME          string // mime_type
	TransferState int    // 5: finished
	Outgoing      bool
	TransferName  string
	TotalBytes    int64 // 0: the schema's default
	Sticker       bool
	OriginalGUID  string
	Messages      []int64
}

// Attachment inserts a and its message links and returns its ROWID.
func (w *Writer) Attachment(a Attachment) int64 {
	if w.tb != nil {
		w.tb.Helper()
	}
	var r row
	r.id("ROWID", a.ROWID)
	r.str("guid", a.GUID)
	r.id("created_date", a.Created)
	r.str("filename", a.Filename)
	r.str("uti", a.UTI)
	r.str("mime_type", a.MIME)
	r.num("transfer_state", a.TransferState)
	r.flag("is_outgoing", a.Outgoing)
	r.str("transfer_name", a.TransferName)
	r.id("total_bytes", a.TotalBytes)
	r.flag("is_sticker", a.Sticker)
	r.str("original_guid", a.OriginalGUID)
	id := w.Insert("attachment", r...)
	for _, m := range a.Messages {
		w.Attach(m, id)
	}
	return id
}

// Attach links attachment to message (a message_attachment_join row).
func (w *Writer) Attach(message, attachment int64) {
	if w.tb != nil {
		w.tb.Helper()
	}
	w.Insert("message_attachment_join", "message_id", message, "attachment_id", attachment)
}

// FileTB is what [CreateForTest] needs of testing.TB.
type FileTB interface {
	TB
	TempDir() string
}

// CreateForTest creates chat.db in a new temporary folder of the test from
// ddl (a schema of internal/imessage/schemas) and returns it open on one
// connection, with its path; the caller closes it. The test binary
// registers the "sqlite" driver.
func CreateForTest(tb FileTB, ddl string) (*sql.DB, string) {
	tb.Helper()
	path := tb.TempDir() + "/chat.db"
	db, err := sql.Open("sqlite", path)
	if err != nil {
		tb.Fatalf("create chat.db: %v", err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(ddl); err != nil {
		db.Close()
		tb.Fatalf("create chat.db: %v", err)
	}
	return db, path
}
