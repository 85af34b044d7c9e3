//go:build unix

package bridge

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lockedBuffer is a log sink that Watch's goroutine and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWatchSurvivesUnsafeFolder: a runtime folder that turns unsafe while
// the helper watches (docs/bridge.md, "The worker") refuses those passes —
// nothing is read from or written to it, the refusal is logged once, not
// once per poll — and the helper keeps running; once the folder is safe
// again the queued request is answered.
func TestWatchSurvivesUnsafeFolder(t *testing.T) {
	// A change makes a folder unsafe; it returns where a client's request
	// lands meanwhile (the real requests folder) and how to undo it.
	type change func(t *testing.T, h *harness) (queue string, restore func())
	chmod := func(elem []string, mode os.FileMode) change {
		return func(t *testing.T, h *harness) (string, func()) {
			p := h.path(elem...)
			must(t, os.Chmod(p, mode))
			return h.path(ControlDir, RequestsDir), func() { must(t, os.Chmod(p, 0o700)) }
		}
	}
	// swap replaces a runtime folder with a symlink to a look-alike folder
	// holding a planted request: it must never be answered.
	swap := func(elem ...string) change {
		return func(t *testing.T, h *harness) (string, func()) {
			p := h.path(elem...)
			elsewhere := filepath.Join(t.TempDir(), "elsewhere")
			plantIn := elsewhere
			if elem[len(elem)-1] == ControlDir {
				plantIn = filepath.Join(elsewhere, RequestsDir)
				must(t, os.MkdirAll(filepath.Join(elsewhere, ResponsesDir), 0o700))
			}
			must(t, os.MkdirAll(plantIn, 0o700))
			putRaw(t, plantIn, RequestName("planted"), request("planted", "status", nil, ""))
			must(t, os.Rename(p, p+".away"))
			must(t, os.Symlink(elsewhere, p))
			queue := h.path(ControlDir, RequestsDir)
			switch elem[len(elem)-1] {
			case ControlDir:
				queue = filepath.Join(p+".away", RequestsDir)
			case RequestsDir:
				queue = p + ".away"
			}
			return queue, func() {
				must(t, os.Remove(p))
				must(t, os.Rename(p+".away", p))
				if got := dirNames(t, plantIn); len(got) != 1 || got[0] != RequestName("planted") {
					t.Errorf("the symlink's target was changed: %v", got)
				}
			}
		}
	}
	cases := []struct {
		name   string
		change change
	}{
		{"requests world-writable", chmod([]string{ControlDir, RequestsDir}, 0o777)},
		{"responses group-readable", chmod([]string{ControlDir, ResponsesDir}, 0o750)},
		{"control world-readable", chmod([]string{ControlDir}, 0o704)},
		{"bridge folder group-writable", chmod(nil, 0o770)},
		{"nonces group-readable", chmod([]string{NoncesDir}, 0o740)},
		{"requests replaced by a symlink", swap(ControlDir, RequestsDir)},
		{"responses replaced by a symlink", swap(ControlDir, ResponsesDir)},
		{"control replaced by a symlink", swap(ControlDir)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logs := &lockedBuffer{}
			// The worker ages request files by their real modification
			// times against this clock, so it is the real time, read once.
			clock := time.Now()
			h := newHarness(t, "", func(o *Options) {
				o.Logger = slog.New(slog.NewTextHandler(logs, nil))
				o.Now = func() time.Time { return clock } // pinned: the repeat interval never passes
				o.Rescan = 5 * time.Millisecond
			})
			var refused atomic.Int64
			pass := make(chan struct{}, 1)
			// hold parks the watch loop after a pass (the hook runs on its
			// goroutine) while a restore swaps folders: the helper recreates a
			// runtime folder it finds missing, which would race the restore's
			// remove-then-rename.
			var holding atomic.Bool
			parked, release := make(chan struct{}), make(chan struct{})
			h.w.passed = func(err error) {
				if errors.Is(err, ErrUnsafe) {
					refused.Add(1)
				}
				if holding.Load() {
					parked <- struct{}{}
					<-release
				}
				select {
				case pass <- struct{}{}:
				default:
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			ended := make(chan struct{})
			var watchErr error
			go func() { watchErr = h.w.Watch(ctx); close(ended) }()
			defer func() {
				cancel()
				<-ended
				if watchErr != nil {
					t.Errorf("watch: %v", watchErr)
				}
			}()
			waitFor := func(what string, cond func() bool) {
				t.Helper()
				deadline := time.After(time.Minute) // a hang guard, not a timing threshold
				for !cond() {
					select {
					case <-pass:
					case <-ended:
						t.Fatalf("Watch returned (%v) while waiting for %s; it must keep serving", watchErr, what)
					case <-deadline:
						t.Fatalf("gave up waiting for %s", what)
					}
				}
			}
			h.put("first", request("first", "status", nil, ""))
			waitFor("the first answer", func() bool { return h.exists(ControlDir, ResponsesDir, ResponseName("first")) })

			// parkedDo runs fn while the watch loop is parked after a pass, so
			// a swap or restore of folders never races the helper recreating
			// a folder it finds missing.
			parkedDo := func(fn func()) {
				holding.Store(true)
				select {
				case <-parked:
				case <-ended:
					t.Fatalf("Watch returned (%v) while a folder change waited", watchErr)
				}
				holding.Store(false)
				fn()
				release <- struct{}{}
			}
			var queue string
			var restore func()
			parkedDo(func() { queue, restore = tc.change(t, h) })
			// A pass that began before the change may still finish on the
			// folder it opened while it was safe: queue the request once a
			// pass has seen the change.
			waitFor("a refused pass", func() bool { return refused.Load() >= 1 })
			putRaw(t, queue, RequestName("queued"), request("queued", "status", nil, ""))
			start := refused.Load()
			waitFor("five refused passes", func() bool { return refused.Load() >= start+5 })
			if _, err := os.Stat(filepath.Join(queue, RequestName("queued"))); err != nil {
				t.Fatalf("a request was taken while a runtime folder was unsafe: %v", err)
			}
			if n := strings.Count(logs.String(), "refusing to serve"); n != 1 {
				t.Errorf("the refusal was logged %d times over %d passes, want once:\n%s", n, refused.Load(), logs)
			}

			parkedDo(restore)
			waitFor("the queued answer", func() bool { return h.exists(ControlDir, ResponsesDir, ResponseName("queued")) })
			if got := h.response("queued"); got["ok"] != true {
				t.Errorf("after the folder was restored: %v", got)
			}
			if h.exists(ControlDir, ResponsesDir, ResponseName("planted")) {
				t.Error("the request planted in the symlink's target was answered")
			}
			if !strings.Contains(logs.String(), "safe again") {
				t.Errorf("the recovery was not logged:\n%s", logs)
			}
		})
	}
}

// TestBridgeErrorsQuotingInputAreEscaped: an error response's text may
// quote a file or the request (a backend that cannot read an export names
// its root element): control characters and bidi overrides are escaped
// and the length bounded before it is written (docs/security.md, "Errors
// that quote input"), so no client prints them raw.
func TestBridgeErrorsQuotingInputAreEscaped(t *testing.T) {
	for name, msg := range map[string]string{
		"osc":  "android export: root element <\x1b]0;pwned\x07>, want <smses>",
		"c1":   "root element <x\u009b31m>",
		"bidi": "file \u202egnp.exe",
		"long": strings.Repeat("\x1b[2J", 10000),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, "", func(o *Options) {
				o.Open = func(context.Context, Role) (Backend, error) { return nil, errors.New(msg) }
			})
			got := h.roundTrip("e1", request("e1", ActionSearch, map[string]any{"term": "x"}, ""))
			text, _ := got["error"].(string)
			if got["ok"] != false || text == "" {
				t.Fatalf("response = %v", got)
			}
			for _, r := range text {
				if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e {
					t.Fatalf("raw %U in the error response: %q", r, text)
				}
			}
			if len(text) > 10000 {
				t.Errorf("the error is %d bytes: quoted input must be bounded", len(text))
			}
		})
	}
}
