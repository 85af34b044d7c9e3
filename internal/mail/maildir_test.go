package mail

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMaildirListsMailboxesAsSlashPaths(t *testing.T) {
	md, err := NewMaildir("home", copyMaildir(t))
	if err != nil {
		t.Fatal(err)
	}
	mbs, err := md.Mailboxes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, mb := range mbs {
		paths = append(paths, mb.Path)
	}
	want := []string{"INBOX", "Archive", "Sent", "Work/Archive", "Work/Projects"}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths = %q, want %q", paths, want)
	}
	for _, tc := range []struct {
		path     string
		messages int
		unseen   int
		special  string
	}{
		{"INBOX", 9, 5, ""},
		{"Sent", 1, 0, Sent},
		{"Archive", 1, 0, Archive},
		{"Work/Projects", 1, 0, ""},
	} {
		i := slices.Index(paths, tc.path)
		mb := mbs[i]
		if mb.Messages != tc.messages || mb.Unseen != tc.unseen || mb.UIDValidity == 0 || mb.UIDNext != uint32(tc.messages+1) {
			t.Errorf("%s: %+v, want %d messages, %d unseen", tc.path, mb, tc.messages, tc.unseen)
		}
		if got := strings.Join(mb.SpecialUse, ","); got != tc.special {
			t.Errorf("%s: special use %q, want %q", tc.path, got, tc.special)
		}
	}
}

func TestMaildirRefusesPathsOutsideTheRoot(t *testing.T) {
	md, _ := NewMaildir("home", copyMaildir(t))
	for _, p := range []string{"../x", "Work/../..", ".Sent", "a\\b", "", "Work//Projects", "/etc"} {
		if _, err := md.Status(context.Background(), p); err == nil {
			t.Errorf("Status(%q) succeeded, want refusal", p)
		}
	}
}

func TestMaildirUIDsAreStableUntilTheFolderChanges(t *testing.T) {
	root := copyMaildir(t)
	md, _ := NewMaildir("home", root)
	ctx := context.Background()
	mb, err := md.Status(ctx, "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	uids, err := md.UIDs(ctx, "INBOX", mb.UIDValidity)
	if err != nil || !slices.Equal(uids, []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Fatalf("UIDs = %v, %v", uids, err)
	}
	// A flag change (rename within cur/) and new/ -> cur/ keep UIDs.
	f := findFile(t, root, "M2P1")
	if err := os.Rename(f, strings.TrimSuffix(f, ":2,")+":2,S"); err != nil {
		t.Fatal(err)
	}
	n := findFile(t, root, "M9P1")
	if err := os.Rename(n, filepath.Join(root, "cur", filepath.Base(n)+":2,S")); err != nil {
		t.Fatal(err)
	}
	mb2, _ := md.Status(ctx, "INBOX")
	if mb2.UIDValidity != mb.UIDValidity {
		t.Fatalf("UIDVALIDITY changed on a flag change")
	}
	sums, err := md.Summaries(ctx, "INBOX", mb.UIDValidity, []uint32{9, 2})
	if err != nil || len(sums) != 2 || sums[0].Subject != "Re: Lunch on Thursday?" || !slices.Contains(sums[1].Flags, Seen) {
		t.Fatalf("after renames: %+v %v", sums, err)
	}
	// A removal voids every remembered UID.
	if err := os.Remove(findFile(t, root, "M3P1")); err != nil {
		t.Fatal(err)
	}
	if _, err := md.UIDs(ctx, "INBOX", mb.UIDValidity); !errors.Is(err, ErrUIDValidity) {
		t.Fatalf("after a removal: %v, want ErrUIDValidity", err)
	}
}

func TestMaildirUsesDovecotsUIDList(t *testing.T) {
	root := copyMaildir(t)
	list := "3 V1700000001 N40 G0123\n" +
		"31 :1764500000.M1P1.demo\n" +
		"35 W900 :1764500300.M4P1.demo\n"
	if err := os.WriteFile(filepath.Join(root, "dovecot-uidlist"), []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	md, _ := NewMaildir("home", root)
	mb, err := md.Status(context.Background(), "INBOX")
	if err != nil {
		t.Fatal(err)
	}
	if mb.UIDValidity != 1700000001 || mb.UIDNext != 47 {
		t.Fatalf("status = %+v, want UIDVALIDITY 1700000001 and UIDNEXT 47", mb)
	}
	sums, err := md.Summaries(context.Background(), "INBOX", 1700000001, []uint32{31, 35, 40})
	if err != nil || len(sums) != 3 || sums[0].MessageID != "lunch-1@example.org" || sums[1].MessageID != "invoice-7@example.com" {
		t.Fatalf("summaries = %+v, %v", sums, err)
	}
}

func TestMaildirSummariesDecodeEveryCharset(t *testing.T) {
	md, _ := NewMaildir("home", copyMaildir(t))
	ctx := context.Background()
	sums, err := md.Summaries(ctx, "INBOX", 0, []uint32{1, 3, 5, 8, 9})
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct{ subject, fromName, fromAddr string }{
		{"Lunch on Thursday?", "Ana Silva", "ana@example.org"},
		{"Reunión mañana", "José Peña", "jose@example.es"},
		{"会議", "田中", "tanaka@example.jp"},
		{"=?bogus?Q?=ZZ?= malformed", "", ""},
		{"Re: Lunch on Thursday?", "Ana Silva", "ana@example.org"},
	} {
		s := sums[i]
		var name, addr string
		if len(s.From) > 0 {
			name, addr = s.From[0].Name, s.From[0].Addr
		}
		if s.Subject != tc.subject || name != tc.fromName || addr != tc.fromAddr {
			t.Errorf("uid %d: subject %q from %q <%s>, want %q from %q <%s>", s.UID, s.Subject, name, addr, tc.subject, tc.fromName, tc.fromAddr)
		}
	}
	if len(sums[4].Cc) != 1 || sums[4].InReplyTo != "lunch-1@example.org" || sums[4].Date.IsZero() {
		t.Errorf("reply summary = %+v", sums[4])
	}
	if len(sums[4].Flags) != 0 {
		t.Errorf("a message in new/ has flags %v, want none (unseen)", sums[4].Flags)
	}
}

func TestMaildirIsReadOnly(t *testing.T) {
	root := copyMaildir(t)
	md, _ := NewMaildir("home", root)
	ctx := context.Background()
	for name, err := range map[string]error{
		"SetFlags": md.SetFlags(ctx, "INBOX", 0, []uint32{1}, []string{Seen}, true),
		"Move":     md.Move(ctx, "INBOX", 0, []uint32{1}, "Archive"),
		"Append": func() error {
			_, err := md.Append(ctx, "INBOX", []byte("Subject: x\r\n\r\n"), nil, time.Time{})
			return err
		}(),
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: %v, want ErrReadOnly", name, err)
		}
	}
	raw, trunc, err := md.Raw(ctx, "INBOX", 0, 2, 40)
	if err != nil || !trunc || len(raw) != 40 {
		t.Fatalf("Raw capped = %d bytes, truncated %v, %v", len(raw), trunc, err)
	}
	if _, _, err := md.Raw(ctx, "INBOX", 0, 99, 40); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("Raw of a missing UID: %v", err)
	}
}
