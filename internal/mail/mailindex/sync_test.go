package mailindex

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index"
	"github.com/tidings-mcp/tidings/internal/mail"
	"github.com/tidings-mcp/tidings/internal/mail/mailtest"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

var own = []string{"me@example.org"}

type blockPolicy map[string]bool

func (p blockPolicy) AllowConversation(c model.Conversation) bool {
	for _, x := range c.Participants {
		if p[x] {
			return false
		}
	}
	return !p[c.Identifier]
}

func openIndex(t testing.TB, pol index.Policy) *index.Index {
	t.Helper()
	now := testclock.Anchor()
	ix, err := index.Open(context.Background(), t.TempDir()+"/index.db", index.Options{Policy: pol, Now: func() time.Time { return now }, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func msg(i int, from string, flags ...string) mailtest.Message {
	return mailtest.Message{Summary: mail.Summary{
		Date: testclock.Anchor().Add(-time.Duration(i) * time.Hour), Subject: fmt.Sprintf("message %d about walrus", i),
		From: []mail.Address{{Name: "Sender " + fmt.Sprint(i), Addr: from}}, To: []mail.Address{{Addr: "me@example.org"}},
		MessageID: fmt.Sprintf("<m%d@example.com>", i), Flags: flags,
	}, Text: fmt.Sprintf("body %d mentions the walrus", i)}
}

// serverState is every message of the fake as "Mailbox/UID flags", sorted.
func serverState(t testing.TB, b *mailtest.Backend) []string {
	t.Helper()
	ctx := context.Background()
	boxes, err := b.Mailboxes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mb := range boxes {
		uids, _ := b.UIDs(ctx, mb.Path, 0)
		sums, _ := b.Summaries(ctx, mb.Path, 0, uids)
		for _, s := range sums {
			fl := slices.Clone(s.Flags)
			slices.Sort(fl)
			out = append(out, fmt.Sprintf("%s/%d %s", mb.Path, s.UID, strings.Join(fl, " ")))
		}
	}
	sort.Strings(out)
	return out
}

// indexState is the index's copy in serverState's form.
func indexState(t testing.TB, ix *index.Index) []string {
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
			fl := slices.Clone(f.Flags)
			slices.Sort(fl)
			out = append(out, fmt.Sprintf("%s/%d %s", mb.Path, f.UID, strings.Join(fl, " ")))
		}
	}
	sort.Strings(out)
	return out
}

func mustSync(t testing.TB, ix *index.Index, b *mailtest.Backend, o Options) Stats {
	t.Helper()
	if o.Own == nil {
		o.Own = own
	}
	st, err := Sync(context.Background(), ix, b, o)
	if err != nil {
		t.Fatal(err)
	}
	if b.Writes != 0 {
		t.Fatalf("the sync wrote to the server %d times", b.Writes)
	}
	return st
}

func sameState(t *testing.T, ix *index.Index, b *mailtest.Backend, when string) {
	t.Helper()
	if got, want := indexState(t, ix), serverState(t, b); !slices.Equal(got, want) {
		t.Fatalf("%s: index %d messages, server %d\nindex:  %q\nserver: %q", when, len(got), len(want), got, want)
	}
}

// The index follows every change a server can make — new mail, flag
// changes (with and without CONDSTORE), moves, expunges, a UIDVALIDITY
// change, a deleted mailbox — and never writes to the server.
func TestSyncFollowsEveryServerChange(t *testing.T) {
	for _, condStore := range []bool{true, false} {
		t.Run(fmt.Sprintf("condstore=%v", condStore), func(t *testing.T) {
			ix := openIndex(t, nil)
			b := mailtest.New("Work", condStore)
			b.AddMailbox("INBOX", 11)
			b.AddMailbox("Archive", 12)
			for i := range 40 {
				b.Add("INBOX", msg(i, "alice@example.com"))
			}
			var progress []Progress
			st := mustSync(t, ix, b, Options{Batch: 7, Progress: func(p Progress) { progress = append(progress, p) }})
			if st.New != 40 || len(progress) == 0 || !progress[len(progress)-1].First || progress[len(progress)-1].Done != 40 {
				t.Fatalf("first sync: %+v, progress %+v", st, progress)
			}
			sameState(t, ix, b, "first sync")

			for u := uint32(1); u <= 10; u++ {
				b.SetFlagsServer("INBOX", u, []string{mail.Seen, mail.Flagged})
			}
			b.MoveServer("INBOX", "Archive", 11, 12, 13, 14, 15)
			b.Expunge("INBOX", 16, 17, 18, 19, 20)
			for i := 40; i < 43; i++ {
				b.Add("INBOX", msg(i, "bob@example.com"))
			}
			progress = nil
			st = mustSync(t, ix, b, Options{Progress: func(p Progress) { progress = append(progress, p) }})
			if st.Flags != 10 || st.Deleted != 10 || st.New != 8 {
				t.Fatalf("re-sync: %+v", st)
			}
			for _, p := range progress {
				if p.First && p.Mailbox == "INBOX" {
					t.Fatalf("a re-sync reported as first: %+v", p)
				}
			}
			sameState(t, ix, b, "after flags, moves and expunges")

			// Nothing changed: nothing done.
			if st := mustSync(t, ix, b, Options{}); st.New+st.Flags+st.Deleted+st.Reset != 0 {
				t.Fatalf("idle re-sync: %+v", st)
			}

			b.Renumber("INBOX", 99)
			if st := mustSync(t, ix, b, Options{}); st.Reset != 1 {
				t.Fatalf("after a UIDVALIDITY change: %+v", st)
			}
			sameState(t, ix, b, "after a UIDVALIDITY change")

			b.DeleteMailbox("Archive")
			if st := mustSync(t, ix, b, Options{}); st.Dropped != 1 {
				t.Fatalf("after deleting a mailbox: %+v", st)
			}
			sameState(t, ix, b, "after deleting a mailbox")
		})
	}
}

// A sync cut short at any read — a crash, a cancelled context, a dropped
// connection — loses nothing and duplicates nothing: the next sync ends
// with exactly the server's messages.
func TestSyncCutShortLosesAndDuplicatesNothing(t *testing.T) {
	for _, cut := range []struct {
		op string
		n  int
	}{{"Raw", 1}, {"Raw", 12}, {"Raw", 29}, {"Summaries", 2}, {"UIDs", 2}, {"FlagsSince", 1}} {
		t.Run(fmt.Sprintf("%s#%d", cut.op, cut.n), func(t *testing.T) {
			ix := openIndex(t, nil)
			b := mailtest.New("Work", true)
			b.AddMailbox("INBOX", 5)
			for i := range 30 {
				b.Add("INBOX", msg(i, "alice@example.com"))
			}
			b.Add("Other", msg(100, "carol@example.com"))
			if cut.op == "FlagsSince" || cut.op == "UIDs" && cut.n > 1 {
				mustSync(t, ix, b, Options{Batch: 4})
				b.SetFlagsServer("INBOX", 3, []string{mail.Seen})
				b.Expunge("INBOX", 4)
				b.Add("INBOX", msg(31, "alice@example.com"))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls := 0
			b.Hook = func(op string) error {
				if op == cut.op {
					if calls++; calls == cut.n {
						cancel()
						return context.Canceled
					}
				}
				return nil
			}
			if _, err := Sync(ctx, ix, b, Options{Own: own, Batch: 4}); !errors.Is(err, context.Canceled) {
				t.Fatalf("the cut sync returned %v", err)
			}
			b.Hook = nil
			mustSync(t, ix, b, Options{Batch: 4})
			sameState(t, ix, b, "after the cut sync was run again")
		})
	}
}

// A blocked person's mail is never downloaded, stored or shown: its body
// is not fetched (Raw is called only for allowed mail) and the index
// holds none of it.
func TestSyncNeverFetchesABlockedPersonsMail(t *testing.T) {
	ix := openIndex(t, blockPolicy{"mallory@evil.example": true})
	b := mailtest.New("Work", true)
	for i := range 6 {
		from := "alice@example.com"
		if i%2 == 0 {
			from = "mallory@evil.example"
		}
		b.Add("INBOX", msg(i, from))
	}
	st := mustSync(t, ix, b, Options{})
	if st.New != 3 || st.Blocked != 3 || b.Calls["Raw"] != 3 {
		t.Fatalf("stats %+v, Raw calls %d", st, b.Calls["Raw"])
	}
	r, err := ix.MailSearch(context.Background(), index.MailQuery{Text: "walrus"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range r.Hits {
		if strings.Contains(h.From.Addr, "mallory") {
			t.Fatalf("a blocked sender's mail is found: %+v", h)
		}
	}
	if len(r.Hits) != 3 {
		t.Fatalf("%d hits", len(r.Hits))
	}
	// The next sync does not fetch them either.
	mustSync(t, ix, b, Options{})
	if b.Calls["Raw"] != 3 {
		t.Fatalf("Raw calls %d after a re-sync", b.Calls["Raw"])
	}
}

// ProgressLine reports first syncs only, and ends a mailbox's line when
// it is done.
func TestProgressLineDrawsFirstSyncsOnly(t *testing.T) {
	var b strings.Builder
	p := ProgressLine(&b)
	p(Progress{Account: "Work", Mailbox: "INBOX", Done: 12000, Total: 12000, First: true})
	p(Progress{Account: "Work", Mailbox: "Sent", Done: 5, Total: 5})
	if got, want := b.String(), "\rmail Work/INBOX: 12,000/12,000 messages\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
