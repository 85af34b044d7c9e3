package send

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/typedstream"
	_ "modernc.org/sqlite" // the project's SQLite driver ("sqlite")
)

// DeliveryStatus is what chat.db says about a send.
type DeliveryStatus string

// Delivery statuses.
const (
	// DeliverySent: every row the send created has is_sent = 1.
	DeliverySent DeliveryStatus = "sent"
	// DeliveryFailed: a row the send created carries a non-zero error
	// (Apple's code in Delivery.ErrorCode), even if another row went out.
	DeliveryFailed DeliveryStatus = "failed"
	// DeliveryUnconfirmed: the rows were not all found sent before the
	// verification timeout; the message may still go out, or not.
	DeliveryUnconfirmed DeliveryStatus = "unconfirmed"
	// DeliveryCannotVerify: chat.db could not be read (usually missing
	// Full Disk Access), so nothing is known beyond "Messages accepted it".
	DeliveryCannotVerify DeliveryStatus = "cannot_verify"
)

// DefaultVerifyTimeout is how long a send waits for chat.db to confirm it.
// A good send confirms in under 2 s; a rejected one can take 20 s and more
// to show its error (docs/security.md, "Sending and verification"), so a
// slow failure is reported as
// unconfirmed rather than making every good send wait for it.
const DefaultVerifyTimeout = 8 * time.Second

// Row parts.
const (
	PartText  = "text"
	PartImage = "image"
)

// RowStatus is one message row a send created.
type RowStatus struct {
	RowID  int64  `json:"rowid"`
	Part   string `json:"part"`
	IsSent bool   `json:"is_sent"`
	Error  int    `json:"error,omitempty"`
}

// Delivery is the verified outcome of a send.
type Delivery struct {
	Status DeliveryStatus `json:"status" jsonschema:"sent, failed, unconfirmed or cannot_verify, as read back from chat.db"`
	// ErrorCode is Apple's message.error of the first failed row.
	ErrorCode int         `json:"error_code,omitempty"`
	Rows      []RowStatus `json:"rows,omitempty"`
	// Note says in one or two sentences what the status means here.
	Note string `json:"note"`
}

// Verifier reads chat.db back after a send. It opens the database
// read-only (mode=ro, no pragma that writes) and only for the duration of
// one send.
type Verifier struct {
	ChatDB  string
	Timeout time.Duration // default DefaultVerifyTimeout
	Poll    time.Duration // default 250 ms
}

// Mark is the database state before a send.
type Mark struct {
	db     *sql.DB
	maxRow int64
	err    error
	cols   map[string]bool
}

// Close releases the database.
func (m *Mark) Close() {
	if m != nil && m.db != nil {
		m.db.Close()
	}
}

// Mark opens chat.db and records the highest message ROWID. A database
// that cannot be opened is not an error here: the send still goes ahead
// (the person approved it) and Await reports cannot_verify.
func (v Verifier) Mark(ctx context.Context) *Mark {
	if v.ChatDB == "" {
		return &Mark{err: fmt.Errorf("no chat.db configured")}
	}
	abs, err := filepath.Abs(v.ChatDB)
	if err != nil {
		return &Mark{err: err}
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return &Mark{err: err}
	}
	db.SetMaxOpenConns(1)
	m := &Mark{db: db, cols: map[string]bool{}}
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info('message')")
	if err != nil {
		db.Close()
		return &Mark{err: err}
	}
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			m.cols[strings.ToLower(n)] = true
		}
	}
	rows.Close()
	for _, c := range []string{"is_from_me", "is_sent", "error", "text", "handle_id"} {
		if !m.cols[c] {
			db.Close()
			return &Mark{err: fmt.Errorf("message table has no %s column", c)}
		}
	}
	if err := db.QueryRowContext(ctx, "SELECT COALESCE(MAX(ROWID), 0) FROM message").Scan(&m.maxRow); err != nil {
		db.Close()
		return &Mark{err: err}
	}
	return m
}

// Expect says which rows a send should create.
type Expect struct {
	// Address is the recipient as Messages stores handles (E.164 or
	// lower-case email); ChatGUID is set for a send to a group chat.
	Address  string
	ChatGUID string
	Text     string
	Image    bool
}

// found is one candidate row.
type found struct {
	RowStatus
	text       string
	attachment bool
}

// Await polls chat.db until every expected row is found and sent, a row
// fails, or the timeout passes. Rows count only when their ROWID is above
// the mark (ROWIDs are assigned once, at insertion), they are from me, and
// they belong to the recipient (handle or direct chat) — and the text row
// must carry the text that was sent (read from attributedBody when text is
// NULL), so an unrelated message typed meanwhile is not mistaken for it.
func (v Verifier) Await(ctx context.Context, m *Mark, e Expect) Delivery {
	if m == nil || m.err != nil || m.db == nil {
		reason := "no database"
		if m != nil && m.err != nil {
			reason = m.err.Error()
		}
		return Delivery{Status: DeliveryCannotVerify, Note: fmt.Sprintf("Messages accepted the message, but chat.db could not be read to confirm it went out (%s); grant Full Disk Access to check sends", clip(reason, 160))}
	}
	timeout, poll := v.Timeout, v.Poll
	if timeout <= 0 {
		timeout = DefaultVerifyTimeout
	}
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	deadline := time.Now().Add(timeout)
	var last []found
	var lastErr error
	okOnce := false
	for {
		rows, err := m.created(ctx, e)
		if err == nil {
			okOnce = true
			last = rows
			if d, done := judge(rows, e, false); done {
				return d
			}
		} else {
			lastErr = err
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
	if !okOnce {
		return Delivery{Status: DeliveryCannotVerify, Note: fmt.Sprintf("Messages accepted the message, but chat.db could not be queried to confirm it (%s)", clip(fmt.Sprint(lastErr), 160))}
	}
	d, _ := judge(last, e, true)
	if d.Note == "" {
		d.Note = fmt.Sprintf("chat.db did not confirm the send within %s; it may still go out, or not — check the conversation before sending again", timeout)
	}
	return d
}

// judge decides a delivery from the rows found so far. done is false while
// waiting could still change the answer; final forces an answer.
func judge(rows []found, e Expect, final bool) (Delivery, bool) {
	var textRow, imageRow *found
	for i := range rows {
		r := &rows[i]
		switch {
		case r.attachment && e.Image && imageRow == nil:
			r.Part = PartImage
			imageRow = r
		case !r.attachment && textRow == nil && sameText(r.text, e.Text):
			r.Part = PartText
			textRow = r
		}
	}
	d := Delivery{}
	for _, r := range []*found{textRow, imageRow} {
		if r != nil {
			d.Rows = append(d.Rows, r.RowStatus)
		}
	}
	for _, r := range d.Rows {
		if r.Error != 0 {
			d.Status, d.ErrorCode = DeliveryFailed, r.Error
			d.Note = fmt.Sprintf("Messages reports error %d for the %s: the message was not sent", r.Error, r.Part)
			return d, true
		}
	}
	complete := textRow != nil && textRow.IsSent && (!e.Image || imageRow != nil && imageRow.IsSent)
	if complete {
		d.Status = DeliverySent
		d.Note = "chat.db shows the message as sent"
		if e.Image {
			d.Note = "chat.db shows the text and the image as sent"
		}
		return d, true
	}
	if !final {
		return d, false
	}
	d.Status = DeliveryUnconfirmed
	switch {
	case textRow == nil:
		d.Note = "no row carrying this text appeared in the recipient's conversation in chat.db before the verification timeout; it may still go out, or not"
	case !textRow.IsSent:
		d.Note = "the message is in chat.db but not marked sent yet; it may still go out, or not"
	case e.Image && (imageRow == nil || !imageRow.IsSent):
		d.Note = "the text was sent; the image is not confirmed — image sends through Messages' scripting are unreliable and often never leave, so check the conversation"
	}
	return d, false
}

// sameText compares a row's text with the sent text, ignoring the line
// ending style and surrounding white space.
func sameText(a, b string) bool {
	norm := func(s string) string {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		return strings.TrimSpace(strings.ReplaceAll(s, "\r", "\n"))
	}
	return norm(a) == norm(b)
}

// created returns the rows above the mark that belong to the send target.
func (m *Mark) created(ctx context.Context, e Expect) ([]found, error) {
	body := "NULL"
	if m.cols["attributedbody"] {
		body = "m.attributedBody"
	}
	att := "0"
	if m.cols["cache_has_attachments"] {
		att = "m.cache_has_attachments"
	}
	var target string
	var args []any
	args = append(args, m.maxRow)
	if e.ChatGUID != "" {
		target = `m.ROWID IN (SELECT cmj.message_id FROM chat_message_join cmj JOIN chat c ON c.ROWID = cmj.chat_id WHERE c.guid = ?)`
		args = append(args, e.ChatGUID)
	} else {
		target = `(m.handle_id IN (SELECT ROWID FROM handle WHERE id = ? COLLATE NOCASE)
			OR m.ROWID IN (SELECT cmj.message_id FROM chat_message_join cmj JOIN chat c ON c.ROWID = cmj.chat_id
				WHERE c.chat_identifier = ? COLLATE NOCASE))`
		args = append(args, e.Address, e.Address)
	}
	q := fmt.Sprintf(`SELECT m.ROWID, COALESCE(m.is_sent, 0), COALESCE(m.error, 0), m.text, %s, COALESCE(%s, 0)
		FROM message m WHERE m.ROWID > ? AND m.is_from_me = 1 AND %s ORDER BY m.ROWID LIMIT 50`, body, att, target)
	rows, err := m.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []found
	for rows.Next() {
		var f found
		var isSent, attach int64
		var text sql.NullString
		var blob []byte
		if err := rows.Scan(&f.RowID, &isSent, &f.Error, &text, &blob, &attach); err != nil {
			return nil, err
		}
		f.IsSent = isSent != 0
		f.text = text.String
		if !text.Valid || text.String == "" {
			if len(blob) > 0 {
				if t, _, err := typedstream.AttributedBody(blob); err == nil {
					f.text = t
				}
			}
		}
		trimmed := strings.TrimSpace(strings.ReplaceAll(f.text, "\uFFFC", ""))
		f.attachment = attach != 0 && trimmed == ""
		out = append(out, f)
	}
	return out, rows.Err()
}
