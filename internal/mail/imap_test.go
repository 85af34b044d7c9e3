package mail

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/tidings-mcp/tidings/internal/account"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// memIMAP starts go-imap's in-memory server on loopback with user
// "me"/"pw", mailboxes INBOX, Archive, Drafts, Sent and Work/Projects, and
// INBOX holding the testdata Maildir's INBOX messages in order. caps
// replaces the advertised capabilities when non-nil.
func memIMAP(t *testing.T, caps imap.CapSet) (*IMAP, *imapmemserver.User) {
	t.Helper()
	mem := imapmemserver.New()
	user := imapmemserver.NewUser("me", "pw")
	for _, name := range []string{"INBOX", "Archive", "Drafts", "Sent", "Trash", "Work/Projects"} {
		if err := user.Create(name, nil); err != nil {
			t.Fatal(err)
		}
	}
	md, _ := NewMaildir("src", copyMaildir(t))
	for uid := uint32(1); uid <= 9; uid++ {
		raw, _, err := md.Raw(context.Background(), "INBOX", 0, uid, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := user.Append("INBOX", literal(raw), &imap.AppendOptions{Time: testclock.Anchor()}); err != nil {
			t.Fatal(err)
		}
	}
	mem.AddUser(user)
	if caps == nil {
		caps = imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}}
	}
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         caps,
		InsecureAuth: true,
		Logger:       discard{},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	b, err := NewIMAP(IMAPConfig{Account: "work", URL: "imap://" + ln.Addr().String(), Username: "me",
		Password: func(context.Context) (account.Secret, error) { return account.NewSecret("pw"), nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, user
}

type discard struct{}

func (discard) Printf(string, ...any) {}

type lit struct {
	*strings.Reader
}

func (l lit) Size() int64 { return int64(l.Len()) }

func literal(b []byte) imap.LiteralReader { return lit{strings.NewReader(string(b))} }

func TestIMAPReadsNeverSetSeen(t *testing.T) {
	b, _ := memIMAP(t, nil)
	ctx := context.Background()
	mb, err := b.Status(ctx, "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	if mb.Messages != 9 || mb.Unseen != 9 {
		t.Fatalf("status = %+v", mb)
	}
	uids, err := b.UIDs(ctx, "INBOX", mb.UIDValidity)
	if err != nil || len(uids) != 9 {
		t.Fatalf("UIDs = %v, %v", uids, err)
	}
	for _, u := range uids {
		if _, _, err := b.Raw(ctx, "INBOX", mb.UIDValidity, u, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Summaries(ctx, "INBOX", mb.UIDValidity, uids); err != nil {
		t.Fatal(err)
	}
	after, err := b.Status(ctx, "INBOX")
	if err != nil || after.Unseen != 9 {
		t.Fatalf("after reading every message: %+v, %v; want 9 still unseen", after, err)
	}
}

func TestIMAPBackendKeepsTheContract(t *testing.T) {
	b, _ := memIMAP(t, nil)
	ctx := context.Background()
	mbs, err := b.Mailboxes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, m := range mbs {
		paths = append(paths, m.Path)
	}
	if !slices.Equal(paths, []string{"Archive", "Drafts", "INBOX", "Sent", "Trash", "Work/Projects"}) {
		t.Fatalf("paths = %q", paths)
	}
	if i := slices.Index(paths, "Drafts"); !slices.Contains(mbs[i].SpecialUse, Drafts) {
		t.Errorf("Drafts special use = %v", mbs[i].SpecialUse)
	}
	inbox := mbs[slices.Index(paths, "INBOX")]

	t.Run("summaries in the order asked, missing skipped", func(t *testing.T) {
		sums, err := b.Summaries(ctx, "INBOX", inbox.UIDValidity, []uint32{3, 1, 77})
		if err != nil || len(sums) != 2 || sums[0].UID != 3 || sums[1].UID != 1 {
			t.Fatalf("summaries = %+v, %v", sums, err)
		}
		if sums[0].Subject != "Reunión mañana" || sums[0].From[0].Name != "José Peña" || sums[1].MessageID != "lunch-1@example.org" {
			t.Errorf("decoded envelope = %+v", sums[0])
		}
	})
	t.Run("a changed UIDVALIDITY is refused", func(t *testing.T) {
		for name, err := range map[string]error{
			"UIDs": func() error { _, err := b.UIDs(ctx, "INBOX", inbox.UIDValidity+1); return err }(),
			"Raw": func() error {
				_, _, err := b.Raw(ctx, "INBOX", inbox.UIDValidity+1, 1, 10)
				return err
			}(),
			"SetFlags": b.SetFlags(ctx, "INBOX", inbox.UIDValidity+1, []uint32{1}, []string{Seen}, true),
		} {
			if !errors.Is(err, ErrUIDValidity) {
				t.Errorf("%s: %v, want ErrUIDValidity", name, err)
			}
		}
	})
	t.Run("raw is capped and says so", func(t *testing.T) {
		raw, trunc, err := b.Raw(ctx, "INBOX", inbox.UIDValidity, 2, 30)
		if err != nil || !trunc || len(raw) != 30 || !strings.HasPrefix(string(raw), "From: ") {
			t.Fatalf("raw = %q, %v, %v", raw, trunc, err)
		}
		raw, trunc, err = b.Raw(ctx, "INBOX", inbox.UIDValidity, 2, 1<<20)
		if err != nil || trunc || !strings.Contains(string(raw), "482913") {
			t.Fatalf("raw = %q, %v, %v", raw, trunc, err)
		}
		if _, _, err := b.Raw(ctx, "INBOX", inbox.UIDValidity, 99, 10); !errors.Is(err, ErrNoMessage) {
			t.Fatalf("missing UID: %v", err)
		}
	})
	t.Run("flags set and cleared", func(t *testing.T) {
		if err := b.SetFlags(ctx, "INBOX", inbox.UIDValidity, []uint32{1, 2}, []string{Seen, Flagged}, true); err != nil {
			t.Fatal(err)
		}
		if err := b.SetFlags(ctx, "INBOX", inbox.UIDValidity, []uint32{2}, []string{Flagged}, false); err != nil {
			t.Fatal(err)
		}
		sums, _ := b.Summaries(ctx, "INBOX", inbox.UIDValidity, []uint32{1, 2})
		if !slices.Contains(sums[0].Flags, Flagged) || slices.Contains(sums[1].Flags, Flagged) || !slices.Contains(sums[1].Flags, Seen) {
			t.Fatalf("flags = %v / %v", sums[0].Flags, sums[1].Flags)
		}
	})
	t.Run("move into a nested mailbox", func(t *testing.T) {
		if err := b.Move(ctx, "INBOX", inbox.UIDValidity, []uint32{7}, "Work/Projects"); err != nil {
			t.Fatal(err)
		}
		st, _ := b.Status(ctx, "Work/Projects")
		uids, _ := b.UIDs(ctx, "INBOX", inbox.UIDValidity)
		if st.Messages != 1 || slices.Contains(uids, 7) {
			t.Fatalf("after move: projects %+v, inbox %v", st, uids)
		}
	})
	t.Run("append reports the UID", func(t *testing.T) {
		uid, err := b.Append(ctx, "Drafts", []byte("Subject: draft\r\n\r\nbody\r\n"), []string{Draft, Seen}, testclock.Anchor())
		if err != nil || uid == 0 {
			t.Fatalf("append = %d, %v", uid, err)
		}
		st, _ := b.Status(ctx, "Drafts")
		sums, _ := b.Summaries(ctx, "Drafts", st.UIDValidity, []uint32{uid})
		if len(sums) != 1 || sums[0].Subject != "draft" || !slices.Contains(sums[0].Flags, Draft) {
			t.Fatalf("appended = %+v", sums)
		}
	})
	t.Run("without CONDSTORE FlagsSince says so", func(t *testing.T) {
		if _, err := b.FlagsSince(ctx, "INBOX", inbox.UIDValidity, 1); !errors.Is(err, ErrNoModSeq) {
			t.Fatalf("FlagsSince = %v", err)
		}
	})
}

func TestIMAPMoveNeverExpungesOtherMessages(t *testing.T) {
	// IMAP4rev1 alone: no MOVE, no UIDPLUS. A COPY+EXPUNGE fallback would
	// delete every message already marked \Deleted; the move is refused.
	b, user := memIMAP(t, imap.CapSet{imap.CapIMAP4rev1: {}})
	_ = user
	ctx := context.Background()
	mb, err := b.Status(ctx, "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SetFlags(ctx, "INBOX", mb.UIDValidity, []uint32{2}, []string{Deleted}, true); err != nil {
		t.Fatal(err)
	}
	if err := b.Move(ctx, "INBOX", mb.UIDValidity, []uint32{1}, "Archive"); !errors.Is(err, ErrNoSafeMove) {
		t.Fatalf("Move = %v, want ErrNoSafeMove", err)
	}
	uids, _ := b.UIDs(ctx, "INBOX", mb.UIDValidity)
	if !slices.Contains(uids, 2) {
		t.Fatalf("message 2 (marked deleted) was expunged: %v", uids)
	}
}

func TestIMAPWrongPasswordIsAnError(t *testing.T) {
	b, _ := memIMAP(t, nil)
	b.cfg.Password = func(context.Context) (account.Secret, error) { return account.NewSecret("nope"), nil }
	_, err := b.Mailboxes(context.Background())
	if err == nil || !strings.Contains(err.Error(), `mail account "work"`) || strings.Contains(err.Error(), "nope") {
		t.Fatalf("err = %v", err)
	}
}
