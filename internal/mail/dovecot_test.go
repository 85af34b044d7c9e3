package mail

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/account"
	"github.com/tidings-mcp/tidings/internal/mcpserver"
)

// startDovecot runs a Dovecot of its own (docs/testing.md, "Real
// programs"): a config in a temp dir, a free loopback port, a
// passwd-file user "me" / "secret-pw", and the testdata Maildir as that
// user's mail. It skips when Dovecot is not installed, unless CI is set
// (./scripts/system-packages installs dovecot-imapd).
func startDovecot(t *testing.T) *IMAP {
	t.Helper()
	b, _ := startDovecotDir(t)
	return b
}

// startDovecotDir is startDovecot that also returns the user's Maildir
// on disk (a test deletes a message file to expunge it as another client
// would).
func startDovecotDir(t *testing.T) (*IMAP, string) {
	t.Helper()
	bin, err := exec.LookPath("dovecot")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/dovecot"); serr == nil {
			bin = "/usr/sbin/dovecot"
		} else if os.Getenv("CI") != "" {
			t.Fatal("dovecot is not installed: run ./scripts/system-packages")
		} else {
			t.Skip("dovecot is not installed (./scripts/system-packages installs dovecot-imapd)")
		}
	}
	dir, err := os.MkdirTemp("", "tidings-dovecot-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	mail := filepath.Join(dir, "mail", "me")
	if err := CopyMaildir(os.DirFS("testdata/maildir"), mail); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	uid, gid := os.Getuid(), os.Getgid()
	rootLines := ""
	if uid == 0 {
		nobody, err := user.Lookup("nobody")
		if err != nil {
			t.Fatal(err)
		}
		uid, _ = strconv.Atoi(nobody.Uid)
		gid, _ = strconv.Atoi(nobody.Gid)
		rootLines = "default_internal_user = root\ndefault_internal_group = root\ndefault_login_user = nobody\nfirst_valid_uid = 1\nfirst_valid_gid = 1\n"
		if err := filepath.Walk(filepath.Join(dir, "mail"), func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, gid)
		}); err != nil {
			t.Fatal(err)
		}
	} else {
		me, _ := user.Current()
		rootLines = fmt.Sprintf("default_internal_user = %s\ndefault_login_user = %s\ndefault_internal_group = %s\n", me.Username, me.Username, me.Username)
	}
	if err := os.WriteFile(filepath.Join(dir, "users"), []byte("me:{PLAIN}secret-pw::::::\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`instance_name = tidings-test-%d
base_dir = %[2]s/run
state_dir = %[2]s/state
log_path = %[2]s/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:%[2]s/mail/%%n
%[3]s
passdb {
  driver = passwd-file
  args = scheme=PLAIN %[2]s/users
}
userdb {
  driver = static
  args = uid=%[4]d gid=%[5]d home=%[2]s/mail/%%n
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = %[6]d
  }
  inet_listener imaps {
    port = 0
  }
  chroot =
}
service anvil {
  chroot =
}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Drafts {
    special_use = \Drafts
    auto = create
  }
  mailbox Sent {
    special_use = \Sent
  }
  mailbox Trash {
    special_use = \Trash
    auto = create
  }
  mailbox Archive {
    special_use = \Archive
  }
}
`, port, dir, rootLines, uid, gid, port)
	cfgPath := filepath.Join(dir, "dovecot.conf")
	if err := os.WriteFile(cfgPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-F", "-c", cfgPath)
	out, _ := os.Create(filepath.Join(dir, "stdout"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "dovecot.log"))
			so, _ := os.ReadFile(filepath.Join(dir, "stdout"))
			t.Fatalf("dovecot did not listen: %s\n%s", log, so)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, err := NewIMAP(IMAPConfig{Account: "dove", URL: fmt.Sprintf("imap://127.0.0.1:%d", port), Username: "me",
		Password: func(context.Context) (account.Secret, error) { return account.NewSecret("secret-pw"), nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, mail
}

func TestDovecotKeepsTheBackendContract(t *testing.T) {
	b := startDovecot(t)
	ctx := context.Background()
	mbs, err := b.Mailboxes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	var inbox, drafts Mailbox
	for _, m := range mbs {
		paths = append(paths, m.Path)
		switch m.Path {
		case "INBOX":
			inbox = m
		case "Drafts":
			drafts = m
		}
	}
	for _, want := range []string{"INBOX", "Drafts", "Sent", "Trash", "Archive", "Work/Projects", "Work/Archive"} {
		if !slices.Contains(paths, want) {
			t.Errorf("mailboxes %v lack %s", paths, want)
		}
	}
	if !slices.Contains(drafts.SpecialUse, Drafts) || inbox.Messages != 9 || inbox.Unseen != 5 || inbox.HighestModSeq == 0 {
		t.Fatalf("INBOX %+v, Drafts %+v (want 9 messages, 5 unseen, CONDSTORE)", inbox, drafts)
	}
	uids, err := b.UIDs(ctx, "INBOX", inbox.UIDValidity)
	if err != nil || len(uids) != 9 {
		t.Fatalf("UIDs %v %v", uids, err)
	}
	// Reading every message sets no flag.
	for _, u := range uids {
		if _, _, err := b.Raw(ctx, "INBOX", inbox.UIDValidity, u, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := b.Status(ctx, "INBOX"); st.Unseen != 5 {
		t.Fatalf("after reading: %d unseen, want 5", st.Unseen)
	}
	// CONDSTORE: a flag change is reported since the old mod-sequence.
	if err := b.SetFlags(ctx, "INBOX", inbox.UIDValidity, uids[:1], []string{Flagged}, true); err != nil {
		t.Fatal(err)
	}
	ups, err := b.FlagsSince(ctx, "INBOX", inbox.UIDValidity, inbox.HighestModSeq)
	if err != nil || len(ups) != 1 || ups[0].UID != uids[0] || !slices.Contains(ups[0].Flags, Flagged) {
		t.Fatalf("FlagsSince = %+v, %v", ups, err)
	}
	sums, err := b.Summaries(ctx, "INBOX", inbox.UIDValidity, []uint32{uids[2], uids[4]})
	if err != nil || sums[0].Subject != "Reunión mañana" || sums[1].From[0].Name != "田中" {
		t.Fatalf("summaries %+v %v", sums, err)
	}
	if err := b.Move(ctx, "INBOX", inbox.UIDValidity, uids[8:], "Work/Projects"); err != nil {
		t.Fatal(err)
	}
	if st, _ := b.Status(ctx, "Work/Projects"); st.Messages != 2 {
		t.Fatalf("after move: %+v", st)
	}
	uid, err := b.Append(ctx, "Drafts", []byte("From: me@example.com\r\nSubject: d\r\n\r\nx\r\n"), []string{Draft}, time.Unix(1764500000, 0))
	if err != nil || uid == 0 {
		t.Fatalf("append: %d %v", uid, err)
	}
}

func TestEveryMailToolAgainstDovecot(t *testing.T) {
	b := startDovecot(t)
	st := &Store{Backends: []Backend{b}, Accounts: []AccountInfo{{Name: "dove", Kind: "imap", From: []string{"me@example.com"}}},
		Self: []string{"me@example.com"}, Allow: PolicyAllow(policyHome(t, []string{blockedAddr}, nil), nil)}
	files := t.TempDir()
	cs := server(t, st, &mcpserver.Profile{Access: "write", AllowExternal: true, FileDirs: []string{files}})["http"]
	got := must(t, cs, "mail_get_emails", `{"mailbox":"INBOX","limit":100}`)
	if n := len(list(got["emails"])); n != 8 || got["hidden"] != 1.0 {
		t.Fatalf("INBOX: %d emails, hidden %v", n, got["hidden"])
	}
	first := fmtNum(field(list(got["emails"])[len(list(got["emails"]))-1], "uid"))
	email := must(t, cs, "mail_get_email", `{"mailbox":"INBOX","uid":`+first+`}`)
	if !strings.Contains(email["body"].(string), "Rua Augusta") {
		t.Fatalf("email = %v", email)
	}
	must(t, cs, "mail_get_source", `{"mailbox":"INBOX","uid":`+first+`}`)
	must(t, cs, "mail_mark_read", `{"mailbox":"INBOX","uids":[`+first+`]}`)
	must(t, cs, "mail_flag", `{"mailbox":"INBOX","uids":[`+first+`]}`)
	must(t, cs, "mail_reply_draft", `{"mailbox":"INBOX","uid":`+first+`,"body":"Yes!"}`)
	must(t, cs, "mail_create_draft", `{"to":["ana@example.org"],"subject":"Hi","body":"Hello"}`)
	must(t, cs, "mail_move", `{"mailbox":"INBOX","uids":[`+first+`],"target_mailbox":"Archive"}`)
	uids := list(must(t, cs, "mail_get_emails", `{"mailbox":"INBOX"}`)["emails"])
	must(t, cs, "mail_trash", `{"mailbox":"INBOX","uids":[`+fmtNum(field(uids[0], "uid"))+`]}`)
	if n := len(list(must(t, cs, "mail_get_emails", `{"mailbox":"Drafts"}`)["emails"])); n != 2 {
		t.Fatalf("Drafts holds %d", n)
	}
	if n := len(list(must(t, cs, "mail_get_emails", `{"mailbox":"Trash"}`)["emails"])); n != 1 {
		t.Fatalf("Trash holds %d", n)
	}
	accts := list(must(t, cs, "mail_list_accounts", `{}`)["accounts"])
	mbs := list(must(t, cs, "mail_list_mailboxes", `{}`)["mailboxes"])
	if len(accts) != 1 || len(mbs) < 7 {
		t.Fatalf("accounts %v mailboxes %v", accts, mbs)
	}
	// Leaf "Projects" is unique: it resolves to Work/Projects.
	if got := must(t, cs, "mail_get_emails", `{"mailbox":"Projects"}`); got["mailbox"] != "Work/Projects" {
		t.Fatalf("leaf resolution: %v", got)
	}
}
