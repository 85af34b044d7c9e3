package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/bridge"
	"github.com/tidings-mcp/tidings/internal/index"
)

func TestBuildProgress(t *testing.T) {
	for _, tc := range []struct {
		writes []string
		want   string
	}{
		{nil, "starting"},
		{[]string{"\rindexing: 0\x1b[K", "\rindexing: 120,000 (85,000/s)\x1b[K"}, "indexing: 120,000 messages read"},
		{[]string{"\rindexing: 5\x1b[K\n", "\rembedding: 40,000 of 100,000 (9,000/s)\x1b[K"}, "embedding: 40%, 40,000 of 100,000"},
		{[]string{"\rbuilding ind", "exes: 3\x1b[K"}, "building indexes: 3"},
		{[]string{"\rgarbage \x00 line"}, "starting"},
	} {
		var p buildProgress
		for _, w := range tc.writes {
			p.Write([]byte(w))
		}
		if got := p.String(); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.writes, got, tc.want)
		}
	}
}

// TestHelperOnceFirstSync: a --once helper whose first sync outlasts a
// request's wait answers status at once and the data request with an
// honest "being built, retry shortly" error (well within the client's
// timeout), keeps running until the index is complete, and the next run
// answers from it.
func TestHelperOnceFirstSync(t *testing.T) {
	prev := helperReadyWait
	helperReadyWait = time.Millisecond // any real sync outlasts it
	t.Cleanup(func() { helperReadyWait = prev })
	data := demoData(t)
	dir := filepath.Join(t.TempDir(), "bridge")
	if err := bridge.PrepareFolder(dir); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TIDINGS_NOW": anchorRFC3339, "DISPLAY": ""}
	args := []string{"helper", "--once", "--bridge-dir", dir, "--imessage", data.ChatDB, "--contacts", data.Contacts}

	type answer struct {
		resp *bridge.Response
		err  error
		took time.Duration
	}
	ask := func(action string, params any) chan answer {
		ch := make(chan answer, 1)
		go func() {
			c := bridge.NewClient(dir)
			defer c.Close()
			c.Timeout = 30 * time.Second
			start := time.Now()
			r, err := c.Call(context.Background(), action, params)
			ch <- answer{r, err, time.Since(start)}
		}()
		return ch
	}
	waitQueued := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			ents, _ := os.ReadDir(filepath.Join(dir, "control", "requests"))
			q := 0
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "request-") {
					q++
				}
			}
			if q >= n {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%d requests never queued", n)
	}

	status := ask(bridge.ActionStatus, nil)
	search := ask(bridge.ActionSearch, map[string]any{"term": "dinner"})
	waitQueued(2)
	m, _, stderr := testMain(t, env)
	if err := m.Run(context.Background(), args); err != nil {
		t.Fatalf("helper --once: %v\n%s", err, stderr)
	}
	st := <-status
	if st.err != nil {
		t.Errorf("status during the first sync: %v", st.err)
	}
	sr := <-search
	if sr.err == nil || !strings.Contains(sr.err.Error(), "building its index for the first time") || !strings.Contains(sr.err.Error(), "retry in a few seconds") {
		t.Errorf("search during the first sync: %v", sr.err)
	}
	if !strings.Contains(stderr.String(), "still being built") {
		t.Errorf("the helper did not say it stays for the build:\n%s", stderr)
	}

	// The run did not exit before its index was complete.
	ix, err := index.Open(context.Background(), filepath.Join(dir, "index.db"), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ist, err := ix.Status(context.Background())
	ix.Close()
	if err != nil || ist.LastSync.IsZero() || ist.Messages < int64(data.Messages)/2 {
		t.Fatalf("index after the first --once run: %+v %v", ist, err)
	}

	// The next run answers from it.
	helperReadyWait = prev
	search = ask(bridge.ActionSearch, map[string]any{"term": "dinner"})
	waitQueued(1)
	m, _, stderr = testMain(t, env)
	if err := m.Run(context.Background(), args); err != nil {
		t.Fatalf("second helper --once: %v\n%s", err, stderr)
	}
	sr = <-search
	var res bridge.SearchResult
	if sr.err != nil || sr.resp.Decode(&res) != nil || res.MatchCount == 0 {
		t.Errorf("search after the build: %v %+v", sr.err, res)
	}
}
