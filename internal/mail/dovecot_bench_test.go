package mail_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mail"
	"github.com/tidings-mcp/tidings/internal/mail/mailindex"
	"github.com/tidings-mcp/tidings/internal/mail/mailtest"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

var benchWords = strings.Fields(`invoice meeting budget launch travel flight hotel receipt contract review deadline
	project report schedule dinner weekend family school doctor appointment payment order shipping delivery
	password account security update newsletter offer discount team quarterly planning design draft feedback
	photos birthday party concert tickets rent lease insurance claim refund subscription renewal conference`)

// TestDovecotMailSync10k is the real-server measurement of
// docs/benchmarks.md ("Mail sync"): 10,000 generated messages written into
// a Dovecot Maildir folder, synced over IMAP (CONDSTORE) with the built-in
// embedder; then 1,000 flag changes and 500 moves over IMAP and 500
// expunges on disk, each followed by a re-sync. After every step the index
// must hold exactly the server's messages and flags; the timings are only
// logged. Run with TIDINGS_MAIL_BENCH=1 (a few minutes).
func TestDovecotMailSync10k(t *testing.T) {
	if os.Getenv("TIDINGS_MAIL_BENCH") != "1" {
		t.Skip("measurement: set TIDINGS_MAIL_BENCH=1 to run it")
	}
	const n = 10000
	b, maildir := mail.StartDovecotDir(t)
	ctx := context.Background()
	bench := filepath.Join(maildir, ".Bench")
	for _, d := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(bench, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	words := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = benchWords[r.IntN(len(benchWords))]
		}
		return strings.Join(w, " ")
	}
	for i := range n {
		flags := ""
		if r.IntN(3) > 0 {
			flags = "S"
		}
		raw := mailtest.Build(mailtest.Message{Summary: mail.Summary{
			Date:    testclock.Anchor().Add(-time.Duration(i) * 37 * time.Minute),
			Subject: fmt.Sprintf("%s %d", words(4), i),
			From:    []mail.Address{{Name: fmt.Sprintf("Person %d", i%300), Addr: fmt.Sprintf("p%d@example.com", i%300)}},
			To:      []mail.Address{{Addr: "me@example.com"}}, MessageID: fmt.Sprintf("<s%d@example.com>", i),
		}, Text: words(60 + r.IntN(120))})
		name := fmt.Sprintf("%d.M%dP1.bench:2,%s", 1764000000+i, i, flags)
		if err := os.WriteFile(filepath.Join(bench, "cur", name), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if os.Getuid() == 0 { // Dovecot runs the user as nobody (startDovecotDir)
		nobody, err := user.Lookup("nobody")
		if err != nil {
			t.Fatal(err)
		}
		uid, _ := strconv.Atoi(nobody.Uid)
		gid, _ := strconv.Atoi(nobody.Gid)
		if err := filepath.Walk(bench, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, gid)
		}); err != nil {
			t.Fatal(err)
		}
	}
	emb, err := embed.New(embed.Config{Name: "builtin"})
	if err != nil {
		t.Fatal(err)
	}
	now := testclock.Anchor()
	ix, err := index.Open(ctx, filepath.Join(t.TempDir(), "index.db"), index.Options{Embedder: emb, Now: func() time.Time { return now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	step := func(name string) {
		t.Helper()
		start := time.Now()
		st, err := mailindex.Sync(ctx, ix, b, mailindex.Options{Own: []string{"me@example.com"}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		el := time.Since(start)
		if got, want := indexState(t, ix), serverState(t, b); !slices.Equal(got, want) {
			t.Fatalf("%s: index %d messages, server %d", name, len(got), len(want))
		}
		t.Logf("%-28s %8s  %+v", name, el.Round(10*time.Millisecond), st)
	}
	step("first sync")
	step("idle re-sync")
	mb, err := b.Status(ctx, "Bench")
	if err != nil {
		t.Fatal(err)
	}
	uids, err := b.UIDs(ctx, "Bench", mb.UIDValidity)
	if err != nil || len(uids) != n {
		t.Fatalf("Bench holds %d UIDs: %v", len(uids), err)
	}
	if err := b.SetFlags(ctx, "Bench", mb.UIDValidity, uids[:1000], []string{mail.Flagged}, true); err != nil {
		t.Fatal(err)
	}
	step("1,000 flag changes")
	if err := b.Move(ctx, "Bench", mb.UIDValidity, uids[1000:1500], "Archive"); err != nil {
		t.Fatal(err)
	}
	step("500 moves")
	files, _ := filepath.Glob(filepath.Join(bench, "cur", "*"))
	sort.Strings(files)
	for _, f := range files[len(files)-500:] {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	step("500 expunges")
	for _, mode := range []index.Mode{index.ModeHybrid, index.ModeFulltext, index.ModeSemantic} {
		start := time.Now()
		if _, err := ix.MailSearch(ctx, index.MailQuery{Text: "hotel refund", Mode: mode}); err != nil {
			t.Fatal(err)
		}
		t.Logf("MailSearch %-9s %8s", mode, time.Since(start).Round(10*time.Millisecond))
	}
}

// serverState is every message on the server as "Mailbox/UID flags".
func serverState(t *testing.T, b mail.Backend) []string {
	t.Helper()
	ctx := context.Background()
	boxes, err := b.Mailboxes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mb := range boxes {
		uids, err := b.UIDs(ctx, mb.Path, mb.UIDValidity)
		if err != nil {
			t.Fatal(err)
		}
		sums, err := b.Summaries(ctx, mb.Path, mb.UIDValidity, uids)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sums {
			out = append(out, stateLine(mb.Path, s.UID, s.Flags))
		}
	}
	sort.Strings(out)
	return out
}

// indexState is the index's copy in serverState's form.
func indexState(t *testing.T, ix *index.Index) []string {
	t.Helper()
	boxes, err := ix.MailMailboxes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mb := range boxes {
		l, err := ix.MailStored(context.Background(), mb)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range l {
			out = append(out, stateLine(mb.Path, f.UID, f.Flags))
		}
	}
	sort.Strings(out)
	return out
}

func stateLine(path string, uid uint32, flags []string) string {
	var fl []string
	for _, f := range flags {
		if f != `\Recent` {
			fl = append(fl, f)
		}
	}
	slices.Sort(fl)
	return fmt.Sprintf("%s/%d %s", path, uid, strings.Join(fl, " "))
}
