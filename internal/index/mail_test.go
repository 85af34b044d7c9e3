package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// personPolicy blocks a thread when any member (or its identifier) is
// blocked, like policy.Policy in blocklist mode.
type personPolicy struct {
	mu      sync.Mutex
	blocked map[string]bool
}

func (p *personPolicy) AllowConversation(c model.Conversation) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.blocked[c.Identifier] {
		return false
	}
	for _, x := range c.Participants {
		if p.blocked[x] {
			return false
		}
	}
	return true
}

// recordingEmbedder is a hashEmbedder that keeps every text it was given.
type recordingEmbedder struct {
	hashEmbedder
	mu    sync.Mutex
	texts []string
}

func (r *recordingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.texts = append(r.texts, texts...)
	r.mu.Unlock()
	return r.hashEmbedder.Embed(ctx, texts)
}

var mailOwn = []string{"me@example.org"}

func mailMsg(uid uint32, from, subject, text string, at time.Time, flags ...string) MailMessage {
	return MailMessage{UID: uid, MessageID: "<" + subject + ">", Date: at, Subject: subject,
		From: []MailAddress{{Name: strings.Split(from, "@")[0], Addr: from}}, To: []MailAddress{{Addr: "me@example.org"}},
		Flags: flags, Text: text}
}

func mailBox(t *testing.T, ix *Index, account, path string) MailMailbox {
	t.Helper()
	b, err := ix.MailResetMailbox(context.Background(), account, path, 7)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mailPut(t *testing.T, ix *Index, b MailMailbox, msgs ...MailMessage) MailPutStats {
	t.Helper()
	var last uint32
	for _, m := range msgs {
		last = max(last, m.UID)
	}
	st, err := ix.MailPut(context.Background(), b, msgs, last, mailOwn)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func mailSubjects(r *MailResult) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Subject)
	}
	return out
}

func mustMailSearch(t *testing.T, ix *Index, q MailQuery) *MailResult {
	t.Helper()
	r, err := ix.MailSearch(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func countRows(t *testing.T, ix *Index, q string, args ...any) int {
	t.Helper()
	var n int
	if err := ix.rdb.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A blocked person's mail — as sender, in Cc, or as Reply-To — never
// reaches the index: no row, no FTS entry, no vector, and it is not
// passed to the embedder.
func TestMailOfABlockedPersonIsNeverIndexed(t *testing.T) {
	pol := &personPolicy{blocked: map[string]bool{"mallory@evil.example": true}}
	emb := &recordingEmbedder{hashEmbedder: hashEmbedder{id: "h", dim: 64}}
	ix := openTest(t, t.TempDir(), Options{Policy: pol, Embedder: emb})
	b := mailBox(t, ix, "Work", "INBOX")
	day := testNow.Add(-24 * time.Hour)
	fromBlocked := mailMsg(1, "mallory@evil.example", "zebrafish invoice", "zebrafish secret plan", day)
	ccBlocked := mailMsg(2, "alice@example.com", "zebrafish lunch", "zebrafish with mallory", day)
	ccBlocked.Cc = []MailAddress{{Addr: "Mallory@Evil.example"}}
	replyBlocked := mailMsg(3, "alice@example.com", "zebrafish reply", "zebrafish reply body", day)
	replyBlocked.ReplyTo = []MailAddress{{Addr: "mallory@evil.example"}}
	ok := mailMsg(4, "alice@example.com", "zebrafish notes", "zebrafish notes body", day)
	st := mailPut(t, ix, b, fromBlocked, ccBlocked, replyBlocked, ok)
	if st.Stored != 1 || st.Blocked != 3 {
		t.Fatalf("stats %+v, want 1 stored and 3 blocked", st)
	}
	if n := countRows(t, ix, "SELECT count(*) FROM mail_messages WHERE people LIKE '%mallory%' OR subject != 'zebrafish notes'"); n != 0 {
		t.Fatalf("%d rows of a blocked person's mail in mail_messages", n)
	}
	if n := countRows(t, ix, "SELECT count(*) FROM mail_fts WHERE mail_fts MATCH 'mallory OR plan OR invoice OR lunch OR reply'"); n != 0 {
		t.Fatalf("%d FTS rows of a blocked person's mail", n)
	}
	if n := countRows(t, ix, "SELECT count(*) FROM mail_vectors"); n != 1 {
		t.Fatalf("%d vectors, want 1", n)
	}
	for _, s := range emb.texts {
		if strings.Contains(s, "plan") || strings.Contains(s, "lunch") || strings.Contains(s, "reply") {
			t.Fatalf("the embedder saw a blocked person's mail: %q", s)
		}
	}
	if got := mailSubjects(mustMailSearch(t, ix, MailQuery{Text: "zebrafish"})); !slices.Equal(got, []string{"zebrafish notes"}) {
		t.Fatalf("search: %q", got)
	}
	// Blocked after it was synced: hidden at once, removed by
	// MailApplyPolicy.
	pol.mu.Lock()
	pol.blocked["alice@example.com"] = true
	pol.mu.Unlock()
	r := mustMailSearch(t, ix, MailQuery{Text: "zebrafish"})
	if len(r.Hits) != 0 || r.Hidden != 1 {
		t.Fatalf("after blocking alice: hits %q hidden %d", mailSubjects(r), r.Hidden)
	}
	if n, err := ix.MailApplyPolicy(context.Background()); err != nil || n != 1 {
		t.Fatalf("MailApplyPolicy = %d, %v", n, err)
	}
	if n := countRows(t, ix, "SELECT count(*) FROM mail_messages") + countRows(t, ix, "SELECT count(*) FROM mail_vectors") +
		countRows(t, ix, "SELECT count(*) FROM mail_fts WHERE mail_fts MATCH 'zebrafish'"); n != 0 {
		t.Fatalf("%d rows left after MailApplyPolicy", n)
	}
}

// Secrets in mail (a 2FA code, a card number) are blanked before the
// full-text index, the stored body and the embedder see them: searching
// for the code finds nothing, and the snippet has no digits of it.
func TestMailSecretsNeverReachFTSOrVectors(t *testing.T) {
	emb := &recordingEmbedder{hashEmbedder: hashEmbedder{id: "h", dim: 64}}
	ix := openTest(t, t.TempDir(), Options{Embedder: emb})
	b := mailBox(t, ix, "Work", "INBOX")
	day := testNow.Add(-time.Hour)
	mailPut(t, ix, b,
		mailMsg(1, "noreply@bank.example", "Your verification code is 482913", "Your verification code is 482913. It expires in 10 minutes.", day),
		mailMsg(2, "shop@store.example", "Receipt", "Paid with card 4111 1111 1111 1111 thanks", day))
	for _, secret := range []string{"482913", "4111"} {
		if n := countRows(t, ix, "SELECT count(*) FROM mail_fts WHERE mail_fts MATCH ?", `"`+secret+`"`); n != 0 {
			t.Errorf("%s is in the FTS index", secret)
		}
		if n := countRows(t, ix, "SELECT count(*) FROM mail_messages WHERE ibody LIKE ? OR isubject LIKE ? OR ipeople LIKE ?", "%"+secret+"%", "%"+secret+"%", "%"+secret+"%"); n != 0 {
			t.Errorf("%s is stored in an indexed column", secret)
		}
		for _, s := range emb.texts {
			if strings.Contains(s, secret) {
				t.Errorf("the embedder saw %s: %q", secret, s)
			}
		}
		r := mustMailSearch(t, ix, MailQuery{Text: secret})
		for _, h := range r.Hits {
			if strings.Contains(h.Snippet, secret) {
				t.Errorf("snippet shows %s: %q", secret, h.Snippet)
			}
		}
		if hits := mustMailSearch(t, ix, MailQuery{Text: secret, Mode: ModeFulltext}).Hits; len(hits) != 0 {
			t.Errorf("a full-text search for %s finds mail: %+v", secret, hits)
		}
	}
	// The words around the code are still found.
	if got := mailSubjects(mustMailSearch(t, ix, MailQuery{Text: "verification", Mode: ModeFulltext})); len(got) != 1 {
		t.Fatalf("verification: %q", got)
	}
}

// The filters (mailbox, from, date range, unread) combine with AND, in
// every mode, and a query-less search lists newest first.
func TestMailSearchFiltersCombine(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{Embedder: &hashEmbedder{id: "h", dim: 64}})
	inbox, arch := mailBox(t, ix, "Work", "INBOX"), mailBox(t, ix, "Home", "Archive")
	d := func(days int) time.Time { return testNow.Add(-time.Duration(days) * 24 * time.Hour) }
	mailPut(t, ix, inbox,
		mailMsg(1, "alice@example.com", "budget review", "the budget for next year", d(1)),
		mailMsg(2, "bob@example.com", "budget numbers", "budget spreadsheet attached", d(10), `\Seen`),
		mailMsg(3, "alice@example.com", "holiday", "beach plans", d(3), `\Seen`))
	mailPut(t, ix, arch, mailMsg(1, "alice@example.com", "old budget", "budget of last year", d(400), `\Seen`))
	yes, no := true, false
	for _, tc := range []struct {
		name string
		q    MailQuery
		want []string
	}{
		{"all budget mail", MailQuery{Text: "budget", Mode: ModeFulltext}, []string{"budget numbers", "budget review", "old budget"}},
		{"one mailbox", MailQuery{Text: "budget", Mailboxes: []int64{arch.ID}}, []string{"old budget"}},
		{"no mailbox", MailQuery{Text: "budget", Mailboxes: []int64{}}, nil},
		{"from by name part", MailQuery{Text: "budget", From: "ALICE"}, []string{"budget review", "old budget"}},
		{"date range", MailQuery{Text: "budget", Since: d(30), Until: d(5)}, []string{"budget numbers"}},
		{"unread", MailQuery{Text: "budget", Unread: &yes}, []string{"budget review"}},
		{"read", MailQuery{Text: "budget", Unread: &no, Since: d(30)}, []string{"budget numbers"}},
		{"browse newest first", MailQuery{From: "alice"}, []string{"budget review", "holiday", "old budget"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mailSubjects(mustMailSearch(t, ix, tc.q))
			if tc.q.Text != "" {
				slices.Sort(got)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	r := mustMailSearch(t, ix, MailQuery{Text: "budget", From: "bob"})
	if len(r.Hits) != 1 || r.Hits[0].Account != "Work" || r.Hits[0].Mailbox != "INBOX" || r.Hits[0].UID != 2 || r.Hits[0].Unread ||
		r.Hits[0].From.Addr != "bob@example.com" || !strings.Contains(r.Hits[0].Snippet, "**budget**") {
		t.Fatalf("hit %+v", r.Hits)
	}
}

// Storing a batch twice (a sync re-run after a crash) stores nothing
// twice; a UIDVALIDITY reset drops the mailbox's rows with their FTS and
// vector entries.
func TestMailPutIsIdempotentAndResetDropsEverything(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{Embedder: &hashEmbedder{id: "h", dim: 64}})
	b := mailBox(t, ix, "Work", "INBOX")
	msgs := []MailMessage{mailMsg(1, "a@example.com", "one", "kiwi", testNow), mailMsg(2, "a@example.com", "two", "kiwi", testNow)}
	mailPut(t, ix, b, msgs...)
	if st := mailPut(t, ix, b, msgs...); st.Stored != 0 {
		t.Fatalf("second put stored %d", st.Stored)
	}
	if n := countRows(t, ix, "SELECT count(*) FROM mail_messages"); n != 2 {
		t.Fatalf("%d rows", n)
	}
	if _, err := ix.MailResetMailbox(context.Background(), "Work", "INBOX", 8); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, ix, "SELECT count(*) FROM mail_messages") + countRows(t, ix, "SELECT count(*) FROM mail_vectors") +
		countRows(t, ix, "SELECT count(*) FROM mail_fts WHERE mail_fts MATCH 'kiwi'"); n != 0 {
		t.Fatalf("%d rows left after a UIDVALIDITY reset", n)
	}
	// A batch computed for the old UIDVALIDITY is refused.
	if _, err := ix.MailPut(context.Background(), b, msgs, 2, mailOwn); err == nil {
		t.Fatal("a batch for a reset mailbox was stored")
	}
}

// MailWith returns only 1:1 mail with the person (to or from them, not a
// thread with others), after the cursor time, oldest first, and says who
// sent it.
func TestMailWithIsOneToOneMailOnly(t *testing.T) {
	ix := openTest(t, t.TempDir(), Options{})
	b := mailBox(t, ix, "Work", "INBOX")
	sent := mailBox(t, ix, "Work", "Sent")
	d := func(h int) time.Time { return testNow.Add(-time.Duration(h) * time.Hour) }
	group := mailMsg(2, "dana@example.com", "team", "with others", d(5))
	group.Cc = []MailAddress{{Addr: "eve@example.com"}}
	mailPut(t, ix, b, mailMsg(1, "Dana@Example.com", "contract", "I will send the contract by Friday", d(10)), group,
		mailMsg(3, "eve@example.com", "other", "not dana", d(4)))
	reply := mailMsg(1, "me@example.org", "re: contract", "thanks", d(3))
	reply.To = []MailAddress{{Addr: "dana@example.com"}}
	mailPut(t, ix, sent, reply)
	ev, err := ix.MailWith(context.Background(), []string{"dana@example.com", "+14155550000"}, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ev {
		got = append(got, fmt.Sprintf("%s %v %s", e.ID, e.FromMe, e.From))
	}
	want := []string{"mail:Work/INBOX#1 false dana@example.com", "mail:Work/Sent#1 true "}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if ev, _ := ix.MailWith(context.Background(), []string{"dana@example.com"}, d(5), 0); len(ev) != 1 || !ev[0].FromMe {
		t.Fatalf("after a cursor: %+v", ev)
	}
}

// ApplyPolicy (what a policy change runs) also purges the mail of a
// person blocked after it was synced, and leaves no trace of its text in
// the database file (FTS segments merged, freed pages zeroed).
func TestApplyPolicyPurgesMailWithoutATrace(t *testing.T) {
	const word = "Quaggamailword"
	pol := &personPolicy{blocked: map[string]bool{}}
	dir := t.TempDir()
	ix := openTest(t, dir, Options{Policy: pol, Embedder: &hashEmbedder{id: "h", dim: 64}})
	b := mailBox(t, ix, "Work", "INBOX")
	mailPut(t, ix, b, mailMsg(1, "zoe@example.com", "plans "+word, "the "+word+" plan", testNow.Add(-time.Hour)),
		mailMsg(2, "amy@example.com", "other", "kept", testNow.Add(-time.Hour)))
	pol.mu.Lock()
	pol.blocked["zoe@example.com"] = true
	pol.mu.Unlock()
	if _, err := ix.ApplyPolicy(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, ix, "SELECT count(*) FROM mail_messages"); n != 1 {
		t.Fatalf("%d mail rows after ApplyPolicy, want 1", n)
	}
	ix.Close()
	for _, p := range []string{"index.db", "index.db-wal"} {
		raw, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, s := range []string{word, strings.ToLower(word)} {
			if strings.Contains(string(raw), s) {
				t.Errorf("%s still holds %q", p, s)
			}
		}
	}
}
