package index

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/index/fold"
	"github.com/tidings-mcp/tidings/internal/index/querytext"
	"github.com/tidings-mcp/tidings/internal/model"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// fakeDB is an in-memory chat.db: rows by ROWID, a change log and
// tombstones, served through RowReader.
type fakeDB struct {
	mu      sync.Mutex
	convs   []model.Conversation
	rows    []model.Message // ascending RowID
	changed map[string]time.Time
	tombs   []struct {
		row  int64
		guid string
	}
	nextRow int64
}

func newFakeDB() *fakeDB { return &fakeDB{changed: map[string]time.Time{}} }

func (f *fakeDB) addConv(c model.Conversation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c.Source = model.SourceIMessage
	for i := range f.convs {
		if f.convs[i].ID == c.ID {
			f.convs[i] = c
			return
		}
	}
	f.convs = append(f.convs, c)
}

// add appends a message as a new row.
func (f *fakeDB) add(m model.Message) model.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextRow++
	m.RowID = f.nextRow
	m.Source = model.SourceIMessage
	if m.Kind == "" {
		m.Kind = model.MsgText
	}
	f.rows = append(f.rows, m)
	return m
}

// update replaces a stored row (an edit, an unsend, a read receipt) and
// records the change time.
func (f *fakeDB) update(guid string, at time.Time, fn func(*model.Message)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.rows {
		if f.rows[i].ID == guid {
			fn(&f.rows[i])
			f.changed[guid] = at
			return
		}
	}
	panic("no row " + guid)
}

func (f *fakeDB) remove(guid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.rows {
		if f.rows[i].ID == guid {
			f.rows = slices.Delete(f.rows, i, i+1)
			break
		}
	}
	f.tombs = append(f.tombs, struct {
		row  int64
		guid string
	}{int64(len(f.tombs) + 1), guid})
}

func (f *fakeDB) Conversations(ctx context.Context) ([]model.Conversation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.convs), nil
}

func (f *fakeDB) Messages(ctx context.Context, after int64, fn func(model.Message) error) error {
	f.mu.Lock()
	rows := slices.Clone(f.rows)
	f.mu.Unlock()
	for _, m := range rows {
		if m.RowID > after {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(m); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *fakeDB) Changed(ctx context.Context, since time.Time, fn func(model.Message) error) error {
	f.mu.Lock()
	var out []model.Message
	for _, m := range f.rows {
		if t, ok := f.changed[m.ID]; ok && !t.Before(since) {
			out = append(out, m)
		}
	}
	f.mu.Unlock()
	for _, m := range out {
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeDB) Deleted(ctx context.Context, after int64, fn func(int64, string) error) error {
	f.mu.Lock()
	tombs := slices.Clone(f.tombs)
	f.mu.Unlock()
	for _, t := range tombs {
		if t.row > after {
			if err := fn(t.row, t.guid); err != nil {
				return err
			}
		}
	}
	return nil
}

// source serves the fake through a RowSource. Its clock defaults to the
// index tests' pinned clock (testNow), the one the fake's stamps are built
// from: a real clock would meet those fixed stamps (issue: the suite failed
// once the calendar passed testNow).
func (f *fakeDB) source(now func() time.Time) *RowSource {
	if now == nil {
		now = func() time.Time { return testNow }
	}
	return &RowSource{SourceKey: "imessage:/fake/chat.db", SourceKind: model.SourceIMessage, Reader: f, Now: now}
}

// hashEmbedder is a test embedder: hashed bag of words (with a tiny
// synonym table so "semantic" differs from lexical), unit length.
type hashEmbedder struct {
	id  string
	dim int
	syn map[string]string
}

func (h *hashEmbedder) ID() string { return h.id }
func (h *hashEmbedder) Dim() int   { return h.dim }
func (h *hashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.dim)
		for _, w := range fold.Terms(t) {
			if querytext.IsStopWord(w) {
				continue
			}
			if s, ok := h.syn[w]; ok {
				w = s
			}
			f := fnv.New32a()
			f.Write([]byte(w))
			x := f.Sum32()
			sign := float32(1)
			if x&1 == 1 {
				sign = -1
			}
			v[int(x>>1)%h.dim] += sign
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n > 0 {
			for j := range v {
				v[j] /= float32(math.Sqrt(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

// fitEmbedder is a hashEmbedder whose ID changes when fitted.
type fitEmbedder struct {
	hashEmbedder
	fitted string
	fits   int
}

func (f *fitEmbedder) ID() string {
	if f.fitted == "" {
		return f.id
	}
	return f.id + "/fit-" + f.fitted
}

func (f *fitEmbedder) Fit(ctx context.Context, docs func(yield func(string) bool)) error {
	n := 0
	docs(func(string) bool { n++; return true })
	f.fitted = fmt.Sprint(n)
	f.fits++
	return nil
}
func (f *fitEmbedder) MarshalBinary() ([]byte, error) { return []byte(f.fitted), nil }
func (f *fitEmbedder) UnmarshalBinary(b []byte) error {
	f.fitted = string(b)
	return nil
}

// testNow is the index tests' pinned clock (internal/testclock: shifted by
// TIDINGS_TEST_DATE_SHIFT_DAYS).
var testNow = testclock.Anchor()

func openTest(t testing.TB, dir string, opts Options) *Index {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return testNow }
	}
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	ix, err := Open(context.Background(), dir+"/index.db", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func mustSync(t testing.TB, ix *Index, srcs ...Source) SyncReport {
	t.Helper()
	rep, err := ix.Sync(context.Background(), SyncOptions{Embed: true}, srcs...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func mustSearch(t testing.TB, ix *Index, q Query) *Result {
	t.Helper()
	r, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	return r
}

func hitTexts(r *Result) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Text)
	}
	return out
}

func hitIDs(r *Result) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.MessageID)
	}
	return out
}

// smallCorpus builds a fake chat.db with a few conversations.
func smallCorpus() *fakeDB { return smallCorpusAt(testNow) }

// smallCorpusAt is smallCorpus with its messages dated relative to now.
func smallCorpusAt(now time.Time) *fakeDB {
	db := newFakeDB()
	db.addConv(model.Conversation{ID: "iMessage;-;+14155550101", Identifier: "+14155550101", Kind: model.KindDirect, Service: "iMessage", Participants: []string{"+14155550101"}})
	db.addConv(model.Conversation{ID: "iMessage;-;zoe@example.com", Identifier: "zoe@example.com", Kind: model.KindDirect, Service: "iMessage", Participants: []string{"zoe@example.com"}})
	db.addConv(model.Conversation{ID: "iMessage;+;chat100", Identifier: "chat100", Kind: model.KindGroup, DisplayName: "Climbing crew", Service: "iMessage", Participants: []string{"+14155550101", "zoe@example.com", "+14155550199"}})
	sam := "iMessage;-;+14155550101"
	zoe := "iMessage;-;zoe@example.com"
	grp := "iMessage;+;chat100"
	day := func(d int, h int) time.Time { return now.AddDate(0, 0, -d).Add(time.Duration(h-12) * time.Hour) }
	add := func(id, conv, sender string, at time.Time, text string) {
		m := model.Message{ID: id, ConversationIDs: []string{conv}, Sender: sender, FromMe: sender == "", Time: at, Text: text, TextSource: "text"}
		db.add(m)
	}
	add("m1", sam, "+14155550101", day(40, 10), "you still owe me $40 for the tix")
	add("m2", sam, "", day(40, 11), "I know, I'll pay you back Friday")
	add("m3", sam, "+14155550101", day(10, 9), "Dinner at Café Rouge on Saturday?")
	add("m4", sam, "", day(10, 9), "Sounds great, book a table for 8pm")
	add("m5", zoe, "zoe@example.com", day(8, 18), "The dentist appointment moved to Tuesday")
	add("m6", zoe, "", day(8, 19), "Thanks for telling me! Owing you one")
	add("m7", grp, "+14155550199", day(3, 20), "Climbing gym tonight? Bring chalk 🧗")
	add("m8", grp, "zoe@example.com", day(3, 20), "I'm in. DINNER after?")
	add("m9", grp, "", day(1, 8), "Running late, save me a spot")
	add("m10", zoe, "zoe@example.com", day(0, 9), "Did you see the photos from the weekend? ❤️")
	return db
}
