package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/fold"
	"github.com/tidings-mcp/tidings/internal/index/vecscan"
	"github.com/tidings-mcp/tidings/internal/model"
)

// Mail in the index (docs/index.md, "Mail"). Synced mail lives in its own
// tables: it has no conversation, sender handle or attribute runs, and its
// identity is the IMAP one (account, mailbox path, UIDVALIDITY, UID), so it
// does not share messages' dense ids, docmeta chunks or vocabulary. What it
// shares is everything that decides what may be found and how it ranks:
// the read policy (a mail is a thread whose members are its correspondents),
// the secret blanking of secrets.go, the embedder, and reciprocal rank fusion
// (fusion.go).
//
// Secrets: a mail's body is stored only in its indexed form (every span the
// redactor finds blanked, secrets.go), so a code in a mail is neither
// searchable nor stored; mail_get_email reads the body from the account.
// The subject is stored for display (the output boundary redacts it) and
// indexed blanked.
//
// Crash safety: a batch of new messages and the mailbox's last_uid are
// written in one transaction, so a sync cut short resumes after the last
// committed batch and never stores a message twice (UNIQUE(mailbox,
// uidvalidity, uid) backs that up). Flag changes and expunges are
// idempotent; highestmodseq is recorded only after the flags it covers.
//
// The statements are IF NOT EXISTS so the migration also applies to an
// index whose user_version was set back (migrate_test.go does).
const mailSchema = `
CREATE TABLE IF NOT EXISTS mail_mailboxes(
	id            INTEGER PRIMARY KEY,
	account       TEXT NOT NULL,
	path          TEXT NOT NULL,
	uidvalidity   INTEGER NOT NULL,
	highestmodseq INTEGER NOT NULL DEFAULT 0,
	last_uid      INTEGER NOT NULL DEFAULT 0,
	synced_at     INTEGER,
	UNIQUE(account, path)
);

CREATE TABLE IF NOT EXISTS mail_messages(
	id          INTEGER PRIMARY KEY,
	mailbox     INTEGER NOT NULL,
	uidvalidity INTEGER NOT NULL,
	uid         INTEGER NOT NULL,
	message_id  TEXT NOT NULL DEFAULT '',
	in_reply_to TEXT NOT NULL DEFAULT '',
	date        INTEGER NOT NULL,
	subject     TEXT NOT NULL,
	from_name   TEXT NOT NULL DEFAULT '',
	from_addr   TEXT NOT NULL DEFAULT '',
	from_key    TEXT NOT NULL DEFAULT '',
	headers     TEXT NOT NULL,
	people      TEXT NOT NULL,
	flags       TEXT NOT NULL DEFAULT '',
	unread      INTEGER NOT NULL,
	isubject    TEXT NOT NULL,
	ipeople     TEXT NOT NULL,
	ibody       TEXT NOT NULL,
	attachments TEXT NOT NULL DEFAULT '',
	size        INTEGER NOT NULL DEFAULT 0,
	UNIQUE(mailbox, uidvalidity, uid)
);
CREATE INDEX IF NOT EXISTS mail_messages_date ON mail_messages(date);

CREATE VIRTUAL TABLE IF NOT EXISTS mail_fts USING fts5(
	subject,
	people,
	body,
	content='',
	contentless_delete=1,
	tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TABLE IF NOT EXISTS mail_vectors(
	id       INTEGER PRIMARY KEY,
	embedder TEXT NOT NULL,
	q        BLOB NOT NULL
);
`

// MailMaxBody bounds the body text of one mail that is indexed (the rest
// is not searchable; a 5 MB newsletter does not crowd the index).
const MailMaxBody = 256 << 10

// mailEmbedChars bounds the text of one mail handed to the embedder.
const mailEmbedChars = 4000

// MailAddress is one RFC 5322 mailbox.
type MailAddress struct {
	Name string `json:"name,omitempty"`
	Addr string `json:"addr"`
}

// MailMessage is one message as a sync hands it to the index.
type MailMessage struct {
	UID       uint32
	MessageID string
	InReplyTo string
	Date      time.Time
	Subject   string
	From      []MailAddress
	Sender    []MailAddress
	ReplyTo   []MailAddress
	To        []MailAddress
	Cc        []MailAddress
	Flags     []string
	// Text is the body as text (HTML already converted); only its
	// blanked form is stored.
	Text        string
	Attachments []string
	Size        int64
}

// MailMailbox is a synced mailbox's state.
type MailMailbox struct {
	ID            int64
	Account, Path string
	UIDValidity   uint32
	HighestModSeq uint64
	// LastUID is the highest UID a committed batch covered: every UID at
	// or below it was stored, or skipped because the read policy blocks it.
	LastUID  uint32
	Messages int
}

// MailFlags is a message's complete flag set after a change.
type MailFlags struct {
	UID   uint32
	Flags []string
}

// MailPutStats says what MailPut did.
type MailPutStats struct {
	Stored  int // new rows
	Blocked int // left out by the read policy
}

// mailHeaders is the JSON of mail_messages.headers.
type mailHeaders struct {
	From    []MailAddress `json:"from,omitempty"`
	Sender  []MailAddress `json:"sender,omitempty"`
	ReplyTo []MailAddress `json:"reply_to,omitempty"`
	To      []MailAddress `json:"to,omitempty"`
	Cc      []MailAddress `json:"cc,omitempty"`
}

// errReadOnlyMail is returned by mail writes on a read-only index.
var errReadOnlyMail = errors.New("the index is open read-only: mail cannot be synced")

// MailCorrespondents returns the addresses of m other than own (the
// user's addresses, compared case-insensitively): From, Sender, Reply-To,
// To and Cc, lower-cased, de-duplicated, in that order. These are the
// members of the "thread" the read policy judges.
func MailCorrespondents(m *MailMessage, own []string) []string {
	mine := map[string]bool{}
	for _, a := range own {
		mine[strings.ToLower(strings.TrimSpace(a))] = true
	}
	var out []string
	for _, l := range [][]MailAddress{m.From, m.Sender, m.ReplyTo, m.To, m.Cc} {
		for _, a := range l {
			k := strings.ToLower(strings.TrimSpace(a.Addr))
			if k == "" || mine[k] || slices.Contains(out, k) {
				continue
			}
			out = append(out, k)
		}
	}
	return out
}

// mailThread is the conversation the read policy judges for a mail with
// these correspondents: a direct thread with one of them, a group with
// several (so any blocked member hides it, and in allowlist mode every
// member must be allowed, as for a group chat; docs/security.md).
func mailThread(people []string) model.Conversation {
	c := model.Conversation{Source: "mail", Kind: model.KindDirect, Participants: people}
	switch len(people) {
	case 0:
		c.Identifier, c.ID = "mail:self", "mail:self"
	case 1:
		c.Identifier, c.ID = people[0], "mail:"+people[0]
	default:
		c.Kind = model.KindGroup
		c.Identifier, c.ID = "mail:group", "mail:"+strings.Join(people, ",")
	}
	return c
}

// MailAllows reports whether the read policy lets a mail with m's
// correspondents (other than own) be indexed. A sync asks before it
// fetches a body, so a blocked person's mail is never even downloaded;
// MailPut asks again under the pinned policy.
func (ix *Index) MailAllows(m *MailMessage, own []string) bool {
	return ix.allow(mailThread(MailCorrespondents(m, own)))
}

// MailMailboxes returns every synced mailbox, by account and path.
func (ix *Index) MailMailboxes(ctx context.Context) ([]MailMailbox, error) {
	rows, err := ix.rquery(ctx, `SELECT b.id, b.account, b.path, b.uidvalidity, b.highestmodseq, b.last_uid,
		(SELECT count(*) FROM mail_messages m WHERE m.mailbox = b.id AND m.uidvalidity = b.uidvalidity)
		FROM mail_mailboxes b ORDER BY b.account, b.path`)
	if err != nil {
		return nil, fmt.Errorf("list mail mailboxes: %w", err)
	}
	defer rows.Close()
	var out []MailMailbox
	for rows.Next() {
		var b MailMailbox
		if err := rows.Scan(&b.ID, &b.Account, &b.Path, &b.UIDValidity, &b.HighestModSeq, &b.LastUID, &b.Messages); err != nil {
			return nil, fmt.Errorf("list mail mailboxes: %w", err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list mail mailboxes: %w", err)
	}
	return out, nil
}

// MailMailbox returns the state of one synced mailbox; ok is false when
// it was never synced.
func (ix *Index) MailMailbox(ctx context.Context, account, path string) (b MailMailbox, ok bool, err error) {
	all, err := ix.MailMailboxes(ctx)
	if err != nil {
		return b, false, err
	}
	for _, x := range all {
		if x.Account == account && x.Path == path {
			return x, true, nil
		}
	}
	return b, false, nil
}

// mailWrite runs fn in one write transaction.
func (ix *Index) mailWrite(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	if ix.wdb == nil {
		return errReadOnlyMail
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer tx.Rollback() // a no-op once committed
	if err := fn(tx); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// mailDeleteRows removes mail rows (FTS entries and vectors with them).
func mailDeleteRows(ctx context.Context, tx *sql.Tx, where string, args ...any) (int, error) {
	rows, err := tx.QueryContext(ctx, "SELECT id FROM mail_messages WHERE "+where, args...)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, id := range ids {
		for _, q := range []string{"DELETE FROM mail_fts WHERE rowid = ?", "DELETE FROM mail_vectors WHERE id = ?", "DELETE FROM mail_messages WHERE id = ?"} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return 0, err
			}
		}
	}
	return len(ids), nil
}

// MailResetMailbox records account/path with uidValidity and no messages:
// a mailbox seen for the first time, or one whose UIDVALIDITY changed
// (every UID remembered for it is void, so its rows are dropped and it is
// read again).
func (ix *Index) MailResetMailbox(ctx context.Context, account, path string, uidValidity uint32) (MailMailbox, error) {
	var b MailMailbox
	err := ix.mailWrite(ctx, "reset mailbox", func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT id FROM mail_mailboxes WHERE account = ? AND path = ?", account, path).Scan(&id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			res, err := tx.ExecContext(ctx, "INSERT INTO mail_mailboxes(account, path, uidvalidity) VALUES(?, ?, ?)", account, path, uidValidity)
			if err != nil {
				return err
			}
			if id, err = res.LastInsertId(); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			if _, err := mailDeleteRows(ctx, tx, "mailbox = ?", id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "UPDATE mail_mailboxes SET uidvalidity = ?, highestmodseq = 0, last_uid = 0 WHERE id = ?", uidValidity, id); err != nil {
				return err
			}
		}
		b = MailMailbox{ID: id, Account: account, Path: path, UIDValidity: uidValidity}
		return nil
	})
	return b, err
}

// MailDropMailbox forgets a mailbox that no longer exists, with its rows.
func (ix *Index) MailDropMailbox(ctx context.Context, id int64) error {
	return ix.mailWrite(ctx, "drop mailbox", func(tx *sql.Tx) error {
		if _, err := mailDeleteRows(ctx, tx, "mailbox = ?", id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM mail_mailboxes WHERE id = ?", id)
		return err
	})
}

// MailUIDs returns the UIDs stored for a mailbox, ascending.
func (ix *Index) MailUIDs(ctx context.Context, b MailMailbox) ([]uint32, error) {
	rows, err := ix.rquery(ctx, "SELECT uid FROM mail_messages WHERE mailbox = ? AND uidvalidity = ? ORDER BY uid", b.ID, b.UIDValidity)
	if err != nil {
		return nil, fmt.Errorf("read mail UIDs: %w", err)
	}
	defer rows.Close()
	var out []uint32
	for rows.Next() {
		var u uint32
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("read mail UIDs: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// mailPrepared is a message's stored and indexed form.
type mailPrepared struct {
	m                          *MailMessage
	people                     []string
	headers, flags             string
	isubject, ipeople, ibody   string
	fromName, fromAddr, fromKy string
	vec                        []byte
}

func prepareMail(m *MailMessage, people []string) (mailPrepared, error) {
	p := mailPrepared{m: m, people: people}
	h, err := json.Marshal(mailHeaders{From: m.From, Sender: m.Sender, ReplyTo: m.ReplyTo, To: m.To, Cc: m.Cc})
	if err != nil {
		return p, err
	}
	p.headers = string(h)
	p.flags = strings.Join(m.Flags, " ")
	body := fold.Sanitize(m.Text)
	if len(body) > MailMaxBody {
		body = body[:MailMaxBody]
		for len(body) > 0 && !isRuneStart(body[len(body)-1]) {
			body = body[:len(body)-1]
		}
	}
	// Secrets are blanked before anything is stored or indexed
	// (secrets.go): codes in mail are as secret as in texts.
	p.isubject = blankSecrets(fold.Sanitize(m.Subject))
	p.ibody = blankSecrets(body)
	if len(m.Attachments) > 0 {
		p.ibody = joinSentences(p.ibody, blankSecrets(fold.Sanitize(strings.Join(m.Attachments, "\n"))))
	}
	var names []string
	for _, l := range [][]MailAddress{m.From, m.To, m.Cc} {
		for _, a := range l {
			names = append(names, a.Name, a.Addr)
		}
	}
	p.ipeople = blankSecrets(fold.Sanitize(strings.Join(names, " ")))
	if len(m.From) > 0 {
		p.fromName, p.fromAddr = m.From[0].Name, strings.ToLower(m.From[0].Addr)
	}
	for _, a := range m.From {
		p.fromKy += strings.ToLower(a.Name+" "+a.Addr) + "\n"
	}
	return p, nil
}

// mailEmbedText is what the embedder sees of a mail: its blanked subject
// and body.
func mailEmbedText(isubject, ibody string) string {
	s := joinSentences(isubject, ibody)
	if len(s) > mailEmbedChars {
		s = s[:mailEmbedChars]
		for len(s) > 0 && !isRuneStart(s[len(s)-1]) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// MailPut stores a batch of new messages of mailbox b (sorted or not) and
// raises its last_uid to lastUID, in one transaction. Messages the read
// policy blocks (their correspondents other than own, see MailAllows) are
// not stored; a message already stored is left as it is. Vectors are
// computed with the configured embedder before the transaction.
func (ix *Index) MailPut(ctx context.Context, b MailMailbox, msgs []MailMessage, lastUID uint32, own []string) (MailPutStats, error) {
	var st MailPutStats
	if ix.wdb == nil {
		return st, errReadOnlyMail
	}
	_, release, err := ix.pinPolicy()
	if err != nil {
		return st, err
	}
	defer release()
	var prep []mailPrepared
	for i := range msgs {
		m := &msgs[i]
		people := MailCorrespondents(m, own)
		if !ix.allow(mailThread(people)) {
			st.Blocked++
			continue
		}
		p, err := prepareMail(m, people)
		if err != nil {
			return st, fmt.Errorf("store mail: %w", err)
		}
		prep = append(prep, p)
	}
	embID := ""
	if emb := ix.opts.Embedder; emb != nil && len(prep) > 0 {
		embID = emb.ID()
		texts := make([]string, len(prep))
		for i := range prep {
			texts[i] = mailEmbedText(prep[i].isubject, prep[i].ibody)
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return st, fmt.Errorf("embed mail: %w", err)
		}
		if len(vecs) != len(prep) {
			return st, fmt.Errorf("embed mail: %d vectors for %d texts", len(vecs), len(prep))
		}
		for i := range prep {
			prep[i].vec = []byte{} // no word the embedder knows: nothing to find it by
			if !isZeroVec(vecs[i]) {
				prep[i].vec = vecscan.Quantize(vecs[i])
			}
		}
	}
	err = ix.mailWrite(ctx, "store mail", func(tx *sql.Tx) error {
		var uv uint32
		if err := tx.QueryRowContext(ctx, "SELECT uidvalidity FROM mail_mailboxes WHERE id = ?", b.ID).Scan(&uv); err != nil {
			return err
		}
		if uv != b.UIDValidity {
			return fmt.Errorf("mailbox %s/%s was reset meanwhile (UIDVALIDITY %d, not %d)", b.Account, b.Path, uv, b.UIDValidity)
		}
		for _, p := range prep {
			m := p.m
			people, err := json.Marshal(p.people)
			if err != nil {
				return err
			}
			var id int64
			err = tx.QueryRowContext(ctx, `INSERT INTO mail_messages(mailbox, uidvalidity, uid, message_id, in_reply_to, date, subject,
				from_name, from_addr, from_key, headers, people, flags, unread, isubject, ipeople, ibody, attachments, size)
				VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT(mailbox, uidvalidity, uid) DO NOTHING RETURNING id`,
				b.ID, b.UIDValidity, m.UID, m.MessageID, m.InReplyTo, m.Date.UnixMilli(), fold.Sanitize(m.Subject),
				p.fromName, p.fromAddr, p.fromKy, p.headers, string(people), p.flags, !slices.Contains(m.Flags, `\Seen`),
				p.isubject, p.ipeople, p.ibody, strings.Join(m.Attachments, "\n"), m.Size).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				continue // stored by an earlier run
			}
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO mail_fts(rowid, subject, people, body) VALUES(?, ?, ?, ?)", id, p.isubject, p.ipeople, p.ibody); err != nil {
				return err
			}
			if p.vec != nil {
				if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO mail_vectors(id, embedder, q) VALUES(?, ?, ?)", id, embID, p.vec); err != nil {
					return err
				}
			}
			st.Stored++
		}
		_, err := tx.ExecContext(ctx, "UPDATE mail_mailboxes SET last_uid = max(last_uid, ?), synced_at = ? WHERE id = ?", lastUID, ix.now().UnixMilli(), b.ID)
		return err
	})
	if err != nil {
		return MailPutStats{}, err
	}
	return st, nil
}

// MailSetFlags records the complete flag sets of messages of b (UIDs not
// stored are ignored).
func (ix *Index) MailSetFlags(ctx context.Context, b MailMailbox, updates []MailFlags) (changed int, err error) {
	err = ix.mailWrite(ctx, "store mail flags", func(tx *sql.Tx) error {
		for _, u := range updates {
			fl := strings.Join(u.Flags, " ")
			res, err := tx.ExecContext(ctx, "UPDATE mail_messages SET flags = ?, unread = ? WHERE mailbox = ? AND uidvalidity = ? AND uid = ? AND flags != ?",
				fl, !slices.Contains(u.Flags, `\Seen`), b.ID, b.UIDValidity, u.UID, fl)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			changed += int(n)
		}
		return nil
	})
	return changed, err
}

// MailSetModSeq records the HIGHESTMODSEQ up to which b's flags are known.
func (ix *Index) MailSetModSeq(ctx context.Context, b MailMailbox, modSeq uint64) error {
	return ix.mailWrite(ctx, "store mailbox modseq", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE mail_mailboxes SET highestmodseq = ? WHERE id = ? AND uidvalidity = ?", modSeq, b.ID, b.UIDValidity)
		return err
	})
}

// MailDelete removes messages of b that left the mailbox (expunged or
// moved away).
func (ix *Index) MailDelete(ctx context.Context, b MailMailbox, uids []uint32) (int, error) {
	n := 0
	err := ix.mailWrite(ctx, "delete mail", func(tx *sql.Tx) error {
		for start := 0; start < len(uids); start += 500 {
			part := uids[start:min(len(uids), start+500)]
			js, err := json.Marshal(part)
			if err != nil {
				return err
			}
			k, err := mailDeleteRows(ctx, tx, "mailbox = ? AND uidvalidity = ? AND uid IN (SELECT value FROM json_each(?))", b.ID, b.UIDValidity, string(js))
			if err != nil {
				return err
			}
			n += k
		}
		return nil
	})
	return n, err
}

// MailApplyPolicy removes every stored mail the read policy now blocks
// (a person blocked after their mail was synced) and reports how many;
// ApplyPolicy does the same as part of applying a policy change.
// Searches hide such mail anyway; this takes it out of the file.
func (ix *Index) MailApplyPolicy(ctx context.Context) (int, error) {
	if ix.wdb == nil {
		return 0, errReadOnlyMail
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	_, release, err := ix.pinPolicy()
	if err != nil {
		return 0, err
	}
	defer release()
	n, err := ix.mailPurgeBlockedLocked(ctx)
	if err != nil {
		return n, err
	}
	return n, ix.finishPurgeLocked(ctx)
}

// mailPurgeBlockedLocked deletes the stored mail the (pinned) policy
// blocks and marks the index for a scrub (purgePendingKey), in one
// transaction. Callers hold writeMu.
func (ix *Index) mailPurgeBlockedLocked(ctx context.Context) (int, error) {
	rows, err := ix.wdb.QueryContext(ctx, "SELECT id, people FROM mail_messages")
	if err != nil {
		return 0, fmt.Errorf("apply policy to mail: %w", err)
	}
	var drop []int64
	for rows.Next() {
		var id int64
		var people string
		if err := rows.Scan(&id, &people); err != nil {
			rows.Close()
			return 0, fmt.Errorf("apply policy to mail: %w", err)
		}
		if !ix.mailPeopleAllowed(people) {
			drop = append(drop, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("apply policy to mail: %w", err)
	}
	if len(drop) == 0 {
		return 0, nil
	}
	tx, err := ix.wdb.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("apply policy to mail: %w", err)
	}
	defer tx.Rollback() // a no-op once committed
	js, err := json.Marshal(drop)
	if err != nil {
		return 0, err
	}
	if _, err := mailDeleteRows(ctx, tx, "id IN (SELECT value FROM json_each(?))", string(js)); err != nil {
		return 0, fmt.Errorf("apply policy to mail: %w", err)
	}
	if err := setMeta(ctx, tx, purgePendingKey, 1); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("apply policy to mail: %w", err)
	}
	return len(drop), nil
}

// mailPeopleAllowed decides a stored row's people column (fail closed on
// an unreadable one).
func (ix *Index) mailPeopleAllowed(people string) bool {
	var l []string
	if err := json.Unmarshal([]byte(people), &l); err != nil {
		return false
	}
	return ix.allow(mailThread(l))
}

// MailEmbedPending embeds the stored mail that has no vector from the
// current embedder (after the embedder changed, or was fitted) and
// reports how many it embedded.
func (ix *Index) MailEmbedPending(ctx context.Context) (int, error) {
	emb := ix.opts.Embedder
	if emb == nil || ix.wdb == nil {
		return 0, nil
	}
	done := 0
	for {
		id := emb.ID()
		rows, err := ix.rquery(ctx, `SELECT m.id, m.isubject, m.ibody FROM mail_messages m
			WHERE NOT EXISTS (SELECT 1 FROM mail_vectors v WHERE v.id = m.id AND v.embedder = ?) ORDER BY m.id LIMIT 256`, id)
		if err != nil {
			return done, fmt.Errorf("embed mail: %w", err)
		}
		var ids []int64
		var texts []string
		for rows.Next() {
			var i int64
			var s, b string
			if err := rows.Scan(&i, &s, &b); err != nil {
				rows.Close()
				return done, fmt.Errorf("embed mail: %w", err)
			}
			ids, texts = append(ids, i), append(texts, mailEmbedText(s, b))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return done, fmt.Errorf("embed mail: %w", err)
		}
		if len(ids) == 0 {
			return done, nil
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return done, fmt.Errorf("embed mail: %w", err)
		}
		if len(vecs) != len(ids) {
			return done, fmt.Errorf("embed mail: %d vectors for %d texts", len(vecs), len(ids))
		}
		err = ix.mailWrite(ctx, "embed mail", func(tx *sql.Tx) error {
			for i, v := range vecs {
				q := vecscan.Quantize(v)
				if isZeroVec(v) {
					q = []byte{} // nothing to find it by; marked done
				}
				if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO mail_vectors(id, embedder, q) VALUES(?, ?, ?)", ids[i], id, q); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return done, err
		}
		done += len(ids)
	}
}

// MailStored returns the UID and flags of every message stored for b,
// by UID (what a consumer compares with the server).
func (ix *Index) MailStored(ctx context.Context, b MailMailbox) ([]MailFlags, error) {
	rows, err := ix.rquery(ctx, "SELECT uid, flags FROM mail_messages WHERE mailbox = ? AND uidvalidity = ? ORDER BY uid", b.ID, b.UIDValidity)
	if err != nil {
		return nil, fmt.Errorf("read stored mail: %w", err)
	}
	defer rows.Close()
	var out []MailFlags
	for rows.Next() {
		var f MailFlags
		var fl string
		if err := rows.Scan(&f.UID, &fl); err != nil {
			return nil, fmt.Errorf("read stored mail: %w", err)
		}
		f.Flags = strings.Fields(fl)
		out = append(out, f)
	}
	return out, rows.Err()
}

// MailEvidence is a stored mail between the user and one person, as a
// dossier cites it.
type MailEvidence struct {
	// ID is "mail:Account/Path#UID": the mailbox (split at the last '#')
	// and the UID mail_get_email reads.
	ID               string
	Account, Mailbox string
	UID              uint32
	Date             time.Time
	// FromMe is true when the user sent it (its From is none of the
	// correspondents).
	FromMe bool
	From   string // the sender's address when not FromMe
	// Subject is the display subject; Body the indexed body (secrets
	// already blanked).
	Subject, Body string
}

// MailWith returns the stored mail whose correspondents are exactly some
// of addrs (a 1:1 exchange with that person, the mail analogue of a
// direct conversation), dated after since, oldest first; at most limit
// (0 = no bound). Mail the read policy now blocks is left out.
func (ix *Index) MailWith(ctx context.Context, addrs []string, since time.Time, limit int) ([]MailEvidence, error) {
	want := map[string]bool{}
	var keys []string
	for _, a := range addrs {
		if k := strings.ToLower(strings.TrimSpace(a)); strings.Contains(k, "@") && !want[k] {
			want[k] = true
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	js, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	rows, err := ix.rquery(ctx, `SELECT b.account, b.path, m.uid, m.date, m.from_addr, m.subject, m.ibody, m.people
		FROM mail_messages m JOIN mail_mailboxes b ON b.id = m.mailbox
		WHERE m.date > ? AND EXISTS (SELECT 1 FROM json_each(m.people) p WHERE p.value IN (SELECT value FROM json_each(?)))
		ORDER BY m.date, m.id`, since.UnixMilli(), string(js))
	if err != nil {
		return nil, fmt.Errorf("read mail with a person: %w", err)
	}
	defer rows.Close()
	var out []MailEvidence
	for rows.Next() {
		var e MailEvidence
		var date int64
		var from, people string
		if err := rows.Scan(&e.Account, &e.Mailbox, &e.UID, &date, &from, &e.Subject, &e.Body, &people); err != nil {
			return nil, fmt.Errorf("read mail with a person: %w", err)
		}
		var ps []string
		if json.Unmarshal([]byte(people), &ps) != nil || len(ps) == 0 {
			continue
		}
		direct := true
		for _, p := range ps {
			direct = direct && want[p]
		}
		if !direct || !ix.mailPeopleAllowed(people) {
			continue
		}
		e.Date = time.UnixMilli(date).UTC()
		e.FromMe = !slices.Contains(ps, from)
		if !e.FromMe {
			e.From = from
		}
		e.ID = fmt.Sprintf("mail:%s/%s#%d", e.Account, e.Mailbox, e.UID)
		out = append(out, e)
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, rows.Err()
}
