package mail

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// appleAcct is the fixture's Mail.app account id (its folder and its
// mailbox URLs' host); appleOther is a second account of the same store.
const (
	appleAcct  = "6A1F3C2E-0B7D-4E59-9C1A-2F8E5D4B3A21"
	appleOther = "OTHER-ACCOUNT"
)

// emlx frames msg as Mail writes it: the count padded with spaces, the
// message, the property list.
func emlx(msg string) string {
	return fmt.Sprintf("%-10d\n%s", len(msg), msg) +
		`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>flags</key>
	<integer>8590195713</integer>
</dict>
</plist>
`
}

// appleMessage is one row of the fixture and its file.
type appleMessage struct {
	rowid, mailbox, sender, subject int64
	prefix                          string
	sent                            time.Time
	flags                           int64
	read, flagged, deleted          int
	to, cc                          []int64
	file                            string // path under the mailbox's .mbox folder; "" = not downloaded
	data                            string // the file's bytes
}

const (
	msgAlice = "From: Alice Example <alice@example.org>\r\nReply-To: Alice Example <alice@example.org>\r\nTo: me@example.com\r\nCc: bob@example.org\r\n" +
		"Subject: Lunch on Thursday?\r\nMessage-ID: <lunch-1@example.org>\r\nDate: Mon, 30 Nov 2026 09:00:00 +0000\r\n\r\nShall we meet at noon?\r\n"
	// msgSneaky's From is harmless; its Reply-To, only in the .emlx, is the blocked sender.
	msgSneaky = "From: Courier <courier@example.net>\r\nReply-To: Mallory <" + blockedAddr + ">\r\nTo: me@example.com\r\n" +
		"Subject: Parcel waiting\r\nMessage-ID: <parcel@example.net>\r\n\r\nReply to arrange delivery.\r\n"
	msgPartial = "From: Bob <bob@example.org>\r\nTo: me@example.com\r\nSubject: Photos\r\nMessage-ID: <photos@example.org>\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nPhotos attached.\r\n--b\r\n" +
		"Content-Type: image/jpeg\r\nContent-Disposition: attachment; filename=\"beach.jpg\"\r\nX-Apple-Content-Length: 48213\r\n\r\n--b--\r\n"
	msgProject = "From: Carol <carol@example.org>\r\nTo: me@example.com\r\nSubject: Milestone\r\nMessage-ID: <ms@example.org>\r\n\r\nDone.\r\n"
)

// appleStore writes a Mail.app V10 folder: the Envelope Index built from
// testdata/applemail/schema.sql (the real DDL) with rows written here,
// and the .emlx files. Return the version folder.
func appleStore(t *testing.T, ddl string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "V10")
	if err := os.MkdirAll(filepath.Join(root, "MailData"), 0o700); err != nil {
		t.Fatal(err)
	}
	if ddl == "" {
		b, err := os.ReadFile(filepath.Join("testdata", "applemail", "schema.sql"))
		if err != nil {
			t.Fatal(err)
		}
		ddl = string(b)
	}
	db, err := sql.Open("sqlite", filepath.Join(root, "MailData", "Envelope Index"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(ddl)
	exec(`INSERT INTO mailboxes (ROWID, url) VALUES (1, 'imap://` + appleAcct + `/INBOX'), (2, 'imap://` + appleAcct + `/Work/Projects'),
		(3, 'imap://` + appleAcct + `/Sent%20Messages'), (4, 'imap://` + appleOther + `/INBOX')`)
	exec(`INSERT INTO addresses (ROWID, address, comment) VALUES (1, 'me@example.com', ''), (2, 'alice@example.org', 'Alice Example'),
		(3, 'Bob@Example.org', 'Bob'), (4, 'courier@example.net', 'Courier'), (5, 'carol@example.org', 'Carol')`)
	exec(`INSERT INTO subjects (ROWID, subject) VALUES (1, 'Lunch on Thursday?'), (2, 'Parcel waiting'), (3, 'Photos'), (4, 'Gone'),
		(5, 'Lying length'), (6, 'Not downloaded'), (7, 'Milestone'), (8, 'Other account')`)
	day := testclock.Anchor()
	inbox := "INBOX.mbox/8C5E1A90-6F4B-4D3A-A1E2-7B9C0D1E2F30/Data"
	msgs := []appleMessage{
		{rowid: 11, mailbox: 1, sender: 2, subject: 1, prefix: "", sent: day.Add(-3 * time.Hour), flags: 1 | appleAnswered, read: 1, to: []int64{1}, cc: []int64{3},
			file: inbox + "/Messages/11.emlx", data: emlx(msgAlice)},
		{rowid: 12, mailbox: 1, sender: 4, subject: 2, sent: day.Add(-2 * time.Hour), to: []int64{1},
			file: inbox + "/Messages/12.emlx", data: emlx(msgSneaky)},
		// Sharded into a numbered subfolder, as Mail does for large mailboxes.
		{rowid: 1013, mailbox: 1, sender: 3, subject: 3, prefix: "Re: ", sent: day.Add(-1 * time.Hour), flagged: 1, to: []int64{1},
			file: inbox + "/1/Messages/1013.partial.emlx", data: emlx(msgPartial)},
		{rowid: 14, mailbox: 1, sender: 2, subject: 4, sent: day.Add(-4 * time.Hour), deleted: 1, read: 1},
		// The count line claims more bytes than the file holds.
		{rowid: 15, mailbox: 1, sender: 2, subject: 5, sent: day.Add(-5 * time.Hour), read: 1,
			file: inbox + "/Messages/15.emlx", data: "99999     \nFrom: x@example.org\r\n\r\nshort\r\n"},
		{rowid: 16, mailbox: 1, sender: 5, subject: 6, sent: day.Add(-6 * time.Hour), read: 1},
		{rowid: 21, mailbox: 2, sender: 5, subject: 7, sent: day.Add(-7 * time.Hour), read: 1, flags: appleDraft,
			file: "Work.mbox/Projects.mbox/0B1C2D3E-4F50-6172-8394-A5B6C7D8E9F0/Data/Messages/21.emlx", data: emlx(msgProject)},
		{rowid: 31, mailbox: 4, sender: 2, subject: 8, sent: day.Add(-8 * time.Hour)},
	}
	for _, m := range msgs {
		exec(`INSERT INTO messages (ROWID, global_message_id, sender, subject_prefix, subject, date_sent, date_received, mailbox, flags, read, flagged, deleted, size)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, m.rowid, m.rowid, m.sender, m.prefix, m.subject, m.sent.Unix(), m.sent.Add(time.Minute).Unix(),
			m.mailbox, m.flags, m.read, m.flagged, m.deleted, len(m.data))
		for i, a := range m.to {
			exec(`INSERT INTO recipients (message, address, type, position) VALUES (?, ?, 0, ?)`, m.rowid, a, i)
		}
		for i, a := range m.cc {
			exec(`INSERT INTO recipients (message, address, type, position) VALUES (?, ?, 1, ?)`, m.rowid, a, i)
		}
		if m.file != "" {
			p := filepath.Join(root, appleAcct, m.file)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(m.data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func newAppleMail(t *testing.T, root string) *AppleMail {
	t.Helper()
	b, err := NewAppleMail("mac", root, appleAcct)
	if err != nil {
		t.Fatal(err)
	}
	b.writes = false // read-only as off macOS, on every OS (applemail_write_test.go turns writes on)
	return b
}

func TestAppleMailReadsEveryMailboxOfItsAccountFromTheRealSchema(t *testing.T) {
	ctx := context.Background()
	b := newAppleMail(t, appleStore(t, ""))
	mbs, err := b.Mailboxes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, mb := range mbs {
		paths = append(paths, mb.Path)
		if mb.Account != "mac" || mb.UIDValidity == 0 {
			t.Errorf("mailbox %+v", mb)
		}
	}
	if want := []string{"INBOX", "Sent Messages", "Work/Projects"}; !slices.Equal(paths, want) {
		t.Fatalf("mailboxes = %v, want %v (the other account's INBOX stays out)", paths, want)
	}
	if !slices.Equal(mbs[1].SpecialUse, []string{Sent}) {
		t.Errorf("Sent Messages special use = %v", mbs[1].SpecialUse)
	}
	in := mbs[0]
	if in.Messages != 5 || in.Unseen != 2 || in.UIDNext != 1014 {
		t.Errorf("INBOX = %+v, want 5 messages (deleted one left out), 2 unseen, UIDNEXT 1014", in)
	}
	st, err := b.Status(ctx, "inbox")
	if err != nil || st.UIDValidity != in.UIDValidity {
		t.Fatalf("Status(inbox) = %+v, %v", st, err)
	}
	uids, err := b.UIDs(ctx, "INBOX", in.UIDValidity)
	if err != nil || !slices.Equal(uids, []uint32{11, 12, 15, 16, 1013}) {
		t.Fatalf("UIDs = %v, %v", uids, err)
	}
}

func TestAppleMailSummariesJoinTheIndexAndTheEmlxHeader(t *testing.T) {
	ctx := context.Background()
	b := newAppleMail(t, appleStore(t, ""))
	sums, err := b.Summaries(ctx, "INBOX", 0, []uint32{1013, 11, 12, 14, 16, 31})
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 4 {
		t.Fatalf("got %d summaries, want 4 (the deleted row and the other account's message are skipped): %+v", len(sums), sums)
	}
	addrs := func(l []Address) string {
		var s []string
		for _, a := range l {
			s = append(s, a.Addr)
		}
		return strings.Join(s, ",")
	}
	day := testclock.Anchor()
	for _, tc := range []struct {
		name               string
		s                  Summary
		uid                uint32
		subject, from, to  string
		cc, replyTo, msgID string
		flags              []string
		date               time.Time
	}{
		{"a full .emlx adds Reply-To and Message-ID", sums[1], 11, "Lunch on Thursday?", "alice@example.org", "me@example.com", "bob@example.org", "alice@example.org", "lunch-1@example.org",
			[]string{Seen, Answered}, day.Add(-3 * time.Hour)},
		{"a Reply-To only the file names is kept", sums[2], 12, "Parcel waiting", "courier@example.net", "me@example.com", "", blockedAddr, "parcel@example.net", nil, day.Add(-2 * time.Hour)},
		{"a partial .emlx in a shard folder is found", sums[0], 1013, "Re: Photos", "bob@example.org", "me@example.com", "", "", "photos@example.org", []string{Flagged}, day.Add(-time.Hour)},
		{"a message not downloaded reads from the index alone", sums[3], 16, "Not downloaded", "carol@example.org", "", "", "", "", []string{Seen}, day.Add(-6 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			if s.UID != tc.uid || s.Subject != tc.subject || addrs(s.From) != tc.from || addrs(s.To) != tc.to || addrs(s.Cc) != tc.cc ||
				addrs(s.ReplyTo) != tc.replyTo || s.MessageID != tc.msgID || !slices.Equal(s.Flags, tc.flags) || !s.Date.Equal(tc.date) ||
				!s.InternalDate.Equal(tc.date.Add(time.Minute)) {
				t.Errorf("summary = %+v", s)
			}
		})
	}
	if sums[1].From[0].Name != "Alice Example" {
		t.Errorf("sender name = %q", sums[1].From[0].Name)
	}
	work, err := b.Summaries(ctx, "Work/Projects", 0, []uint32{21})
	if err != nil || len(work) != 1 || !slices.Equal(work[0].Flags, []string{Seen, Draft}) {
		t.Fatalf("Work/Projects = %+v, %v", work, err)
	}
}

func TestAppleMailRawReadsOnlyTheFramedMessage(t *testing.T) {
	ctx := context.Background()
	b := newAppleMail(t, appleStore(t, ""))
	for _, tc := range []struct {
		name      string
		mailbox   string
		uid       uint32
		max       int64
		want      string
		truncated bool
		err       error
	}{
		{"the message without the property list", "INBOX", 11, 1 << 20, msgAlice, false, nil},
		{"a partial .emlx as stored", "INBOX", 1013, 1 << 20, msgPartial, false, nil},
		{"capped at max", "INBOX", 11, 10, msgAlice[:10], true, nil},
		{"a nested mailbox", "Work/Projects", 21, 1 << 20, msgProject, false, nil},
		{"a lying length line is refused", "INBOX", 15, 1 << 20, "", false, ErrEMLXFraming},
		{"a message not on disk", "INBOX", 16, 1 << 20, "", false, ErrNoMessage},
		{"a deleted row", "INBOX", 14, 1 << 20, "", false, ErrNoMessage},
		{"another mailbox's message", "Work/Projects", 11, 1 << 20, "", false, ErrNoMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, trunc, err := b.Raw(ctx, tc.mailbox, 0, tc.uid, tc.max)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || string(got) != tc.want || trunc != tc.truncated {
				t.Fatalf("Raw = %q, %v, %v", got, trunc, err)
			}
		})
	}
}

func TestAppleMailIsReadOnlyAndNeverWritesTheStore(t *testing.T) {
	ctx := context.Background()
	root := appleStore(t, "")
	idx := filepath.Join(root, "MailData", "Envelope Index")
	sum := func() [32]byte {
		b, err := os.ReadFile(idx)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	before := sum()
	b := newAppleMail(t, root)
	mb, err := b.Status(ctx, "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Summaries(ctx, "INBOX", mb.UIDValidity, []uint32{11, 12}); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"SetFlags": b.SetFlags(ctx, "INBOX", 0, []uint32{12}, []string{Seen}, true),
		"Move":     b.Move(ctx, "INBOX", 0, []uint32{12}, "Work/Projects"),
		"Append": func() error {
			_, err := b.Append(ctx, "INBOX", []byte(msgAlice), nil, testclock.Anchor())
			return err
		}(),
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s = %v, want ErrReadOnly", name, err)
		}
	}
	if _, err := b.FlagsSince(ctx, "INBOX", 0, 1); !errors.Is(err, ErrNoModSeq) {
		t.Errorf("FlagsSince = %v, want ErrNoModSeq", err)
	}
	if sum() != before {
		t.Error("the Envelope Index changed")
	}
	for _, suffix := range []string{"-journal", "-wal"} {
		if _, err := os.Stat(idx + suffix); err == nil {
			t.Errorf("a read left %s behind", filepath.Base(idx+suffix))
		}
	}
	if _, err := b.UIDs(ctx, "INBOX", mb.UIDValidity+1); !errors.Is(err, ErrUIDValidity) {
		t.Errorf("UIDs with a stale UIDVALIDITY = %v, want ErrUIDValidity", err)
	}
}

func TestAppleMailProbeNamesWhatTheIndexLacks(t *testing.T) {
	real, err := os.ReadFile(filepath.Join("testdata", "applemail", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"a missing column", "    deleted INTEGER NOT NULL DEFAULT 0,\n", "", "no column messages.deleted"},
		{"a renamed column", "    comment TEXT NOT NULL ", "    display TEXT NOT NULL ", "no column addresses.comment"},
		{"a missing table", "CREATE TABLE recipients (", "CREATE TABLE recipients_v2 (", "no table recipients"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ddl := strings.Replace(string(real), tc.from, tc.to, 1)
			if ddl == string(real) {
				t.Fatalf("%q is not in schema.sql", tc.from)
			}
			root := filepath.Join(t.TempDir(), "V10")
			os.MkdirAll(filepath.Join(root, "MailData"), 0o700)
			db, err := sql.Open("sqlite", filepath.Join(root, "MailData", "Envelope Index"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(ddl); err != nil {
				t.Fatal(err)
			}
			db.Close()
			_, err = newAppleMail(t, root).Mailboxes(context.Background())
			if !errors.Is(err, ErrIncompleteEnvelopeIndex) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}

func TestAppleMailNamesTheStoresAccountsWhenItsOwnIsAbsent(t *testing.T) {
	b, err := NewAppleMail("mac", appleStore(t, ""), "NOPE")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Mailboxes(context.Background())
	if err == nil || !strings.Contains(err.Error(), appleAcct) || !strings.Contains(err.Error(), appleOther) {
		t.Fatalf("err = %v, want the store's accounts named", err)
	}
	for _, id := range []string{"", "..", "a/b"} {
		if _, err := NewAppleMail("mac", "/Users/me/Library/Mail/V10", id); err == nil {
			t.Errorf("account id %q accepted", id)
		}
	}
	if _, err := NewAppleMail("mac", "Library/Mail/V10", appleAcct); err == nil {
		t.Error("a relative store path accepted")
	}
}

func TestMailboxURLsNeverNameAFolderOutsideTheAccount(t *testing.T) {
	for _, tc := range []struct {
		url, id, path string
		ok            bool
	}{
		{"imap://A/INBOX", "A", "INBOX", true},
		{"imap://A/%5BGmail%5D/All%20Mail", "A", "[Gmail]/All Mail", true},
		{"ews://A/Inbox", "A", "Inbox", true},
		{"imap://A/../B/INBOX", "", "", false},
		{"imap://A/%2E%2E/B", "", "", false},
		{"imap://A/x%2F..%2F..", "", "", false},
		{"imap://A/a//b", "", "", false},
		{"imap://A/", "", "", false},
		{"imap://A/a%5Cb", "", "", false},
		{"no-scheme/INBOX", "", "", false},
	} {
		id, path, ok := splitMailboxURL(tc.url)
		if ok != tc.ok || id != tc.id || path != tc.path {
			t.Errorf("splitMailboxURL(%q) = %q, %q, %v", tc.url, id, path, ok)
		}
	}
}

func TestEMLXFramingIsParsedStrictly(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		ok             bool
	}{
		{"padded count", "5         \nhello<?xml", "hello", true},
		{"bare count", "5\nhello", "hello", true},
		{"CRLF count line", "5\r\nhello", "hello", true},
		{"zero bytes", "0\n<?xml", "", true},
		{"count beyond the file", "6\nhello", "", false},
		{"huge count", "99999999999999999999999\nhello", "", false},
		{"no count", "\nhello", "", false},
		{"no newline", "5", "", false},
		{"a word", "From: a@b\n\nhi", "", false},
		{"a sign", "-5\nhello", "", false},
		{"empty", "", "", false},
		{"an overlong first line", strings.Repeat(" ", 80) + "5\nhello", "", false},
	} {
		got, err := ParseEMLX([]byte(tc.in))
		if (err == nil) != tc.ok || string(got) != tc.want || (err != nil && !errors.Is(err, ErrEMLXFraming)) {
			t.Errorf("%s: ParseEMLX(%q) = %q, %v", tc.name, tc.in, got, err)
		}
	}
}

func FuzzParseEMLX(f *testing.F) {
	f.Add([]byte(emlx(msgAlice)))
	f.Add([]byte(emlx(msgPartial)))
	f.Add([]byte("99999     \nshort"))
	f.Add([]byte("5\r\nhello"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := ParseEMLX(data)
		if err != nil {
			if msg != nil {
				t.Fatal("bytes returned with an error")
			}
			return
		}
		// The message is inside the file, after a count line that states
		// its length exactly.
		i := bytes.IndexByte(data, '\n')
		if i < 0 || i+1+len(msg) > len(data) || !bytes.Equal(data[i+1:i+1+len(msg)], msg) {
			t.Fatalf("ParseEMLX(%q) = %q: not the bytes after the count line", data, msg)
		}
		if _, err := Parse(msg); err != nil && len(msg) < 1<<20 {
			_ = err // the MIME reader has its own fuzz target; it must only not panic here
		}
	})
}

// appleSet is a store of one account over the Mail.app fixture, the read
// policy blocking blockedAddr.
func appleSet(t *testing.T) *Store {
	t.Helper()
	return &Store{
		Backends: []Backend{newAppleMail(t, appleStore(t, ""))},
		Accounts: []AccountInfo{{Name: "mac", Kind: "applemail", From: []string{"me@example.com"}}},
		Self:     []string{"me@example.com"},
		Allow:    PolicyAllow(policyHome(t, []string{blockedAddr}, nil), nil),
		Now:      testclock.Anchor,
	}
}

func TestMailToolsReadMailAppsStoreThroughAnMCPClient(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			files := t.TempDir()
			cs := server(t, appleSet(t), &mcpserver.Profile{Access: "write", AllowExternal: true, FileDirs: []string{files}})[transport]

			accts := list(must(t, cs, "mail_list_accounts", `{}`)["accounts"])
			if len(accts) != 1 || field(accts[0], "name") != "mac" || field(accts[0], "read_only") != true {
				t.Fatalf("accounts = %v (a Mail.app account is read-only)", accts)
			}
			var paths []string
			for _, m := range list(must(t, cs, "mail_list_mailboxes", `{}`)["mailboxes"]) {
				paths = append(paths, field(m, "path").(string))
			}
			if !slices.Equal(paths, []string{"mac/INBOX", "mac/Sent Messages", "mac/Work/Projects"}) {
				t.Fatalf("mailboxes = %v", paths)
			}
			got := must(t, cs, "mail_get_emails", `{"account":"mac"}`)
			var uids []float64
			for _, e := range list(got["emails"]) {
				uids = append(uids, field(e, "uid").(float64))
			}
			if !slices.Equal(uids, []float64{1013, 16, 15, 11}) || got["hidden"] != 1.0 {
				t.Fatalf("INBOX = %v, hidden %v; want UIDs descending and uid 12 (Reply-To the blocked sender, named only in its .emlx) hidden", uids, got["hidden"])
			}
			if txt := refused(t, cs, "mail_get_email", `{"account":"mac","uid":12}`); !strings.Contains(txt, "no") {
				t.Errorf("the hidden message reads as %q", txt)
			}
			email := must(t, cs, "mail_get_email", `{"account":"mac","uid":11}`)
			if !strings.Contains(email["body"].(string), "Shall we meet at noon?") || strings.Contains(email["body"].(string), "plist") {
				t.Fatalf("email = %v", email)
			}
			photos := must(t, cs, "mail_get_email", `{"account":"mac","uid":1013}`)
			if len(list(photos["attachments"])) != 1 {
				t.Fatalf("partial email = %v", photos)
			}
			src := must(t, cs, "mail_get_source", `{"account":"mac","uid":11}`)
			if s := src["source"].(string); !strings.Contains(s, "lunch-1@example.org") || strings.Contains(s, "8590195713") {
				t.Fatalf("source = %v (the property list is not part of the message)", src)
			}
			if txt := refused(t, cs, "mail_get_source", `{"account":"mac","uid":15}`); !strings.Contains(txt, "emlx") {
				t.Errorf("a lying length line reads as %q", txt)
			}
			for _, call := range [][2]string{
				{"mail_mark_read", `{"account":"mac","uids":[16]}`},
				{"mail_move", `{"account":"mac","uids":[16],"target_mailbox":"Work/Projects"}`},
				{"mail_create_draft", `{"account":"mac","to":["ana@example.org"],"subject":"Hi","body":"x"}`},
			} {
				if txt := refused(t, cs, call[0], call[1]); !strings.Contains(txt, "read-only") {
					t.Errorf("%s = %q, want a read-only refusal", call[0], txt)
				}
			}
		})
	}
}

func TestStoreFromConfigReadsAMailAppAccountAndPrefersIMAPForWrites(t *testing.T) {
	root := appleStore(t, "")
	cfg := &config.Config{Home: t.TempDir()}
	cfg.Mail.Accounts = []config.MailAccount{
		{Name: "mac", AppleMail: root, AppleMailAccount: appleAcct, From: []string{"Me@Example.com"}},
		{Name: "both", IMAP: "imaps://imap.example.org", Username: "me@example.org", PasswordEnv: "PW", AppleMail: root, AppleMailAccount: appleAcct},
	}
	st, err := StoreFromConfig(cfg, testclock.Anchor)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Backends) != 2 || st.Backends[0].Kind() != "applemail" || st.Accounts[0].Kind != "applemail" || st.Backends[1].Kind() != "imap" {
		t.Fatalf("backends = %v, accounts = %+v", st.Backends, st.Accounts)
	}
	if mbs, err := st.Backends[0].Mailboxes(context.Background()); err != nil || len(mbs) != 3 {
		t.Fatalf("mailboxes = %v, %v", mbs, err)
	}
}
