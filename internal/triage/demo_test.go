package triage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/contacts"
	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
	"github.com/tidings-mcp/tidings/internal/testfixture"
)

// demoThreads generates the demo data set, reads it back through the
// iMessage reader and builds triage threads the way the service layer
// does (contacts resolve names; messages since `since`).
func demoThreads(t *testing.T, now, since time.Time) ([]Thread, *demo.Result) {
	t.Helper()
	ctx := context.Background()
	r, res := testfixture.Demo(t, now)
	cards, err := contacts.ReadVCardFile(res.Contacts)
	if err != nil {
		t.Fatal(err)
	}
	book, err := contacts.NewBook(cards, "US")
	if err != nil {
		t.Fatal(err)
	}
	convs, err := r.Conversations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Thread{}
	var order []string
	for _, c := range convs {
		th := &Thread{ChatID: c.Identifier, Kind: c.Kind, DisplayName: c.DisplayName, ParticipantCount: len(c.Participants)}
		var names []string
		for _, h := range c.Participants {
			name := book.DisplayName(h)
			th.Participants = append(th.Participants, Participant{Handle: h, Name: name})
			names = append(names, name)
		}
		if c.Kind == model.KindDirect && len(c.Participants) == 1 {
			_, th.Known = book.Resolve(c.Participants[0])
			th.ContactName = names[0]
			_, th.SenderKind = contacts.Normalize(c.Participants[0], "US")
		}
		th.Label = th.DisplayName
		if th.Label == "" {
			th.Label = strings.Join(slices.DeleteFunc(names, func(s string) bool { return s == "" }), ", ")
		}
		byID[c.ID] = th
		order = append(order, c.ID)
	}
	err = r.Messages(ctx, 0, func(m model.Message) error {
		if m.Time.Before(since) || m.Time.After(now) {
			return nil
		}
		for _, cid := range m.ConversationIDs {
			th := byID[cid]
			if th == nil {
				continue
			}
			tm := Message{ID: m.ID, Time: m.Time, FromMe: m.FromMe, Sender: m.Sender, Kind: m.Kind, Text: m.Text,
				Error: m.Error, Unsent: m.Unsent, ReplyTo: m.ReplyTo, Runs: m.Runs, Attachments: len(m.Attachments), Reaction: m.Reaction}
			th.Messages = append(th.Messages, tm)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []Thread
	for _, id := range order {
		th := byID[id]
		slices.SortStableFunc(th.Messages, func(a, b Message) int { return a.Time.Compare(b.Time) })
		if len(th.Messages) > 0 {
			out = append(out, *th)
		}
	}
	return out, res
}

// TestDemoStories checks the classifier against the demo's scripted
// storylines, whose "awaits a reply" flags were written independently of
// it, and prints the review of the whole demo window with -v.
func TestDemoStories(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the demo data set")
	}
	now := testclock.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	const days = 7
	threads, res := demoThreads(t, now, now.AddDate(0, 0, -30))
	owner := Owner{Handles: []string{demo.Owner.Phone, demo.Owner.Email}, Names: []string{demo.Owner.First}}
	opts := Options{Now: now, Owner: owner}

	// Story threads: the last story message decides what the thread looks
	// like; filler may follow in the same thread, so each story is
	// classified on its own messages (plus reactions) only.
	var agree, total int
	for _, st := range res.Stories {
		var th *Thread
		for i := range threads {
			for _, m := range threads[i].Messages {
				if slices.ContainsFunc(st.Messages, func(sm demo.StoryMessage) bool { return sm.GUID == m.ID }) {
					th = &threads[i]
				}
			}
			if th != nil {
				break
			}
		}
		if th == nil {
			t.Errorf("story %s: thread not found", st.ID)
			continue
		}
		sub := *th
		sub.Messages = nil
		guids := map[string]bool{}
		for _, sm := range st.Messages {
			guids[sm.GUID] = true
		}
		for _, m := range th.Messages {
			if guids[m.ID] || m.Reaction != nil && guids[m.Reaction.Target] {
				sub.Messages = append(sub.Messages, m)
			}
		}
		d := Classify(&sub, opts)
		want := "not needs_reply"
		if st.NeedsReply {
			want = "needs_reply"
		}
		ok := (d.Bucket == NeedsReply) == st.NeedsReply
		total++
		if ok {
			agree++
		}
		pend := ""
		if st.NeedsReply {
			missing := 0
			for _, a := range st.Awaiting {
				if !slices.Contains(d.Pending, a) {
					missing++
				}
			}
			pend = fmt.Sprintf(" (awaiting %d, pending cites %d of them)", len(st.Awaiting), len(st.Awaiting)-missing)
		}
		t.Logf("%-16s want %-16s got %-12s %s%s", st.ID, want, d.Bucket, strings.Join(d.Reasons, "; "), pend)
		if !ok {
			t.Errorf("story %s: got %s, want %s", st.ID, d.Bucket, want)
		}
	}
	t.Logf("demo storylines: %d/%d agree on needs_reply", agree, total)

	rep := Review(threads, ReviewOptions{Options: opts, Days: days})
	naive := 0
	since := now.AddDate(0, 0, -days)
	for i := range threads {
		if slices.ContainsFunc(threads[i].Messages, func(m Message) bool { return m.Time.After(since) }) && Naive(&threads[i], Skip) == NeedsReply {
			naive++
		}
	}
	t.Logf("demo review, %d days: counts %+v; the naive rule would flag %d threads", days, rep.Counts, naive)
	for _, e := range rep.NeedsReply {
		t.Logf("  needs_reply  %-24s %.2f %s", e.Label, e.Score, e.Reasons[0])
	}
	for _, e := range rep.LowPriority {
		t.Logf("  low_priority %-24s %.2f %s", e.Label, e.Score, e.Reasons[0])
	}
	codes := map[Code]int{}
	for _, e := range rep.SkipSummary {
		codes[e.Reason]++
	}
	t.Logf("  skip by reason: %v", codes)
}
