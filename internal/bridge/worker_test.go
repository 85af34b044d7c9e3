//go:build unix

package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/testclock"
)

// TestRuntimeDirectories: missing runtime directories are created 0700;
// a symlinked, foreign-owned or group/world-accessible one is refused and
// left exactly as it was (never chmod-ed).
func TestRuntimeDirectories(t *testing.T) {
	t.Run("created 0700", func(t *testing.T) {
		old := syscall.Umask(0)
		defer syscall.Umask(old)
		h := newHarness(t, "")
		for _, p := range [][]string{{}, {ControlDir}, {ControlDir, RequestsDir}, {ControlDir, ResponsesDir}, {NoncesDir}} {
			fi, err := os.Lstat(h.path(p...))
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
				t.Errorf("%v: %v %v", p, fi.Mode(), err)
			}
		}
	})
	type mk func(t *testing.T, root string) string // returns the path that must stay untouched
	cases := []struct {
		name string
		make mk
		want string
		root bool
	}{
		{"root group-readable", func(t *testing.T, root string) string {
			must(t, os.Chmod(root, 0o750))
			return root
		}, "no group or world permissions", false},
		{"requests world-writable", func(t *testing.T, root string) string {
			p := filepath.Join(root, ControlDir, RequestsDir)
			must(t, os.MkdirAll(p, 0o700))
			must(t, os.Chmod(filepath.Join(root, ControlDir), 0o700))
			must(t, os.Chmod(p, 0o777))
			return p
		}, "mode 0777", false},
		{"responses sticky-free 0701", func(t *testing.T, root string) string {
			p := filepath.Join(root, ControlDir, ResponsesDir)
			must(t, os.MkdirAll(p, 0o700))
			must(t, os.Chmod(p, 0o701))
			return p
		}, "no group or world permissions", false},
		{"control is a symlink", func(t *testing.T, root string) string {
			elsewhere := filepath.Join(t.TempDir(), "elsewhere")
			must(t, os.Mkdir(elsewhere, 0o700))
			p := filepath.Join(root, ControlDir)
			must(t, os.Symlink(elsewhere, p))
			return p
		}, "symbolic link", false},
		{"requests is a symlink", func(t *testing.T, root string) string {
			elsewhere := filepath.Join(t.TempDir(), "elsewhere")
			must(t, os.Mkdir(elsewhere, 0o700))
			must(t, os.Mkdir(filepath.Join(root, ControlDir), 0o700))
			p := filepath.Join(root, ControlDir, RequestsDir)
			must(t, os.Symlink(elsewhere, p))
			return p
		}, "symbolic link", false},
		{"root is a symlink", func(t *testing.T, root string) string {
			must(t, os.Remove(root))
			elsewhere := filepath.Join(t.TempDir(), "elsewhere")
			must(t, os.Mkdir(elsewhere, 0o700))
			must(t, os.Symlink(elsewhere, root))
			return root
		}, "symbolic link", false},
		{"nonces is a file", func(t *testing.T, root string) string {
			p := filepath.Join(root, NoncesDir)
			must(t, os.WriteFile(p, nil, 0o600))
			return p
		}, "not a real directory", false},
		{"control owned by another user", func(t *testing.T, root string) string {
			p := filepath.Join(root, ControlDir)
			must(t, os.Mkdir(p, 0o700))
			must(t, os.Lchown(p, 65534, 65534))
			return p
		}, "owned by uid 65534", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("needs root to chown")
			}
			root := bridgeDir(t)
			p := tc.make(t, root)
			before, _ := os.Lstat(p)
			w, err := NewWorker(Options{Dir: root})
			if err == nil {
				w.Close()
				t.Fatal("unsafe folder accepted")
			}
			if !errors.Is(err, ErrUnsafe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrUnsafe containing %q", err, tc.want)
			}
			after, _ := os.Lstat(p)
			if before.Mode() != after.Mode() {
				t.Errorf("mode changed from %v to %v: the worker must never chmod", before.Mode(), after.Mode())
			}
			c := NewClient(root)
			c.Timeout = 50 * time.Millisecond
			if _, err := c.Call(context.Background(), "status", nil); err == nil {
				t.Errorf("the client accepted the unsafe folder")
			}
		})
	}
	t.Run("made unsafe while running", func(t *testing.T) {
		h := newHarness(t, "")
		p := h.path(ControlDir, ResponsesDir)
		must(t, os.Chmod(p, 0o755))
		h.put("x1", request("x1", "status", nil, ""))
		if _, err := h.w.Drain(context.Background()); !errors.Is(err, ErrUnsafe) {
			t.Errorf("drain err = %v, want ErrUnsafe", err)
		}
		if !h.exists(ControlDir, RequestsDir, RequestName("x1")) {
			t.Errorf("request consumed by a worker that refused to serve")
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o755 {
			t.Errorf("mode changed")
		}
	})
	t.Run("replaced while running", func(t *testing.T) {
		h := newHarness(t, "")
		reqs := h.path(ControlDir, RequestsDir)
		must(t, os.Rename(reqs, reqs+".old"))
		must(t, os.Mkdir(reqs, 0o700))
		h.put("x2", request("x2", "status", nil, ""))
		h.drain()
		if got := h.response("x2"); got["ok"] != true {
			t.Errorf("after the folder was replaced: %v", got)
		}
	})
}

// TestResponseFiles: responses are mode 0600 whatever the umask, written
// atomically (no temp file left), and the request is removed.
func TestResponseFiles(t *testing.T) {
	for _, mask := range []int{0, 0o022, 0o077} {
		t.Run(fmt.Sprintf("umask %04o", mask), func(t *testing.T) {
			old := syscall.Umask(mask)
			defer syscall.Umask(old)
			h := newHarness(t, "")
			h.put("m1", request("m1", "status", nil, ""))
			h.drain()
			fi, err := os.Lstat(h.path(ControlDir, ResponsesDir, ResponseName("m1")))
			if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
				t.Fatalf("response: %v %v", fi.Mode(), err)
			}
			if names := dirNames(t, h.path(ControlDir, ResponsesDir)); !slices.Equal(names, []string{ResponseName("m1")}) {
				t.Errorf("responses folder = %v", names)
			}
			if names := dirNames(t, h.path(ControlDir, RequestsDir)); len(names) != 0 {
				t.Errorf("requests left: %v", names)
			}
			for _, n := range []string{LogName, idRecordName, lockName} {
				fi, err := os.Lstat(h.path(ControlDir, n))
				if err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: %v %v", n, fi.Mode(), err)
				}
			}
		})
	}
}

// TestReapingRemovesOnlyStaleFiles: responses older than an hour, stale temp
// files and dead nonces go on every run; fresh ones, folders and unrelated
// files stay.
func TestReapingRemovesOnlyStaleFiles(t *testing.T) {
	now := testclock.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, "", func(o *Options) { o.Now = func() time.Time { return now } })
	resp, reqs, nonces := h.path(ControlDir, ResponsesDir), h.path(ControlDir, RequestsDir), h.path(NoncesDir)
	files := map[string]time.Duration{ // path → age
		filepath.Join(resp, "response-old.json"):          61 * time.Minute,
		filepath.Join(resp, "response-young.json"):        59 * time.Minute,
		filepath.Join(resp, ".response-old.json.tmp"):     11 * time.Minute,
		filepath.Join(resp, ".response-young.json.tmp"):   time.Minute,
		filepath.Join(reqs, ".request-stale.json.tmp"):    11 * time.Minute,
		filepath.Join(reqs, ".request-inflight.json.tmp"): time.Second,
		filepath.Join(resp, "keep.txt"):                   48 * time.Hour,
		// Nonces live 60 s; dead ones go on every run, not only when the
		// send gate next runs.
		filepath.Join(nonces, "old-nonce-never-used"): 11 * time.Minute,
		filepath.Join(nonces, ".used-old-crashed"):    time.Hour,
		filepath.Join(nonces, "young-nonce"):          30 * time.Second,
	}
	for p, age := range files {
		must(t, os.WriteFile(p, []byte("{}"), 0o600))
		at := now.Add(-age)
		must(t, os.Chtimes(p, at, at))
	}
	must(t, os.Mkdir(filepath.Join(nonces, "old-dir"), 0o700))
	st := h.drain()
	if st.Reaped != 5 {
		t.Errorf("reaped %d, want 5", st.Reaped)
	}
	if _, err := os.Stat(filepath.Join(nonces, "old-dir")); err != nil {
		t.Errorf("a directory in nonces/ was removed: %v", err)
	}
	for p, age := range files {
		_, err := os.Lstat(p)
		gone := err != nil
		wantGone := strings.Contains(filepath.Base(p), "old") || strings.Contains(p, "stale")
		if gone != wantGone {
			t.Errorf("%s (age %v): gone = %v, want %v", filepath.Base(p), age, gone, wantGone)
		}
	}
}

// TestLogNeverFollowsSymlink: a symlink planted at control/log.txt is not
// followed (its target is untouched); the worker still serves and status
// reports log_file false.
func TestLogNeverFollowsSymlink(t *testing.T) {
	root := bridgeDir(t)
	must(t, os.MkdirAll(filepath.Join(root, ControlDir), 0o700))
	target := filepath.Join(t.TempDir(), "victim.txt")
	must(t, os.WriteFile(target, []byte("precious"), 0o600))
	must(t, os.Symlink(target, filepath.Join(root, ControlDir, LogName)))
	w, err := NewWorker(Options{Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	putRaw(t, filepath.Join(root, ControlDir, RequestsDir), RequestName("l1"), request("l1", "status", nil, ""))
	if _, err := w.Drain(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(root, ControlDir, ResponsesDir, ResponseName("l1")))
	var got map[string]any
	must(t, json.Unmarshal(data, &got))
	if got["checks"].(map[string]any)[CheckLogFile] != false {
		t.Errorf("status checks = %v", got["checks"])
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("symlink target written: %q", b)
	}
	if fi, _ := os.Lstat(filepath.Join(root, ControlDir, LogName)); fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced")
	}
}

// TestLogHasNoContent: the log records ids, actions and outcomes, never
// parameters or answers.
func TestLogHasNoContent(t *testing.T) {
	h := newHarness(t, "")
	h.roundTrip("c1", request("c1", ActionSearch, map[string]any{"term": "SENTINEL-TERM"}, ""))
	h.roundTrip("c2", request("c2", ActionChatHistory, map[string]any{"chat": "SENTINEL-CHAT"}, ""))
	h.w.Close()
	data, err := os.ReadFile(h.path(ControlDir, LogName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "id=c1") || !strings.Contains(string(data), "action=search") {
		t.Errorf("log lacks the request record:\n%s", data)
	}
	for _, s := range []string{"SENTINEL", "dinner", "Thursday", "Angel"} {
		if strings.Contains(string(data), s) {
			t.Errorf("log contains %q:\n%s", s, data)
		}
	}
}

// TestRepeatedIDRefused: an id is answered once in the folder's lifetime,
// across worker restarts; a repeat is refused without overwriting an
// unread response.
func TestRepeatedIDRefused(t *testing.T) {
	h := newHarness(t, "")
	if got := h.roundTrip("dup", request("dup", "status", nil, "")); got["ok"] != true {
		t.Fatal(got)
	}
	// Same id again, same worker.
	got := h.roundTrip("dup", request("dup", "status", nil, ""))
	if got["ok"] != false || !strings.Contains(got["error"].(string), "already used") {
		t.Errorf("repeat: %v", got)
	}
	if _, has := got["error_code"]; has {
		t.Errorf("a 1.2 repeat carries error_code: %v", got)
	}
	// A 1.3 client gets its error_code.
	got = h.roundTrip("dup", request("dup", "status", nil, "1.3"))
	if got["ok"] != false || got["error_code"] != CodeDuplicateID {
		t.Errorf("1.3 repeat: %v", got)
	}
	// A new worker (a restart) remembers.
	h.w.Close()
	h.w = h.worker()
	got = h.roundTrip("dup", request("dup", ActionSearch, map[string]any{"term": "x"}, ""))
	if got["ok"] != false || !strings.Contains(got["error"].(string), "already used") {
		t.Errorf("after restart: %v", got)
	}
	if len(h.fake.Calls()) != 0 {
		t.Errorf("a refused repeat reached the backend: %v", h.fake.Calls())
	}
	// An unread response is never overwritten by the refusal.
	h.put("keep", request("keep", "status", nil, ""))
	h.drain()
	h.put("keep", request("keep", ActionSearch, map[string]any{"term": "x"}, ""))
	st := h.drain()
	if st.Duplicates != 1 {
		t.Errorf("duplicates = %d", st.Duplicates)
	}
	if got := h.response("keep"); got["ok"] != true || got["action"] != "status" {
		t.Errorf("the first answer was overwritten: %v", got)
	}
	if h.exists(ControlDir, RequestsDir, RequestName("keep")) {
		t.Errorf("repeated request not removed")
	}
}

// TestCrashRecovery simulates a worker killed at each step of answering:
// the request is answered exactly once overall.
func TestCrashRecovery(t *testing.T) {
	t.Run("killed after preparing and recording", func(t *testing.T) {
		h := newHarness(t, "")
		h.put("k1", request("k1", ActionSearch, map[string]any{"term": "x"}, ""))
		fi, _ := h.w.requests.lstat(RequestName("k1"))
		prepared := []byte(`{"id":"k1","ok":true,"action":"search","term":"x","days":30,"match_count":0,"matches":[]}` + "\n")
		must(t, os.WriteFile(h.path(ControlDir, ResponsesDir, tempName("k1")), prepared, 0o600))
		must(t, h.w.ids.add("k1", identity(fi)))
		h.w.Close()
		h.w = h.worker()
		st := h.drain()
		if st.Recovered != 1 || st.Answered != 0 {
			t.Errorf("stats %+v", st)
		}
		if got := h.response("k1"); got["ok"] != true || got["term"] != "x" {
			t.Errorf("recovered response %v", got)
		}
		if len(h.fake.Calls()) != 0 {
			t.Errorf("recovery re-ran the action: %v", h.fake.Calls())
		}
		if h.exists(ControlDir, RequestsDir, RequestName("k1")) {
			t.Errorf("request left")
		}
	})
	t.Run("killed after publishing, before removing the request", func(t *testing.T) {
		h := newHarness(t, "")
		h.put("k2", request("k2", "status", nil, ""))
		fi, _ := h.w.requests.lstat(RequestName("k2"))
		must(t, h.w.ids.add("k2", identity(fi)))
		// The client already read and deleted the response.
		h.w = h.worker()
		st := h.drain()
		if st.Recovered != 1 || st.Answered != 0 {
			t.Errorf("stats %+v", st)
		}
		if names := dirNames(t, h.path(ControlDir, ResponsesDir)); len(names) != 0 {
			t.Errorf("answered twice: %v", names)
		}
	})
	t.Run("killed before recording", func(t *testing.T) {
		h := newHarness(t, "")
		h.put("k3", request("k3", "status", nil, ""))
		must(t, os.WriteFile(h.path(ControlDir, ResponsesDir, tempName("k3")), []byte("{partial"), 0o600))
		h.w = h.worker()
		st := h.drain()
		if st.Answered != 1 {
			t.Errorf("stats %+v", st)
		}
		if got := h.response("k3"); got["ok"] != true {
			t.Errorf("got %v", got)
		}
	})
	t.Run("torn id record line", func(t *testing.T) {
		h := newHarness(t, "")
		f, err := os.OpenFile(h.path(ControlDir, idRecordName), os.O_WRONLY|os.O_APPEND, 0)
		must(t, err)
		f.WriteString("r torn 12ab") // no terminator: a power cut mid-line
		f.Close()
		h.w = h.worker()
		if got := h.roundTrip("torn", request("torn", "status", nil, "")); got["ok"] != true {
			t.Errorf("a torn line must not count as an answered id: %v", got)
		}
		h.w = h.worker()
		if got := h.roundTrip("torn", request("torn", "status", nil, "")); got["ok"] != false {
			t.Errorf("the id recorded after the torn line was lost: %v", got)
		}
	})
}

// TestProcessingOrder: requests are served oldest first.
func TestProcessingOrder(t *testing.T) {
	h := newHarness(t, "", func(o *Options) { o.Parallel = 1 })
	base := time.Now().Add(-time.Hour)
	order := []string{"c", "a", "d", "b"}
	terms := map[string]string{}
	for i, id := range order {
		terms[id] = fmt.Sprintf("t%d", i)
		h.put(id, request(id, ActionSearch, map[string]any{"term": terms[id]}, ""))
		at := base.Add(time.Duration(i) * time.Second)
		must(t, os.Chtimes(h.path(ControlDir, RequestsDir, RequestName(id)), at, at))
	}
	h.drain()
	var got []string
	for _, p := range h.fake.params {
		got = append(got, p.(SearchParams).Term)
	}
	if !slices.Equal(got, []string{"t0", "t1", "t2", "t3"}) {
		t.Errorf("order = %v", got)
	}
}

// TestTwoWorkers: two workers on one folder (started by mistake) never
// lose or double-answer a request.
func TestTwoWorkers(t *testing.T) {
	h := newHarness(t, "")
	w2 := h.worker()
	const n = 300
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	for _, w := range []*Worker{h.w, w2} {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := w.Drain(ctx); err != nil && ctx.Err() == nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range n {
		id := fmt.Sprintf("tw%d", i)
		h.put(id, request(id, ActionSearch, map[string]any{"term": id}, ""))
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(dirNames(t, h.path(ControlDir, ResponsesDir))) < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	calls := h.fake.Calls()
	if len(calls) != n {
		t.Errorf("backend calls = %d, want %d (lost or double-answered)", len(calls), n)
	}
	seen := map[string]int{}
	for _, p := range h.fake.params {
		seen[p.(SearchParams).Term]++
	}
	for i := range n {
		id := fmt.Sprintf("tw%d", i)
		if seen[id] != 1 {
			t.Errorf("%s answered %d times", id, seen[id])
		}
		if got := h.response(id); got["ok"] != true {
			t.Errorf("%s: %v", id, got)
		}
	}
}

// TestEachVersionSeesExactlyItsActionsAndFields: a 1.2 request sees exactly
// 1.2; a 1.3 request sees the extension actions, extra status fields (which
// never overwrite protocol 1.2's) and error codes. A body-returning extension is
// never served to a manager, and no extension may shadow a 1.2 action.
func TestEachVersionSeesExactlyItsActionsAndFields(t *testing.T) {
	ext := Extension{Name: "list_conversations", Host: true, ReturnsBodies: false,
		Handle: func(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
			var p struct {
				Days float64 `json:"days"`
			}
			json.Unmarshal(params, &p)
			return map[string]any{"days": p.Days, "conversations": []string{}}, nil
		}}
	bodies := Extension{Name: "contact_dossier", Host: true, Manager: true, ReturnsBodies: true,
		Handle: func(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
			return map[string]any{"dossier": "x"}, nil
		}}
	extraCalls := 0
	bad := Extension{Name: "broken", Host: true,
		Handle: func(ctx context.Context, b Backend, params json.RawMessage) (any, error) {
			return map[string]any{"ok": false}, nil
		}}
	h := newHarness(t, "", func(o *Options) {
		o.Extensions = []Extension{ext, bodies, bad}
		o.Status = func(ctx context.Context) StatusDetails {
			return StatusDetails{Extra: map[string]any{"index": map[string]any{"state": "ready"}, "policy": "collides"}}
		}
		o.StatusExtra = func(ctx context.Context) map[string]any {
			extraCalls++
			return map[string]any{"live": extraCalls, "bridge_role": "collides"}
		}
	})
	s12 := h.roundTrip("v1", request("v1", "status", nil, ""))
	if s12["protocol_version"] != "1.2" || s12["extension_actions"] != nil || s12["index"] != nil || s12["live"] != nil || extraCalls != 0 {
		t.Errorf("1.2 status = %v (StatusExtra called %d times)", s12, extraCalls)
	}
	checkAllowed(t, s12, AllowedActions(RoleHost, Version12, nil))
	s13 := h.roundTrip("v2", request("v2", "status", nil, "1.3"))
	if s13["protocol_version"] != "1.3" || s13["index"] == nil || s13["go_version"] == nil || s13["live"] != 1.0 || s13["bridge_role"] != "host" {
		t.Errorf("1.3 status = %v", s13)
	}
	if s := h.roundTrip("v2b", request("v2b", "status", nil, "1.3")); s["live"] != 2.0 {
		t.Errorf("StatusExtra is not asked on every 1.3 status: %v", s["live"])
	}
	if _, isObj := s13["policy"].(map[string]any); !isObj {
		t.Errorf("an extra field overwrote policy: %v", s13["policy"])
	}
	checkAllowed(t, s13, []string{"broken", "chat_history", "contact_dossier", "contacts_lookup", "list_conversations",
		"response_stats", "review", "search", "send", "send_preview", "status"})
	if got := h.roundTrip("v3", request("v3", "list_conversations", map[string]any{"days": 7}, "")); got["ok"] != false ||
		!strings.HasPrefix(got["error"].(string), "unknown action") {
		t.Errorf("a 1.2 client reached a 1.3 action: %v", got)
	}
	if got := h.roundTrip("v4", request("v4", "list_conversations", map[string]any{"days": 7}, "1.3")); got["ok"] != true || got["days"] != 7.0 {
		t.Errorf("1.3 extension: %v", got)
	}
	if got := h.roundTrip("v5", request("v5", "nope", nil, "1.3")); got["error_code"] != CodeUnknownAction {
		t.Errorf("1.3 error: %v", got)
	}
	if got := h.roundTrip("v6", request("v6", "broken", nil, "1.9")); got["ok"] != false || got["error_code"] != CodeInternal {
		t.Errorf("a result with envelope keys must fail: %v", got)
	}
	// A body-returning extension is never served to a manager.
	m := newHarness(t, "manager", func(o *Options) { o.Extensions = []Extension{ext, bodies} })
	if got := m.roundTrip("v7", request("v7", "contact_dossier", nil, "1.3")); got["error"] != ErrTextNotPermitted {
		t.Errorf("manager got a body-returning extension: %v", got)
	}
	if _, err := NewWorker(Options{Dir: bridgeDir(t), Extensions: []Extension{{Name: "search", Host: true, Handle: ext.Handle}}}); err == nil {
		t.Errorf("an extension shadowing a 1.2 action was accepted")
	}
}
