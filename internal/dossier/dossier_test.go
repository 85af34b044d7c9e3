package dossier

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

var fillerTexts = []string{
	"how's the new apartment?", "so good, finally unpacked", "did you watch the game last night", "no, spoilers please",
	"lol", "ok see you then", "can you send me the recipe for that soup?", "sent!", "I'll call you tomorrow",
	"let's get coffee next week", "thursday?", "works for me", "you owe me $12 for the movie", "venmo'd you $12",
	"running late, 10 min", "no worries", "happy birthday!! 🎉", "thank you!!", "the lease renewal is coming up",
	"did you talk to the landlord about the lease?", "yes, renewal signed", "booked the cabin for the ski trip",
	"ski trip packing list?", "\ufffc", "👍", "never mind, found it", "can't make it tonight, rain check?",
	"I owe you $30 for the tickets", "paid you back", "let's do brunch on sunday", "see you sunday at 11",
}

// longHistory is a deterministic two-year history with every feature the
// fold keeps state for: quarters, topics pruning, sessions, commitments.
func longHistory(n int, seed uint64) []Message {
	r := rand.New(rand.NewPCG(seed, 7))
	t := testclock.Date(2024, 12, 1, 15, 0, 0, 0, time.UTC)
	msgs := make([]Message, 0, n)
	for i := 0; i < n; i++ {
		gap := time.Duration(r.IntN(600)) * time.Minute
		if r.IntN(10) == 0 {
			gap += time.Duration(r.IntN(96)) * time.Hour
		}
		t = t.Add(gap + time.Second)
		m := Message{ID: fmt.Sprintf("m%05d", i), ConversationID: "iMessage;-;+14155550134", Time: t, FromMe: r.IntN(2) == 0,
			Service: "iMessage", Text: fillerTexts[r.IntN(len(fillerTexts))]}
		if r.IntN(25) == 0 {
			m.Service, m.ConversationID = "SMS", "SMS;-;+14155550134"
		}
		if !m.FromMe {
			m.Sender = "+14155550134"
		}
		switch r.IntN(40) {
		case 0:
			m.Kind = model.MsgReaction
		case 1:
			m.Unsent = true
		case 2:
			if m.FromMe {
				m.Error = 22
			}
		case 3:
			m.Group, m.ConversationID = true, "iMessage;+;chat1"
		}
		if i > 0 && r.IntN(30) == 0 {
			m.ReplyTo = msgs[r.IntN(i)].ID
		}
		msgs = append(msgs, m)
	}
	return msgs
}

var sam = Subject{Key: "p-sam", Name: "Sam Rivera", Handles: []string{"+14155550134"}}

// TestIncrementalEqualsRebuild is the living-dossier property: folding
// messages in any number of batches, with the state stored as JSON and
// read back between batches, gives exactly the state a full build gives.
func TestIncrementalEqualsRebuild(t *testing.T) {
	opts := Options{Location: time.FixedZone("PST", -8*3600), OwnerNames: []string{"Alex"}}
	msgs := longHistory(3000, 1)
	full, err := Build(sam, msgs, opts).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("batches seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 99))
			d := New(sam, opts)
			for i := 0; i < len(msgs); {
				n := 1 + r.IntN(200)
				if r.IntN(5) == 0 {
					n = 1
				}
				end := min(i+n, len(msgs))
				batch := slices.Clone(msgs[i:end])
				r.Shuffle(len(batch), func(a, b int) { batch[a], batch[b] = batch[b], batch[a] })
				if err := d.Update(sam, batch, opts); err != nil {
					t.Fatalf("batch at %d: %v", i, err)
				}
				data, err := d.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				if d, err = Unmarshal(data); err != nil {
					t.Fatal(err)
				}
				i = end
			}
			got, _ := d.Marshal()
			if !bytes.Equal(got, full) {
				t.Fatalf("incremental state differs from the rebuild (%d vs %d bytes); first difference at byte %d", len(got), len(full), firstDiff(got, full))
			}
		})
	}
	// The history exercises what it should.
	d := Build(sam, msgs, opts)
	if len(d.Quarters) < 8 || len(d.Commitments) < 20 || d.LastSignificant == nil || len(d.State.Topics) == 0 {
		t.Errorf("history too thin: %d quarters, %d commitments, last significant %v, %d topics", len(d.Quarters), len(d.Commitments), d.LastSignificant != nil, len(d.State.Topics))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestUpdateRefusesOlderMessages(t *testing.T) {
	msgs := longHistory(50, 3)
	d := Build(sam, msgs[10:], Options{})
	before, _ := d.Marshal()
	err := d.Update(sam, msgs[:10], Options{})
	if !errors.Is(err, ErrRebuild) {
		t.Fatalf("got %v, want ErrRebuild", err)
	}
	after, _ := d.Marshal()
	if !bytes.Equal(before, after) {
		t.Error("a refused update changed the state")
	}
	if err := d.Update(sam, nil, Options{Location: time.FixedZone("X", 3600)}); !errors.Is(err, ErrRebuild) {
		t.Errorf("zone change: got %v, want ErrRebuild", err)
	}
	if err := d.Update(Subject{Key: "other"}, nil, Options{}); !errors.Is(err, ErrRebuild) {
		t.Errorf("subject change: got %v, want ErrRebuild", err)
	}
}

// TestEveryClaimCites checks that every id a report cites is a message of
// the history.
func TestEveryClaimCites(t *testing.T) {
	msgs := longHistory(2000, 5)
	ids := map[string]bool{}
	for _, m := range msgs {
		ids[m.ID] = true
	}
	d := Build(sam, msgs, Options{})
	rep := d.Report(msgs[len(msgs)-1].Time)
	var cited []string
	cite := func(c *Cite) {
		if c != nil {
			cited = append(cited, c.ID)
		}
	}
	bg := rep.Background
	cite(bg.FirstContact)
	cite(bg.LastContact)
	for _, u := range slices.Concat(bg.Handles, bg.Services, bg.Conversations) {
		cite(&u.First)
		cite(&u.Last)
	}
	for _, v := range bg.Volume {
		cite(&v.First)
		cite(&v.Last)
	}
	for _, c := range slices.Concat(rep.Active, rep.Past, rep.Resolved) {
		if len(c.Sources) == 0 {
			t.Errorf("commitment %s cites nothing", c.ID)
		}
		if c.Status == StatusResolved && len(c.ResolvedBy) == 0 {
			t.Errorf("resolved commitment %s cites no settling message", c.ID)
		}
		cited = append(cited, slices.Concat(c.Sources, c.Mentions, c.ResolvedBy)...)
	}
	for _, q := range rep.History.Quarters {
		cite(&q.First)
		cite(&q.Last)
	}
	for _, tp := range rep.History.Topics {
		if len(tp.Cites) == 0 {
			t.Errorf("topic %q cites nothing", tp.Term)
		}
		cited = append(cited, tp.Cites...)
	}
	if ex := rep.History.LastSignificant; ex != nil {
		cited = append(cited, ex.IDs...)
		cited = append(cited, ex.ExcerptID)
	}
	if len(cited) < 100 {
		t.Fatalf("only %d citations", len(cited))
	}
	for _, id := range cited {
		if !ids[id] {
			t.Errorf("cites unknown message %q", id)
		}
	}
	if rep.Generated {
		t.Error("an extractive report says generated")
	}
}

func TestReportBasics(t *testing.T) {
	loc := time.FixedZone("PST", -8*3600)
	now := testclock.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	at := func(ago time.Duration) time.Time { return now.Add(-ago) }
	msgs := []Message{
		{ID: "a", Time: at(40 * time.Hour), Text: "can you send me the slides by tomorrow?", Sender: "+1", ConversationID: "c"},
		{ID: "b", Time: at(39 * time.Hour), FromMe: true, Text: "sure, will do", ConversationID: "c"},
		{ID: "c", Time: at(2 * time.Hour), Text: "I'll pick up the cake on friday", Sender: "+1", ConversationID: "c"},
	}
	rep := Build(Subject{Key: "k", Name: "Sam"}, msgs, Options{Location: loc}).Report(now)
	if len(rep.Past) != 1 || rep.Past[0].Sources[0] != "a" || rep.Past[0].Status != StatusPast || !rep.Past[0].Accepted {
		t.Errorf("past = %+v, want the accepted slides request, past its date", rep.Past)
	}
	if len(rep.Active) != 1 || rep.Active[0].Owner != "them" || rep.Active[0].Due == nil || rep.Active[0].Due.Start.In(loc).Weekday() != time.Friday {
		t.Errorf("active = %+v, want Sam's cake promise due Friday", rep.Active)
	}
	if rep.Background.Sent != 1 || rep.Background.Received != 2 || rep.Messages != 3 {
		t.Errorf("background %+v, messages %d", rep.Background, rep.Messages)
	}
	if len(rep.History.Quarters) != 1 || rep.History.Quarters[0].MyReplies.Samples != 1 || rep.History.Quarters[0].MyReplies.MedianSeconds != 3600 {
		t.Errorf("quarters = %+v", rep.History.Quarters)
	}
	if rep.History.ResponseTrend.Direction != "unknown" {
		t.Errorf("trend = %+v with one quarter", rep.History.ResponseTrend)
	}
}

// TestResponseTrendComparesTheLastTwoQuarters: the response trend compares
// the owner's median reply time in the last two quarters with enough
// replies, naming both quarters and medians, and says "faster" when the
// owner now replies sooner.
func TestResponseTrendComparesTheLastTwoQuarters(t *testing.T) {
	// Quarter 1: replies after 60 min; quarter 2: after 5 min.
	var msgs []Message
	add := func(base time.Time, delay time.Duration, n int) {
		for i := 0; i < n; i++ {
			t0 := base.Add(time.Duration(i) * 24 * time.Hour)
			msgs = append(msgs,
				Message{ID: fmt.Sprintf("%s-%d-in", base.Format("0102"), i), Time: t0, Sender: "+1", Text: "hey"},
				Message{ID: fmt.Sprintf("%s-%d-me", base.Format("0102"), i), Time: t0.Add(delay), FromMe: true, Text: "hi"})
		}
	}
	add(testclock.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC), time.Hour, 5)
	add(testclock.Date(2026, 4, 6, 12, 0, 0, 0, time.UTC), 5*time.Minute, 5)
	tr := Build(sam, msgs, Options{}).Report(testclock.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)).History.ResponseTrend
	if tr.Direction != "faster" || tr.From != fmt.Sprintf("%d-Q1", testclock.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC).Year()) || tr.To != fmt.Sprintf("%d-Q2", testclock.Date(2026, 4, 6, 12, 0, 0, 0, time.UTC).Year()) || tr.FromMedian != 3600 || tr.ToMedian != 300 {
		t.Errorf("trend = %+v", tr)
	}
}

// TestTopicsRankRecurringPhrasesAboveTheirWords: a phrase that recurs on
// several days is the top topic, counted by messages and days, its single
// words are not shown beside it, and the subject's own name is never a
// topic.
func TestTopicsRankRecurringPhrasesAboveTheirWords(t *testing.T) {
	var msgs []Message
	t0 := testclock.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	for i, text := range []string{
		"the lease renewal is due", "any news on the lease renewal?", "signed the lease renewal today",
		"pottery class tonight", "lol", "see you", "pottery class was fun",
	} {
		msgs = append(msgs, Message{ID: fmt.Sprint(i), Time: t0.AddDate(0, 0, i*3), Sender: "+1", Text: text})
	}
	topics := Build(sam, msgs, Options{}).Report(t0.AddDate(0, 1, 0)).History.Topics
	if len(topics) == 0 || topics[0].Term != "lease renewal" || topics[0].Count != 3 || topics[0].Days != 3 {
		t.Fatalf("topics = %+v, want 'lease renewal' first", topics)
	}
	for _, tp := range topics {
		if tp.Term == "lease" || tp.Term == "renewal" {
			t.Errorf("word %q shown beside its phrase", tp.Term)
		}
		if strings.Contains(tp.Term, "sam") {
			t.Errorf("the subject's name is a topic: %q", tp.Term)
		}
	}
}

// memStore and sliceFeed implement Store and Feed for Refresh tests.
type memStore struct {
	data  map[string][]byte
	saves int
	convs []string
}

func (s *memStore) LoadDossier(_ context.Context, key string) ([]byte, error) {
	return s.data[key], nil
}
func (s *memStore) SaveDossier(_ context.Context, key string, convs []string, _ Cursor, data []byte) error {
	s.data[key], s.convs = data, convs
	s.saves++
	return nil
}

type sliceFeed struct {
	msgs  []Message
	calls []Cursor
}

func (f *sliceFeed) Messages(_ context.Context, _ Subject, after Cursor, fn func(Message) error) error {
	f.calls = append(f.calls, after)
	for i := range f.msgs {
		if after.before(&f.msgs[i]) {
			if err := fn(f.msgs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestRefreshUpdatesIncrementallyAndRebuildsWhenItMust: Refresh builds a
// dossier once, then folds in only the messages after the stored cursor (the
// result equals a full build), saves nothing when nothing is new, rebuilds a
// corrupt state or on request, and returns a feed error rather than an empty
// dossier. A message older than the cursor is invisible to an incremental
// refresh: the index asks for Rebuild then.
func TestRefreshUpdatesIncrementallyAndRebuildsWhenItMust(t *testing.T) {
	ctx := context.Background()
	msgs := longHistory(400, 9)
	store := &memStore{data: map[string][]byte{}}
	feed := &sliceFeed{msgs: msgs[:300]}
	d, rebuilt, err := Refresh(ctx, store, feed, sam, RefreshOptions{})
	if err != nil || !rebuilt || d.Folded == 0 {
		t.Fatalf("first refresh: %v rebuilt=%v", err, rebuilt)
	}
	// New messages: an incremental update from the stored cursor.
	feed.msgs = msgs
	d, rebuilt, err = Refresh(ctx, store, feed, sam, RefreshOptions{})
	if err != nil || rebuilt || d.UpTo.ID != msgs[len(msgs)-1].ID {
		t.Fatalf("second refresh: %v rebuilt=%v up to %+v", err, rebuilt, d.UpTo)
	}
	if last := feed.calls[len(feed.calls)-1]; last.ID != msgs[299].ID {
		t.Errorf("fed after %+v, want the stored cursor %s", last, msgs[299].ID)
	}
	want, _ := Build(sam, msgs, Options{}).Marshal()
	if !bytes.Equal(store.data[sam.Key], want) {
		t.Error("stored dossier differs from a full build")
	}
	if len(store.convs) == 0 {
		t.Error("no conversations passed to the store")
	}
	// Nothing new: no save.
	saves := store.saves
	if _, _, err := Refresh(ctx, store, feed, sam, RefreshOptions{}); err != nil || store.saves != saves {
		t.Errorf("idle refresh saved (%d → %d) or failed: %v", saves, store.saves, err)
	}
	// A corrupt state is rebuilt.
	store.data[sam.Key] = []byte("{not json")
	if _, rebuilt, err := Refresh(ctx, store, feed, sam, RefreshOptions{}); err != nil || !rebuilt {
		t.Errorf("corrupt state: %v rebuilt=%v", err, rebuilt)
	}
	// A message older than the cursor forces a rebuild.
	late := msgs[5]
	late.ID = "late"
	feed.msgs = append(slices.Clone(msgs), late)
	if _, rebuilt, err := Refresh(ctx, store, feed, sam, RefreshOptions{}); err != nil || rebuilt {
		// The feed only returns messages after the cursor, so the late
		// message is invisible to an incremental refresh; the index must
		// ask for Rebuild when it syncs an older message.
		t.Errorf("late message: %v rebuilt=%v", err, rebuilt)
	}
	if _, rebuilt, err := Refresh(ctx, store, feed, sam, RefreshOptions{Rebuild: true}); err != nil || !rebuilt {
		t.Errorf("forced rebuild: %v rebuilt=%v", err, rebuilt)
	}
	// Feed errors are errors, never an empty dossier.
	boom := errors.New("boom")
	if _, _, err := Refresh(ctx, store, errFeed{boom}, sam, RefreshOptions{Rebuild: true}); !errors.Is(err, boom) {
		t.Errorf("feed error: got %v", err)
	}
}

type errFeed struct{ err error }

func (f errFeed) Messages(context.Context, Subject, Cursor, func(Message) error) error { return f.err }

func BenchmarkBuild(b *testing.B) {
	msgs := longHistory(20000, 1)
	b.ReportAllocs()
	for b.Loop() {
		Build(sam, msgs, Options{})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(msgs)), "ns/msg")
}

func BenchmarkUpdate(b *testing.B) {
	msgs := longHistory(20001, 1)
	base := Build(sam, msgs[:20000], Options{})
	data, _ := base.Marshal()
	b.ReportAllocs()
	for b.Loop() {
		d, err := Unmarshal(data)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Update(sam, msgs[20000:], Options{}); err != nil {
			b.Fatal(err)
		}
		if _, err := d.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}
