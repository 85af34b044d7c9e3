package dossier

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/demo"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
	"github.com/tidings-mcp/tidings/internal/testfixture"
)

// TestDemoDossiers builds dossiers from the demo data set (read back
// through the iMessage reader, filler included) and checks them against
// the scripted storylines' facts, written independently of the extractor.
func TestDemoDossiers(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the demo data set")
	}
	ctx := context.Background()
	now := testclock.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	r, res := testfixture.Demo(t, now)
	convs, err := r.Conversations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The feed: every message of the direct conversations with a handle.
	direct := map[string]string{} // conversation id -> handle
	for _, c := range convs {
		if c.Kind == model.KindDirect && len(c.Participants) == 1 {
			direct[c.ID] = c.Participants[0]
		}
	}
	byHandle := map[string][]Message{}
	err = r.Messages(ctx, 0, func(m model.Message) error {
		for _, cid := range m.ConversationIDs {
			if h, ok := direct[cid]; ok {
				byHandle[h] = append(byHandle[h], Message{ID: m.ID, ConversationID: cid, Time: m.Time, FromMe: m.FromMe, Sender: m.Sender,
					Service: m.Service, Kind: m.Kind, Text: m.Text, Error: m.Error, Unsent: m.Unsent, ReplyTo: m.ReplyTo, App: m.App})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	loc := time.FixedZone("PST", -8*3600)
	story := map[string]demo.Story{}
	for _, s := range res.Stories {
		story[s.ID] = s
	}
	guid := func(storyID, prefix string) string {
		for _, m := range story[storyID].Messages {
			if strings.HasPrefix(m.Text, prefix) {
				return m.GUID
			}
		}
		t.Fatalf("story %s has no message %q", storyID, prefix)
		return ""
	}
	report := func(handle string) Report {
		var p demo.Person
		for _, x := range demo.People() {
			if x.Handle() == handle {
				p = x
			}
		}
		d := Build(Subject{Key: "demo:" + handle, Name: p.Name(), Handles: []string{handle}}, byHandle[handle], Options{Location: loc, OwnerNames: []string{"Alex"}})
		rep := d.Report(now)
		t.Logf("%s: %d messages, %d active, %d past, %d resolved commitments, %d quarters, topics %v", p.Name(), rep.Messages,
			len(rep.Active), len(rep.Past), len(rep.Resolved), len(rep.History.Quarters), topicTerms3(rep.History.Topics))
		return rep
	}
	find := func(cs []Commitment, src string) *Commitment {
		for i := range cs {
			if slices.Contains(cs[i].Sources, src) {
				return &cs[i]
			}
		}
		return nil
	}

	sam := report("+14155550134")
	owe, paid := guid("sam-owes-40", "btw you still owe me $40"), guid("sam-owes-40", "sent! venmo'd you $40")
	if c := find(sam.Resolved, owe); c == nil || c.Kind != KindDebt || c.Owner != "them" || c.Amount == nil || c.Amount.Cents != 4000 ||
		!slices.Contains(c.ResolvedBy, paid) {
		t.Errorf("Sam's $40: %+v", c)
	}
	jordan := report("+14155550147")
	book := guid("thursday-dinner", "can you bring the book")
	if c := find(jordan.Active, book); c == nil || c.Owner != "me" || !c.Accepted || c.Due == nil || c.Due.Start.In(loc).Weekday() != time.Thursday {
		t.Errorf("Jordan's book: %+v", c)
	}
	booked := guid("thursday-dinner", "booked Marufuku")
	if c := find(jordan.Active, booked); c == nil || c.Kind != KindPlan || c.Due == nil || c.Due.Start.In(loc).Hour() != 20 {
		t.Errorf("dinner with Jordan: %+v", c)
	}
	mom := report("+16175550192")
	if c := find(mom.Active, guid("mom-questions", "Call me when you can")); c == nil || c.Kind != KindRequest || c.Owner != "me" {
		t.Errorf("Mom's call request: %+v", c)
	}
	priya := report("priya.shah@northwind.example")
	if c := find(slices.Concat(priya.Active, priya.Past, priya.Resolved), guid("work-deadline", "Morning! Heads up")); c == nil || c.Owner != "me" || !c.Accepted {
		t.Errorf("Priya's slides: %+v", c)
	}
	lukas := report("+493023125467")
	if c := find(lukas.Active, guid("lukas-visit", "Hey! I'll be in San Francisco")); c == nil || c.Kind != KindPlan || c.Due == nil || c.Due.Start.In(loc).Day() != 20 {
		t.Errorf("coffee with Lukas: %+v", c)
	}
}

func topicTerms3(ts []TopicView) []string {
	var out []string
	for i, tp := range ts {
		if i == 3 {
			break
		}
		out = append(out, tp.Term)
	}
	return out
}
