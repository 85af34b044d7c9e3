//go:build unix

package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// watching starts h's worker in --watch mode for the test's duration.
func (h *harness) watching() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.w.Watch(ctx) }()
	h.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("watch: %v", err)
		}
	})
}

func TestClientRoundTrip(t *testing.T) {
	h := newHarness(t, "")
	h.watching()
	c := NewClient(h.dir)
	defer c.Close()
	ctx := context.Background()
	st, err := c.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.ProtocolVersion != Version13 || st.BridgeRole != "host" {
		t.Errorf("status %+v", st)
	}
	var res SearchResult
	if err := c.Do(ctx, ActionSearch, map[string]any{"term": "dinner plans", "days": 30}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Term != "dinner plans" || len(res.Matches) != 1 || res.Matches[0].Text != "Let's finalize dinner plans for Friday" {
		t.Errorf("search %+v", res)
	}
	// Denied actions come back as a RemoteError with the role's list.
	_, err = c.Call(ctx, ActionListChats, nil)
	var re *RemoteError
	if !errors.As(err, &re) || re.Msg != ErrTextNotPermitted || re.Code != CodeNotPermitted || len(re.AllowedActions) != 8 {
		t.Errorf("err = %#v", err)
	}
	// The client deletes every response after parsing, and the worker
	// removes each request right after publishing its response.
	for _, d := range []string{RequestsDir, ResponsesDir} {
		eventually(t, func() bool { return len(dirNames(t, h.path(ControlDir, d))) == 0 }, d+" not emptied")
	}
}

// eventually waits up to 5 s for cond.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Error(msg)
}

func TestClientConcurrent(t *testing.T) {
	h := newHarness(t, "")
	h.watching()
	c := NewClient(h.dir)
	defer c.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 40 {
				term := fmt.Sprintf("g%d-%d", g, i)
				r, err := c.Call(context.Background(), ActionSearch, map[string]any{"term": term})
				if err != nil {
					t.Error(err)
					return
				}
				var res SearchResult
				if err := r.Decode(&res); err != nil || res.Term != term {
					t.Errorf("answer for %s: %+v %v", term, res, err)
				}
			}
		})
	}
	wg.Wait()
	if n := len(h.fake.Calls()); n != 320 {
		t.Errorf("backend calls = %d", n)
	}
}

func TestClientPollFallback(t *testing.T) {
	h := newHarness(t, "")
	h.watching()
	c := NewClient(h.dir)
	c.noWatcher = true
	defer c.Close()
	if _, err := c.Call(context.Background(), ActionStatus, nil); err != nil {
		t.Fatal(err)
	}
	if c.watcher != nil {
		t.Errorf("watcher started")
	}
}

// TestClientTimeout: with no helper running the call fails with a clear
// cause and withdraws its request, so a helper started later never acts on
// a stale request.
func TestClientTimeout(t *testing.T) {
	h := newHarness(t, "")
	c := NewClient(h.dir)
	defer c.Close()
	c.Timeout = 100 * time.Millisecond
	_, err := c.Call(context.Background(), ActionSearch, map[string]any{"term": "x"})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{"not running", "Full Disk Access", "tidings bridge install", "withdrawn"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q: %v", s, err)
		}
	}
	if names := dirNames(t, h.path(ControlDir, RequestsDir)); len(names) != 0 {
		t.Errorf("request not withdrawn: %v", names)
	}
	// Cancellation withdraws too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c.Timeout = time.Minute
	if _, err := c.Call(ctx, ActionStatus, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
	if names := dirNames(t, h.path(ControlDir, RequestsDir)); len(names) != 0 {
		t.Errorf("request not withdrawn: %v", names)
	}
}

// fakeHelper answers requests with answer(request) until the test ends;
// a nil answer takes the request without answering.
func fakeHelper(t *testing.T, dir string, answer func(req map[string]any) any) {
	t.Helper()
	stop := make(chan struct{})
	done := make(chan struct{})
	reqs := filepath.Join(dir, ControlDir, RequestsDir)
	resps := filepath.Join(dir, ControlDir, ResponsesDir)
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			ents, _ := os.ReadDir(reqs)
			for _, e := range ents {
				id, ok := idFromRequestName(e.Name())
				if !ok {
					continue
				}
				data, err := os.ReadFile(filepath.Join(reqs, e.Name()))
				os.Remove(filepath.Join(reqs, e.Name()))
				if err != nil {
					continue
				}
				var req map[string]any
				json.Unmarshal(data, &req)
				resp := answer(req)
				if resp == nil {
					continue
				}
				b, _ := json.Marshal(resp)
				putRaw(t, resps, ResponseName(id), b)
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}

func TestClientTimeoutTaken(t *testing.T) {
	h := newHarness(t, "")
	fakeHelper(t, h.dir, func(map[string]any) any { return nil })
	c := NewClient(h.dir)
	defer c.Close()
	c.Timeout = 150 * time.Millisecond
	_, err := c.Call(context.Background(), ActionStatus, nil)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "took the status request") || !strings.Contains(err.Error(), LogName) {
		t.Errorf("err = %v", err)
	}
}

// TestClientVersionCheck: a helper of another major version is refused
// with upgrade guidance (fail closed); a newer minor is fine.
func TestClientVersionCheck(t *testing.T) {
	for _, tc := range []struct {
		version, want string
	}{
		{"1.2", ""},
		{"1.7", ""},
		{"2.0", "upgrade this client"},
		{"0.9", "upgrade the helper"},
		{"banana", "not a version"},
		{"", "not a version"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			h := newHarness(t, "")
			var seen []map[string]any
			var mu sync.Mutex
			fakeHelper(t, h.dir, func(req map[string]any) any {
				mu.Lock()
				seen = append(seen, req)
				mu.Unlock()
				return map[string]any{"id": req["id"], "ok": true, "action": req["action"], "protocol_version": tc.version}
			})
			c := NewClient(h.dir)
			defer c.Close()
			c.Version = Version12
			err := c.Do(context.Background(), ActionSearch, map[string]any{"term": "x"}, nil)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[0]["action"] != "status" {
				t.Errorf("first request was %v, want status", seen[0]["action"])
			}
			if _, has := seen[0]["protocol_version"]; has {
				t.Errorf("a 1.2 client sent protocol_version")
			}
			if tc.want != "" && len(seen) != 1 {
				t.Errorf("the client went on after an incompatible status: %d requests", len(seen))
			}
		})
	}
}

func TestEncodeRequest(t *testing.T) {
	if _, err := encodeRequest("a", "search", map[string]any{"term": strings.Repeat("x", MaxRequestSize)}, Version13); err == nil || !strings.Contains(err.Error(), "64 KiB") {
		t.Errorf("oversized request: %v", err)
	}
	for _, p := range []any{[]int{1}, "x", 5, json.RawMessage(`[]`)} {
		if _, err := encodeRequest("a", "search", p, Version13); err == nil {
			t.Errorf("params %v accepted", p)
		}
	}
	for _, empty := range []any{nil, json.RawMessage(nil), json.RawMessage(" ")} {
		if b, err := encodeRequest("a", "status", empty, Version12); err != nil || !strings.Contains(string(b), `"params":{}`) {
			t.Errorf("params %#v → %s %v", empty, b, err)
		}
	}
	b, err := encodeRequest("a", "status", nil, Version12)
	if err != nil || string(b) != `{"id":"a","action":"status","params":{}}` {
		t.Errorf("1.2 request = %s %v", b, err)
	}
	b, _ = encodeRequest("a", "status", nil, Version13)
	if r, err := ParseRequest(b, "a"); err != nil || r.Version != Version13 {
		t.Errorf("1.3 request = %s → %+v %v", b, r, err)
	}
}

// TestWatchCancelledIsCleanEnd: Watch returns nil when its context ends,
// also when that happens during its first pass (here: before it starts).
func TestWatchCancelledIsCleanEnd(t *testing.T) {
	h := newHarness(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.w.Watch(ctx); err != nil {
		t.Errorf("Watch on a cancelled context: %v, want nil", err)
	}
}

// TestClientSendWaitsForTheDialog: a send waits for its answer at least
// SendTimeout (the helper's confirmation dialog alone may take 60 s),
// whatever Timeout says; a send that still gets no answer says the message
// may yet go out.
func TestClientSendWaitsForTheDialog(t *testing.T) {
	h := newHarness(t, "")
	fakeHelper(t, h.dir, func(req map[string]any) any {
		switch req["action"] {
		case ActionSend:
			if req["params"].(map[string]any)["text"] == "never" {
				return nil // taken, never answered
			}
			time.Sleep(400 * time.Millisecond) // the user reads the dialog
			return map[string]any{"id": req["id"], "ok": true, "action": ActionSend, "sent": map[string]any{"to": "+14155551234"}}
		case ActionSearch:
			time.Sleep(400 * time.Millisecond)
			return map[string]any{"id": req["id"], "ok": true, "action": ActionSearch}
		}
		return nil
	})
	c := NewClient(h.dir)
	defer c.Close()
	if c.SendTimeout != DefaultSendTimeout || c.timeout(ActionSend) != DefaultSendTimeout || c.timeout(ActionSearch) != DefaultTimeout {
		t.Fatalf("defaults: send %v, search %v", c.timeout(ActionSend), c.timeout(ActionSearch))
	}
	c.Timeout, c.SendTimeout = 150*time.Millisecond, 3*time.Second
	ctx := context.Background()
	if _, err := c.Call(ctx, ActionSearch, map[string]any{"term": "x"}); !errors.Is(err, ErrTimeout) {
		t.Errorf("a slow search must time out at Timeout: %v", err)
	}
	if r, err := c.Call(ctx, ActionSend, map[string]any{"to": "+14155551234", "text": "hi", "send_nonce": "n"}); err != nil || !r.OK {
		t.Errorf("a send answered after Timeout but within SendTimeout: %v", err)
	}
	c.SendTimeout = 200 * time.Millisecond
	_, err := c.Call(ctx, ActionSend, map[string]any{"to": "+14155551234", "text": "never", "send_nonce": "n"})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "may still be sent") {
		t.Errorf("unanswered send: %v", err)
	}
}
