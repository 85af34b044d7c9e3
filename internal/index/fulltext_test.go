package index

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/model"
)

// TestPostingsChunks reads a term's postings across chunk boundaries and
// checks ids, order, the scan cap, early stops and filters against the
// plain query.
func TestPostingsChunks(t *testing.T) {
	db := newFakeDB()
	conv := "iMessage;-;zoe@example.com"
	db.addConv(model.Conversation{ID: conv, Identifier: "zoe@example.com", Kind: model.KindDirect, Participants: []string{"zoe@example.com"}})
	const n = 3*postingsChunk + 77
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("alpha message %d", i)
		if i%3 == 0 {
			text = fmt.Sprintf("beta message %d", i) // not every id matches
		}
		db.add(model.Message{ID: fmt.Sprintf("m%d", i), ConversationIDs: []string{conv}, Sender: "zoe@example.com",
			Time: testNow.Add(time.Duration(i-n) * time.Minute), Text: text})
	}
	ix := openTest(t, t.TempDir(), Options{})
	ctx := context.Background()
	if _, err := ix.Sync(ctx, SyncOptions{}, db.source(nil)); err != nil {
		t.Fatal(err)
	}
	var all []int64
	rows, err := ix.rdb.QueryContext(ctx, `SELECT rowid FROM fts WHERE fts MATCH '"alpha"' ORDER BY rowid DESC`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		all = append(all, id)
	}
	rows.Close()
	if len(all) != n-(n+2)/3 {
		t.Fatalf("%d postings, want %d", len(all), n-(n+2)/3)
	}
	every := &filter{since: math.MinInt64, until: math.MaxInt64, fromMe: -1, lo: 0, hi: math.MaxInt64}
	ix.mem.mu.RLock()
	defer ix.mem.mu.RUnlock()
	for _, tc := range []struct {
		name     string
		f        *filter
		limit    int
		df       int64 // hint (0: none)
		stop     int   // keep returns false at this many kept (0: never)
		want     []int64
		complete bool
	}{
		{"all", every, 100000, 0, 0, all, true},
		{"exactly the cap", every, len(all), 0, 0, all, true},
		{"one over the cap", every, len(all) - 1, 0, 0, all[:len(all)-1], false},
		{"cap inside the first chunk", every, 10, 0, 0, all[:10], false},
		{"cap at a chunk boundary", every, postingsChunk, 0, 0, all[:postingsChunk], false},
		{"early stop", every, 100000, 0, postingsChunk + 5, all[:postingsChunk+5], false},
		{"id range", &filter{since: math.MinInt64, until: math.MaxInt64, fromMe: -1, lo: all[len(all)-1] + 100, hi: all[0] - 100},
			100000, 0, 0, between(all, all[len(all)-1]+100, all[0]-100), true},
		// A df hint limits each query to a window of the newest ids; the
		// answer is the same, whether the hint is right or far off.
		{"windows, cap", every, 10, int64(len(all)), 0, all[:10], false},
		{"windows, cap past the first chunk", every, postingsChunk + 500, int64(len(all)), 0, all[:postingsChunk+500], false},
		{"windows, hint too high", every, 100, 1 << 40, 0, all[:100], false},
		{"windows, hint too low", every, 50, 101, 0, all[:50], false},
		{"windows, id range", &filter{since: math.MinInt64, until: math.MaxInt64, fromMe: -1, lo: all[len(all)-1] + 100, hi: all[0] - 100},
			30, 1 << 30, 0, between(all, all[len(all)-1]+100, all[0]-100)[:30], false},
		{"windows, everything", every, len(all), 1 << 40, 0, all, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			_, complete, err := ix.postings(ctx, `"alpha"`, tc.f, tc.limit, tc.df, func(id int64) bool {
				got = append(got, id)
				return tc.stop == 0 || len(got) < tc.stop
			})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %d ids (%v…), want %d (%v…)", len(got), head(got), len(tc.want), head(tc.want))
			}
			if complete != tc.complete {
				t.Errorf("complete = %v, want %v", complete, tc.complete)
			}
		})
	}
}

func between(ids []int64, lo, hi int64) []int64 {
	var out []int64
	for _, id := range ids {
		if id >= lo && id <= hi {
			out = append(out, id)
		}
	}
	return out
}

func head(ids []int64) []int64 { return ids[:min(len(ids), 3)] }

func TestAppendIDs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
		bad  bool
	}{
		{"", nil, false},
		{"7", []int64{7}, false},
		{"30,20,10", []int64{30, 20, 10}, false},
		{"1,,2", nil, true},
		{"1,2,", nil, true},
		{",1", nil, true},
		{"1;2", nil, true},
		{"-1", nil, true},
	} {
		got, err := appendIDs(nil, []byte(tc.in))
		if (err != nil) != tc.bad {
			t.Errorf("%q: err %v, want error %v", tc.in, err, tc.bad)
		}
		if !tc.bad && !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %v, want %v", tc.in, got, tc.want)
		}
	}
}
