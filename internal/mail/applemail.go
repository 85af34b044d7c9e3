package mail

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the project's SQLite driver ("sqlite")

	"github.com/tidings-mcp/tidings/internal/send"
)

// AppleMail is a [[mail.accounts]] entry with applemail: one account of
// Mail.app's local store on a Mac, read without credentials and never
// written directly: on macOS, read status, the flag and moves go through
// Mail.app (applemail_write.go); elsewhere the account is read-only
// (docs/tools.md, "Mail.app's local store"). The store is a
// version folder (~/Library/Mail/V10) holding MailData/Envelope Index, a
// SQLite index of every account's mailboxes and messages, and one folder
// per account whose <mailbox>.mbox folders hold each message as
// <ROWID>.emlx (or <ROWID>.partial.emlx when Mail left the attachments
// beside it). The account is the host part of its mailboxes' URLs
// ("imap://<account>/INBOX"), which is also its folder's name.
//
// The index is opened on every call with mode=ro, not immutable: Mail keeps
// recent rows in the WAL, as Messages does (internal/imessage/open.go).
// Its layout is probed before any query (appleMailSchema; the real dump the
// fixtures follow is in testdata/applemail/README.md). UIDs are the
// messages' ROWIDs, unique across the store; UIDVALIDITY is a hash of the
// mailbox's URL and ROWID, so an index Mail rebuilt (new ROWIDs) voids
// every UID a reader remembered instead of renaming messages.
type AppleMail struct {
	account string
	root    string // the V* folder
	id      string // the account's id in mailbox URLs and folder names

	// Runner runs osascript for writes; nil means send.ExecRunner (tests
	// fake it). Osascript is its path; "" means /usr/bin/osascript.
	Runner    send.Runner
	Osascript string
	writes    bool          // writes go through Mail.app (applemail_write.go)
	pause     time.Duration // between read-backs; 0 means appleReadBackPause

	mu    sync.Mutex
	files map[string]map[uint32]string // .mbox folder → ROWID → .emlx
}

// NewAppleMail opens one account of a Mail.app store; root must be
// an absolute path to the version folder (~/Library/Mail/V10) and id the
// account's folder name there.
func NewAppleMail(account, root, id string) (*AppleMail, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("mail account %q: applemail %q must be an absolute path", account, root)
	}
	if !validMailboxPart(id) {
		return nil, fmt.Errorf("mail account %q: applemail_account %q is not an account folder name", account, id)
	}
	return &AppleMail{account: account, root: filepath.Clean(root), id: id, writes: appleMailWrites}, nil
}

// Account implements Backend.
func (a *AppleMail) Account() string { return a.account }

// Kind implements Backend.
func (a *AppleMail) Kind() string { return "applemail" }

// Close implements Backend.
func (a *AppleMail) Close() error { return nil }

// Location is the store folder and account, for status.
func (a *AppleMail) Location() string { return a.root + " (account " + a.id + ")" }

// ErrIncompleteEnvelopeIndex means the Envelope Index lacks a table or
// column the reader needs (named in the error): another Mail version's
// layout, or a damaged copy. Reading it anyway could give wrong answers
// silently.
var ErrIncompleteEnvelopeIndex = errors.New("incomplete Mail.app Envelope Index")

// appleMailSchema is what the reader queries, table by table: the
// columns of macOS 10.15+ (Mail V7–V10) in the real dump of
// testdata/applemail/README.md.
var appleMailSchema = []struct {
	table string
	cols  []string
}{
	{"mailboxes", []string{"ROWID", "url"}},
	{"messages", []string{"ROWID", "sender", "subject_prefix", "subject", "date_sent", "date_received", "mailbox", "flags", "read", "flagged", "deleted", "size"}},
	{"subjects", []string{"ROWID", "subject"}},
	{"addresses", []string{"ROWID", "address", "comment"}},
	{"recipients", []string{"message", "address", "type", "position"}},
}

func (a *AppleMail) indexPath() string {
	return filepath.Join(a.root, "MailData", "Envelope Index")
}

// open opens the index read-only and probes its layout.
func (a *AppleMail) open(ctx context.Context) (*sql.DB, error) {
	p := a.indexPath()
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("mail account %q: Mail.app store %s: %w", a.account, a.root, err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(p)}
	db, err := sql.Open("sqlite", u.String()+"?mode=ro")
	if err != nil {
		return nil, fmt.Errorf("mail account %q: %w", a.account, err)
	}
	db.SetMaxOpenConns(1)
	if err := probeAppleMail(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("mail account %q (%s): %w", a.account, p, err)
	}
	return db, nil
}

// probeAppleMail names the first table or column appleMailSchema needs
// that the file lacks.
func probeAppleMail(ctx context.Context, db *sql.DB) error {
	cols := func(table string) (map[string]bool, error) {
		rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		have := map[string]bool{}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				return nil, err
			}
			have[strings.ToLower(n)] = true
		}
		return have, rows.Err()
	}
	for _, t := range appleMailSchema {
		have, err := cols(t.table)
		if err != nil {
			return err
		}
		if len(have) == 0 {
			return fmt.Errorf("%w: no table %s", ErrIncompleteEnvelopeIndex, t.table)
		}
		have["rowid"] = true
		for _, c := range t.cols {
			if !have[strings.ToLower(c)] {
				return fmt.Errorf("%w: no column %s.%s", ErrIncompleteEnvelopeIndex, t.table, c)
			}
		}
	}
	return nil
}

// appleBox is one row of mailboxes that belongs to the account.
type appleBox struct {
	rowid int64
	url   string
	path  string // "/"-separated, unescaped
}

// boxes lists the account's mailboxes. A URL is "<scheme>://<account>/<path>"
// with the path percent-encoded (imap://ID/%5BGmail%5D/All%20Mail).
func (a *AppleMail) boxes(ctx context.Context, db *sql.DB) ([]appleBox, error) {
	rows, err := db.QueryContext(ctx, "SELECT ROWID, url FROM mailboxes ORDER BY ROWID")
	if err != nil {
		return nil, fmt.Errorf("mail account %q: list mailboxes: %w", a.account, err)
	}
	defer rows.Close()
	var out, others []appleBox
	for rows.Next() {
		var b appleBox
		var u sql.NullString
		if err := rows.Scan(&b.rowid, &u); err != nil {
			return nil, fmt.Errorf("mail account %q: list mailboxes: %w", a.account, err)
		}
		b.url = u.String
		id, path, ok := splitMailboxURL(b.url)
		if !ok {
			continue
		}
		b.path = path
		if id == a.id {
			out = append(out, b)
		} else {
			others = append(others, appleBox{path: id})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mail account %q: list mailboxes: %w", a.account, err)
	}
	if len(out) == 0 {
		var ids []string
		for _, o := range others {
			if !slices.Contains(ids, o.path) {
				ids = append(ids, o.path)
			}
		}
		return nil, fmt.Errorf("mail account %q: the Mail.app store has no mailboxes of account %q (accounts there: %s)", a.account, a.id, strings.Join(ids, ", "))
	}
	slices.SortFunc(out, func(x, y appleBox) int {
		if x.path == "INBOX" || y.path == "INBOX" {
			return boolInt(y.path == "INBOX") - boolInt(x.path == "INBOX")
		}
		return strings.Compare(x.path, y.path)
	})
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// splitMailboxURL splits a mailbox URL into its account id and unescaped
// path; a path with an empty, "." or ".." component is refused (it could
// not name a folder inside the account's).
func splitMailboxURL(raw string) (id, path string, ok bool) {
	i := strings.Index(raw, "://")
	if i <= 0 {
		return "", "", false
	}
	rest := raw[i+3:]
	j := strings.IndexByte(rest, '/')
	if j <= 0 || j == len(rest)-1 {
		return "", "", false
	}
	id, p := rest[:j], rest[j+1:]
	if u, err := url.PathUnescape(id); err == nil {
		id = u
	}
	p, err := url.PathUnescape(p)
	if err != nil {
		return "", "", false
	}
	for _, part := range strings.Split(p, "/") {
		if !validMailboxPart(part) {
			return "", "", false
		}
	}
	return id, p, true
}

// validMailboxPart reports whether s can be one folder name.
func validMailboxPart(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

// box finds path among the account's mailboxes (INBOX in any case).
func (a *AppleMail) box(ctx context.Context, db *sql.DB, path string) (appleBox, error) {
	bs, err := a.boxes(ctx, db)
	if err != nil {
		return appleBox{}, err
	}
	for _, b := range bs {
		if b.path == path || (strings.EqualFold(path, "INBOX") && strings.EqualFold(b.path, "INBOX")) {
			return b, nil
		}
	}
	return appleBox{}, fmt.Errorf("no mailbox %q in mail account %q", path, a.account)
}

// uidValidity is the mailbox's UIDVALIDITY (never 0).
func (b appleBox) uidValidity() uint32 {
	h := fnv.New32a()
	h.Write([]byte(b.url + "\x00" + strconv.FormatInt(b.rowid, 10)))
	if v := h.Sum32(); v != 0 {
		return v
	}
	return 1
}

// appleSpecialUse infers a mailbox's role from its name: the index keeps
// no role column (testdata/applemail/README.md).
func appleSpecialUse(path string) []string {
	leaf := path[strings.LastIndexByte(path, '/')+1:]
	switch strings.ToLower(leaf) {
	case "sent messages", "sent", "sent items", "sent mail":
		return []string{Sent}
	case "drafts":
		return []string{Drafts}
	case "deleted messages", "trash", "deleted items", "bin":
		return []string{Trash}
	case "junk", "spam", "junk e-mail":
		return []string{Junk}
	case "archive":
		return []string{Archive}
	case "all mail":
		return []string{All}
	}
	return nil
}

// members is the SQL selecting the ROWIDs of mailbox ?1's live messages.
// Deleted rows (deleted = 1, waiting to be expunged) are not listed. Gmail
// label rows (a message stored once in All Mail) are not read: no cited
// dump of that table was found (testdata/applemail/README.md).
const members = "SELECT ROWID AS id FROM messages WHERE mailbox = ?1 AND deleted = 0"

// Mailboxes implements Backend.
func (a *AppleMail) Mailboxes(ctx context.Context) ([]Mailbox, error) {
	db, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	bs, err := a.boxes(ctx, db)
	if err != nil {
		return nil, err
	}
	out := make([]Mailbox, 0, len(bs))
	for _, b := range bs {
		mb, err := a.status(ctx, db, b)
		if err != nil {
			return nil, err
		}
		out = append(out, mb)
	}
	return out, nil
}

// Status implements Backend.
func (a *AppleMail) Status(ctx context.Context, path string) (Mailbox, error) {
	db, err := a.open(ctx)
	if err != nil {
		return Mailbox{}, err
	}
	defer db.Close()
	b, err := a.box(ctx, db, path)
	if err != nil {
		return Mailbox{}, err
	}
	return a.status(ctx, db, b)
}

func (a *AppleMail) status(ctx context.Context, db *sql.DB, b appleBox) (Mailbox, error) {
	mb := Mailbox{Account: a.account, Path: b.path, SpecialUse: appleSpecialUse(b.path), UIDValidity: b.uidValidity()}
	var n, unseen int
	var maxID sql.NullInt64
	q := "SELECT count(*), coalesce(sum(read = 0), 0), max(ROWID) FROM messages WHERE ROWID IN (" + members + ") AND ROWID <= ?2"
	if err := db.QueryRowContext(ctx, q, b.rowid, int64(math.MaxUint32)).Scan(&n, &unseen, &maxID); err != nil {
		return Mailbox{}, fmt.Errorf("mail account %q: mailbox %q: %w", a.account, b.path, err)
	}
	mb.Messages, mb.Unseen = n, unseen
	mb.UIDNext = 1
	if maxID.Valid {
		mb.UIDNext = uint32(maxID.Int64) + 1
	}
	return mb, nil
}

// checked opens the index and finds path, failing with ErrUIDValidity
// when uidValidity is set and differs.
func (a *AppleMail) checked(ctx context.Context, path string, uidValidity uint32) (*sql.DB, appleBox, error) {
	db, err := a.open(ctx)
	if err != nil {
		return nil, appleBox{}, err
	}
	b, err := a.box(ctx, db, path)
	if err != nil {
		db.Close()
		return nil, appleBox{}, err
	}
	if uidValidity != 0 && uidValidity != b.uidValidity() {
		db.Close()
		return nil, appleBox{}, ErrUIDValidity
	}
	return db, b, nil
}

// UIDs implements Backend. ROWIDs beyond a 32-bit UID are left out (a
// store would need four billion messages to reach one).
func (a *AppleMail) UIDs(ctx context.Context, path string, uidValidity uint32) ([]uint32, error) {
	db, b, err := a.checked(ctx, path, uidValidity)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT id FROM ("+members+") WHERE id BETWEEN 1 AND ?2 ORDER BY id", b.rowid, int64(math.MaxUint32))
	if err != nil {
		return nil, fmt.Errorf("mail account %q: mailbox %q: %w", a.account, path, err)
	}
	defer rows.Close()
	var out []uint32
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, uint32(id))
	}
	return out, rows.Err()
}

// Flag bits of messages.flags used here, as documented for the .emlx
// "flags" value, which the index column shares (testdata/applemail/README.md):
// bit 2 answered, bit 6 draft. Read, flagged and deleted have columns.
const (
	appleAnswered = 1 << 2
	appleDraft    = 1 << 6
)

func appleFlags(flags int64, read, flagged bool) []string {
	var out []string
	if read {
		out = append(out, Seen)
	}
	if flags&appleAnswered != 0 {
		out = append(out, Answered)
	}
	if flagged {
		out = append(out, Flagged)
	}
	if flags&appleDraft != 0 {
		out = append(out, Draft)
	}
	return out
}

// appleTime reads a date column: Unix seconds (the dump's sample rows), 0
// and NULL being unknown.
func appleTime(v sql.NullInt64) time.Time {
	if !v.Valid || v.Int64 <= 0 {
		return time.Time{}
	}
	return time.Unix(v.Int64, 0).UTC()
}

// Summaries implements Backend: the index row, with the .emlx header block
// when the message is on disk (it alone holds Sender, Reply-To,
// Message-ID and In-Reply-To). Addresses are the union of both, so a
// correspondent named in either counts for the read policy.
func (a *AppleMail) Summaries(ctx context.Context, path string, uidValidity uint32, uids []uint32) ([]Summary, error) {
	db, b, err := a.checked(ctx, path, uidValidity)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	out := make([]Summary, 0, len(uids))
	for _, u := range uids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, mbox, ok, err := a.row(ctx, db, b, u)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if file, err := a.file(mbox, u); err == nil {
			if head, err := readEMLXHead(file); err == nil {
				h := SummaryFromHeader(head)
				s.Sender, s.ReplyTo, s.MessageID, s.InReplyTo = h.Sender, h.ReplyTo, h.MessageID, h.InReplyTo
				if s.Subject == "" {
					s.Subject = h.Subject
				}
				if s.Date.IsZero() {
					s.Date = h.Date
				}
				s.From, s.To, s.Cc, s.Bcc = unionAddrs(s.From, h.From), unionAddrs(s.To, h.To), unionAddrs(s.Cc, h.Cc), unionAddrs(s.Bcc, h.Bcc)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// row reads one message of mailbox b from the index; ok is false when uid
// is not one of b's live messages. mbox is the URL of the mailbox whose
// folder holds its file (All Mail for a Gmail label).
func (a *AppleMail) row(ctx context.Context, db *sql.DB, b appleBox, uid uint32) (s Summary, mbox string, ok bool, err error) {
	var prefix, subject, addr, name sql.NullString
	var sent, recv, size sql.NullInt64
	var flags int64
	var read, flagged bool
	q := `SELECT m.subject_prefix, s.subject, a.address, a.comment, m.date_sent, m.date_received, m.size, m.flags, m.read, m.flagged, mb.url
FROM messages m LEFT JOIN subjects s ON s.ROWID = m.subject LEFT JOIN addresses a ON a.ROWID = m.sender
JOIN mailboxes mb ON mb.ROWID = m.mailbox
WHERE m.ROWID = ?3 AND m.ROWID IN (` + members + `)`
	err = db.QueryRowContext(ctx, q, b.rowid, nil, int64(uid)).Scan(&prefix, &subject, &addr, &name, &sent, &recv, &size, &flags, &read, &flagged, &mbox)
	if errors.Is(err, sql.ErrNoRows) {
		return s, "", false, nil
	}
	if err != nil {
		return s, "", false, fmt.Errorf("mail account %q: mailbox %q: message %d: %w", a.account, b.path, uid, err)
	}
	s.UID = uid
	s.Subject = prefix.String + subject.String
	if addr.String != "" {
		s.From = []Address{{Name: name.String, Addr: strings.ToLower(addr.String)}}
	}
	s.Date, s.InternalDate, s.Size = appleTime(sent), appleTime(recv), size.Int64
	s.Flags = appleFlags(flags, read, flagged)
	rows, err := db.QueryContext(ctx, `SELECT r.type, a.address, a.comment FROM recipients r JOIN addresses a ON a.ROWID = r.address
WHERE r.message = ? ORDER BY r.type, r.position`, int64(uid))
	if err != nil {
		return s, "", false, fmt.Errorf("mail account %q: message %d: recipients: %w", a.account, uid, err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ sql.NullInt64
		var ad, cm sql.NullString
		if err := rows.Scan(&typ, &ad, &cm); err != nil {
			return s, "", false, err
		}
		x := Address{Name: cm.String, Addr: strings.ToLower(ad.String)}
		switch typ.Int64 { // 0 To, 1 Cc, 2 Bcc (testdata/applemail/README.md)
		case 1:
			s.Cc = append(s.Cc, x)
		case 2:
			s.Bcc = append(s.Bcc, x)
		default:
			s.To = append(s.To, x)
		}
	}
	return s, mbox, true, rows.Err()
}

func unionAddrs(a, b []Address) []Address {
	for _, x := range b {
		if !slices.ContainsFunc(a, func(y Address) bool { return y.Addr == x.Addr }) {
			a = append(a, x)
		}
	}
	return a
}

// readEMLXHead reads the header block of an .emlx's message.
func readEMLXHead(file string) ([]byte, error) {
	f, size, err := openRegular(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	off, n, err := readFrame(f, size)
	if err != nil {
		return nil, err
	}
	buf, err := io.ReadAll(io.NewSectionReader(f, off, min(n, maxHeaderRead)))
	if err != nil {
		return nil, err
	}
	return headerBlock(buf), nil
}

// openRegular opens a regular file (not a link, FIFO or device: a FIFO
// would block a read forever) and returns its size.
func openRegular(file string) (*os.File, int64, error) {
	st, err := os.Lstat(file)
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, err
	}
	st, err = f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", file)
	}
	return f, st.Size(), nil
}

// readFrame reads f's count line and returns the message's offset and length.
func readFrame(f *os.File, size int64) (int64, int64, error) {
	head := make([]byte, maxEMLXCountLine)
	k, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, 0, err
	}
	return emlxFrame(head[:k], size)
}

// mboxDir is the folder of a mailbox URL of this account: each path
// component is a "<name>.mbox" folder inside the account's folder.
func (a *AppleMail) mboxDir(mboxURL string) (string, error) {
	id, path, ok := splitMailboxURL(mboxURL)
	if !ok || id != a.id {
		return "", ErrNoMessage
	}
	parts := strings.Split(path, "/")
	for i, p := range parts {
		parts[i] = p + ".mbox"
	}
	return filepath.Join(append([]string{a.root, a.id}, parts...)...), nil
}

// file finds the .emlx of ROWID uid inside the mailbox folder of mboxURL,
// preferring a full <uid>.emlx over a <uid>.partial.emlx. The folder's files
// are listed once and listed again when uid is not among them (Mail
// shards large mailboxes into numbered subfolders, so the path is not
// computed but found). Child mailboxes (*.mbox) are not entered.
func (a *AppleMail) file(mboxURL string, uid uint32) (string, error) {
	dir, err := a.mboxDir(mboxURL)
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if f, ok := a.files[dir][uid]; ok {
		return f, nil
	}
	found := map[uint32]string{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if p != dir && strings.HasSuffix(d.Name(), ".mbox") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || filepath.Base(filepath.Dir(p)) != "Messages" {
			return nil
		}
		name, partial := d.Name(), false
		switch {
		case strings.HasSuffix(name, ".partial.emlx"):
			name, partial = strings.TrimSuffix(name, ".partial.emlx"), true
		case strings.HasSuffix(name, ".emlx"):
			name = strings.TrimSuffix(name, ".emlx")
		default:
			return nil
		}
		n, err := strconv.ParseUint(name, 10, 32)
		if err != nil || n == 0 {
			return nil
		}
		if _, have := found[uint32(n)]; have && partial {
			return nil
		}
		found[uint32(n)] = p
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("mail account %q: %w", a.account, err)
	}
	if a.files == nil {
		a.files = map[string]map[uint32]string{}
	}
	a.files[dir] = found
	if f, ok := found[uid]; ok {
		return f, nil
	}
	return "", ErrNoMessage
}

// FlagsSince implements Backend: the index has no mod-sequences.
func (a *AppleMail) FlagsSince(context.Context, string, uint32, uint64) ([]FlagUpdate, error) {
	return nil, ErrNoModSeq
}

// Raw implements Backend: the message framed in its .emlx, never more than
// the count line declares nor more than the file holds.
func (a *AppleMail) Raw(ctx context.Context, path string, uidValidity uint32, uid uint32, max int64) ([]byte, bool, error) {
	db, b, err := a.checked(ctx, path, uidValidity)
	if err != nil {
		return nil, false, err
	}
	_, mbox, ok, err := a.row(ctx, db, b, uid)
	db.Close()
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, false, ErrNoMessage
	}
	file, err := a.file(mbox, uid)
	if err != nil {
		return nil, false, err
	}
	f, size, err := openRegular(file)
	if err != nil {
		return nil, false, ErrNoMessage
	}
	defer f.Close()
	off, n, err := readFrame(f, size)
	if err != nil {
		return nil, false, fmt.Errorf("mail account %q: message %d (%s): %w", a.account, uid, file, err)
	}
	buf, err := io.ReadAll(io.NewSectionReader(f, off, min(n, max)))
	if err != nil {
		return nil, false, fmt.Errorf("mail account %q: read message %d: %w", a.account, uid, err)
	}
	return buf, n > max, nil
}

var _ Backend = (*AppleMail)(nil)
