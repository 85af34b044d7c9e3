package mail

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/send"
)

// fakeMailApp stands in for osascript + Mail.app: it records each
// command, checks the script it was given is the constant one, and, unless
// told to fail or to ignore the change, edits the fixture's Envelope Index
// as Mail would (read/flagged columns; a move gives the message a new
// ROWID in the target mailbox).
type fakeMailApp struct {
	t    *testing.T
	root string

	mu      sync.Mutex
	cmds    []send.Command
	result  send.RunResult
	ignore  bool // accept the change but never record it
	scripts []string
}

func (f *fakeMailApp) Run(_ context.Context, c send.Command) (send.RunResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cmds = append(f.cmds, c)
	if len(c.Args) > 0 {
		b, err := os.ReadFile(c.Args[0])
		if err != nil {
			f.t.Errorf("script %s: %v", c.Args[0], err)
		}
		f.scripts = append(f.scripts, string(b))
	}
	if f.result.ExitCode != 0 || f.result.TimedOut || f.ignore {
		return f.result, nil
	}
	a := c.Args
	op, acct, src, dst, val, ids := a[1], a[2], a[3], a[4], a[5] == "1", a[6:]
	db, err := sql.Open("sqlite", filepath.Join(f.root, "MailData", "Envelope Index"))
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	box := func(path string) int64 {
		var id int64
		u := "imap://" + acct + "/" + strings.ReplaceAll(path, " ", "%20")
		if err := db.QueryRow("SELECT ROWID FROM mailboxes WHERE url = ?", u).Scan(&id); err != nil {
			f.t.Errorf("no mailbox %s: %v", u, err)
		}
		return id
	}
	srcID := box(src)
	for _, s := range ids {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			f.t.Errorf("message id %q: %v", s, err)
			continue
		}
		var q string
		var args []any
		switch op {
		case "read":
			q, args = "UPDATE messages SET read = ? WHERE ROWID = ? AND mailbox = ?", []any{val, n, srcID}
		case "flag":
			q, args = "UPDATE messages SET flagged = ? WHERE ROWID = ? AND mailbox = ?", []any{val, n, srcID}
		case "move":
			q, args = `INSERT INTO messages (global_message_id, sender, subject_prefix, subject, date_sent, date_received, mailbox, flags, read, flagged, deleted, size)
				SELECT global_message_id, sender, subject_prefix, subject, date_sent, date_received, ?, flags, read, flagged, deleted, size FROM messages WHERE ROWID = ? AND mailbox = ?;`,
				[]any{box(dst), n, srcID}
			if _, err := db.Exec(q, args...); err != nil {
				f.t.Fatal(err)
			}
			q, args = "DELETE FROM messages WHERE ROWID = ?", []any{n}
		}
		if _, err := db.Exec(q, args...); err != nil {
			f.t.Fatal(err)
		}
	}
	return send.RunResult{Stdout: "ok\n"}, nil
}

// writableApple is the fixture account with writes through fake.
func writableApple(t *testing.T) (*AppleMail, *fakeMailApp) {
	t.Helper()
	root := appleStore(t, "")
	db, err := sql.Open("sqlite", filepath.Join(root, "MailData", "Envelope Index"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO mailboxes (ROWID, url) VALUES (5, 'imap://` + appleAcct + `/Deleted%20Messages'), (6, 'imap://` + appleAcct + `/Drafts')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b := newAppleMail(t, root)
	fake := &fakeMailApp{t: t, root: root}
	b.writes, b.Runner, b.pause = true, fake, 1
	return b, fake
}

func TestAppleMailWritesPassEveryValueAsAnArgumentNeverInTheScript(t *testing.T) {
	ctx := context.Background()
	b, fake := writableApple(t)
	if err := b.SetFlags(ctx, "INBOX", 0, []uint32{16, 12}, []string{Flagged}, true); err != nil {
		t.Fatal(err)
	}
	if err := b.Move(ctx, "INBOX", 0, []uint32{16}, "Work/Projects"); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"flag", appleAcct, "INBOX", "", "1", "16", "12"},
		{"move", appleAcct, "INBOX", "Work/Projects", "", "16"},
	}
	if len(fake.cmds) != len(want) {
		t.Fatalf("ran %d commands, want %d", len(fake.cmds), len(want))
	}
	for i, c := range fake.cmds {
		if c.Path != "/usr/bin/osascript" || c.Timeout != AppleMailRunTimeout || !slices.Equal(c.Args[1:], want[i]) {
			t.Errorf("command %d = %s %q (timeout %s), want args %q", i, c.Path, c.Args, c.Timeout, want[i])
		}
		if fake.scripts[i] != appleMailWriteScript {
			t.Errorf("command %d ran a script other than the constant one", i)
		}
	}
	for _, data := range []string{appleAcct, "INBOX", "Work", "16"} {
		if strings.Contains(appleMailWriteScript, data) {
			t.Errorf("the script's text holds %q", data)
		}
	}
}

func TestAppleMailWriteRefusalsAreOneClearSentenceAndRunNothingNeedless(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		setup   func(*AppleMail, *fakeMailApp)
		write   func(*AppleMail) error
		want    string
		wantErr error
		not     string // text the error must not hold
		runs    int
	}{
		{name: "off macOS the account stays read-only", setup: func(b *AppleMail, _ *fakeMailApp) { b.writes = false },
			write: func(b *AppleMail) error { return b.Move(ctx, "INBOX", 0, []uint32{16}, "Work/Projects") }, wantErr: ErrReadOnly},
		{name: "a flag Mail cannot set is refused before running", write: func(b *AppleMail) error {
			return b.SetFlags(ctx, "INBOX", 0, []uint32{16}, []string{Answered}, true)
		}, want: "only take read status and the flag"},
		{name: "an unknown uid runs nothing", write: func(b *AppleMail) error {
			return b.SetFlags(ctx, "INBOX", 0, []uint32{99}, []string{Seen}, true)
		}, wantErr: ErrNoMessage},
		{name: "another account's message runs nothing", write: func(b *AppleMail) error {
			return b.Move(ctx, "INBOX", 0, []uint32{31}, "Work/Projects")
		}, wantErr: ErrNoMessage},
		{name: "a target outside the account runs nothing", write: func(b *AppleMail) error {
			return b.Move(ctx, "INBOX", 0, []uint32{16}, "../OTHER-ACCOUNT/INBOX")
		}, want: "no mailbox"},
		{name: "drafts are refused with their fix", write: func(b *AppleMail) error {
			_, err := b.Append(ctx, "INBOX", []byte(msgAlice), nil, time.Time{})
			return err
		}, wantErr: errAppleMailDrafts},
		{name: "a timeout names the Automation permission", setup: func(_ *AppleMail, f *fakeMailApp) { f.result = send.RunResult{TimedOut: true, ExitCode: -1} },
			write: func(b *AppleMail) error { return b.SetFlags(ctx, "INBOX", 0, []uint32{16}, []string{Seen}, false) },
			want:  "Privacy & Security → Automation", runs: 1},
		{name: "-1743 at the end of stderr names the permission", setup: func(_ *AppleMail, f *fakeMailApp) {
			f.result = send.RunResult{ExitCode: 1, Stderr: "execution error: Not authorized to send Apple events to Mail. (-1743)\n"}
		}, write: func(b *AppleMail) error { return b.Move(ctx, "INBOX", 0, []uint32{16}, "Work/Projects") },
			want: "has not allowed Tidings to control Mail (error -1743)", runs: 1},
		{name: "-1743 quoted from a mailbox name is not the permission", setup: func(_ *AppleMail, f *fakeMailApp) {
			f.result = send.RunResult{ExitCode: 1, Stderr: "execution error: Can’t get mailbox \"x (-1743)\". (-1728)\n"}
		}, write: func(b *AppleMail) error { return b.Move(ctx, "INBOX", 0, []uint32{16}, "Work/Projects") },
			want: "(-1728)", not: "has not allowed", runs: 1},
		{name: "a change the index never shows is reported", setup: func(_ *AppleMail, f *fakeMailApp) { f.ignore = true },
			write: func(b *AppleMail) error { return b.SetFlags(ctx, "INBOX", 0, []uint32{16}, []string{Flagged}, true) },
			want:  "index does not show", runs: 1},
		{name: "a move the index never shows is reported", setup: func(_ *AppleMail, f *fakeMailApp) { f.ignore = true },
			write: func(b *AppleMail) error { return b.Move(ctx, "INBOX", 0, []uint32{16}, "Deleted Messages") },
			want:  "index does not show", runs: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, fake := writableApple(t)
			if tc.setup != nil {
				tc.setup(b, fake)
			}
			err := tc.write(b)
			switch {
			case err == nil:
				t.Fatal("the write succeeded")
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
			if tc.not != "" && strings.Contains(err.Error(), tc.not) {
				t.Errorf("err = %v, want it without %q", err, tc.not)
			}
			if len(fake.cmds) != tc.runs {
				t.Errorf("ran %d commands, want %d", len(fake.cmds), tc.runs)
			}
		})
	}
}

func TestMailToolsWriteMailAppsStoreThroughMailAppAndAnMCPClient(t *testing.T) {
	b, fake := writableApple(t)
	st := appleSet(t)
	st.Backends = []Backend{b}
	cs := server(t, st, &mcpserver.Profile{Access: "write", AllowExternal: true})["stdio"]
	if a := list(must(t, cs, "mail_list_accounts", `{}`)["accounts"]); len(a) != 1 || field(a[0], "read_only") == true {
		t.Fatalf("accounts = %v (writes go through Mail.app)", a)
	}
	flags := func(uid string) []any {
		t.Helper()
		return list(must(t, cs, "mail_get_email", `{"account":"mac","uid":`+uid+`}`)["flags"])
	}
	must(t, cs, "mail_mark_read", `{"account":"mac","uids":[11],"read":false}`)
	if slices.Contains(flags("11"), any(Seen)) {
		t.Errorf("uid 11 still read: %v", flags("11"))
	}
	must(t, cs, "mail_flag", `{"account":"mac","uids":[11]}`)
	if !slices.Contains(flags("11"), any(Flagged)) {
		t.Errorf("uid 11 not flagged: %v", flags("11"))
	}
	must(t, cs, "mail_move", `{"account":"mac","uids":[16],"target_mailbox":"Work/Projects"}`)
	work := must(t, cs, "mail_get_emails", `{"account":"mac","mailbox":"Work/Projects"}`)
	if n := len(list(work["emails"])); n != 2 {
		t.Fatalf("Work/Projects = %v, want the moved message beside uid 21", work)
	}
	must(t, cs, "mail_trash", `{"account":"mac","uids":[1013]}`)
	trash := must(t, cs, "mail_get_emails", `{"account":"mac","mailbox":"Deleted Messages"}`)
	if n := len(list(trash["emails"])); n != 1 {
		t.Fatalf("Deleted Messages = %v, want the trashed message", trash)
	}
	if txt := refused(t, cs, "mail_create_draft", `{"account":"mac","to":["ana@example.org"],"subject":"Hi","body":"x"}`); !strings.Contains(txt, "drafts are not written through Mail.app") {
		t.Errorf("mail_create_draft = %q", txt)
	}
	var ops []string
	for _, c := range fake.cmds {
		ops = append(ops, c.Args[1])
	}
	if !slices.Equal(ops, []string{"read", "flag", "move", "move"}) {
		t.Errorf("Mail.app ran %v", ops)
	}
}
