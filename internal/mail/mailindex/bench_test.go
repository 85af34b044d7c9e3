package mailindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/embed"
	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mail"
	"github.com/tidings-mcp/tidings/internal/mail/mailtest"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

var benchWords = strings.Fields(`invoice meeting budget launch travel flight hotel receipt contract review deadline
	project report schedule dinner weekend family school doctor appointment payment order shipping delivery
	password account security update newsletter offer discount team quarterly planning design draft feedback
	photos birthday party concert tickets rent lease insurance claim refund subscription renewal conference`)

// synthMessage is a deterministic, varied message i.
func synthMessage(r *rand.Rand, i int) mailtest.Message {
	words := func(n int) string {
		w := make([]string, n)
		for k := range w {
			w[k] = benchWords[r.IntN(len(benchWords))]
		}
		return strings.Join(w, " ")
	}
	var flags []string
	if r.IntN(3) > 0 {
		flags = []string{mail.Seen}
	}
	return mailtest.Message{Summary: mail.Summary{
		Date:    testclock.Anchor().Add(-time.Duration(i) * 37 * time.Minute),
		Subject: fmt.Sprintf("%s %d", words(4), i),
		From:    []mail.Address{{Name: fmt.Sprintf("Person %d", i%300), Addr: fmt.Sprintf("p%d@example.com", i%300)}},
		To:      []mail.Address{{Addr: "me@example.org"}}, MessageID: fmt.Sprintf("<s%d@example.com>", i), Flags: flags,
	}, Text: words(60 + r.IntN(120))}
}

// TestMailSync10k is the measurement of docs/benchmarks.md ("Mail sync"):
// a 10,000-message mailbox through the in-memory backend (no real server:
// internal/mail's IMAP backend is built separately), with the built-in
// embedder. It asserts the index equals the server after the first sync
// and after each change (1,000 flag changes, 500 moves, 500 expunges);
// the timings are only logged. Run with TIDINGS_MAIL_BENCH=1 (about a
// minute).
func TestMailSync10k(t *testing.T) {
	if os.Getenv("TIDINGS_MAIL_BENCH") != "1" {
		t.Skip("measurement: set TIDINGS_MAIL_BENCH=1 to run it")
	}
	const n = 10000
	for _, condStore := range []bool{true, false} {
		t.Run(fmt.Sprintf("condstore=%v", condStore), func(t *testing.T) {
			emb, err := embed.New(embed.Config{Name: "builtin"})
			if err != nil {
				t.Fatal(err)
			}
			now := testclock.Anchor()
			ix, err := index.Open(context.Background(), t.TempDir()+"/index.db", index.Options{Embedder: emb, Now: func() time.Time { return now }, Location: time.UTC})
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			b := mailtest.New("Work", condStore)
			b.AddMailbox("INBOX", 1)
			b.AddMailbox("Archive", 2)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range n {
				b.Add("INBOX", synthMessage(r, i))
			}
			step := func(name string) {
				start := time.Now()
				st := mustSync(t, ix, b, Options{})
				el := time.Since(start)
				sameState(t, ix, b, name)
				t.Logf("%-28s %8.2fs  %+v", name, el.Seconds(), st)
			}
			step("first sync (10k)")
			step("idle re-sync")
			for u := uint32(1); u <= 1000; u++ {
				b.SetFlagsServer("INBOX", u*7, []string{mail.Seen, mail.Flagged})
			}
			step("re-sync, 1k flag changes")
			var move, del []uint32
			for u := uint32(1); u <= 500; u++ {
				move, del = append(move, u*13), append(del, u*13+5)
			}
			b.MoveServer("INBOX", "Archive", move...)
			step("re-sync, 500 moves")
			b.Expunge("INBOX", del...)
			step("re-sync, 500 deletes")
			for _, mode := range []index.Mode{index.ModeHybrid, index.ModeFulltext, index.ModeSemantic, index.ModeHybrid} {
				start := time.Now()
				res, err := ix.MailSearch(context.Background(), index.MailQuery{Text: "hotel refund", Mode: mode})
				if err != nil || len(res.Hits) == 0 {
					t.Fatalf("search: %v", err)
				}
				t.Logf("%-28s %8.3fs", "search "+string(res.Mode), time.Since(start).Seconds())
			}
		})
	}
}
