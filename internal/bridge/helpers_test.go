//go:build unix

package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeBackend answers every action with protocol 1.2's example data and
// records what it was asked. opened counts Open calls (a database open in
// a real helper).
type fakeBackend struct {
	mu     sync.Mutex
	calls  []string // action names, in order
	params []any
	ex     map[string]json.RawMessage // action → example response
	delay  time.Duration
	err    error
}

func newFake(t testing.TB) *fakeBackend {
	t.Helper()
	f, err := loadFake()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func loadFake() (*fakeBackend, error) {
	data, err := os.ReadFile(filepath.Join("testdata", "seed", "examples.json"))
	if err != nil {
		return nil, err
	}
	var all map[string]struct {
		Response json.RawMessage `json:"response"`
	}
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	f := &fakeBackend{ex: map[string]json.RawMessage{}}
	for k, v := range all {
		f.ex[k] = v.Response
	}
	return f, nil
}

func (f *fakeBackend) record(action string, p any) error {
	f.mu.Lock()
	f.calls = append(f.calls, action)
	f.params = append(f.params, p)
	d, err := f.delay, f.err
	f.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
	return err
}

func (f *fakeBackend) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func fill[T any](f *fakeBackend, action string) T {
	var v T
	if err := json.Unmarshal(f.ex[action], &v); err != nil {
		panic(err)
	}
	return v
}

func (f *fakeBackend) Review(_ context.Context, p ReviewParams) (ReviewResult, error) {
	return fill[ReviewResult](f, ActionReview), f.record(ActionReview, p)
}
func (f *fakeBackend) Search(_ context.Context, p SearchParams) (SearchResult, error) {
	return fill[SearchResult](f, ActionSearch), f.record(ActionSearch, p)
}
func (f *fakeBackend) ChatHistory(_ context.Context, p ChatHistoryParams) (ChatHistoryResult, error) {
	return fill[ChatHistoryResult](f, ActionChatHistory), f.record(ActionChatHistory, p)
}
func (f *fakeBackend) ResponseStats(_ context.Context, p ResponseStatsParams) (ResponseStatsResult, error) {
	return fill[ResponseStatsResult](f, ActionResponseStats), f.record(ActionResponseStats, p)
}
func (f *fakeBackend) ContactsLookup(_ context.Context, p ContactsLookupParams) (ContactsLookupResult, error) {
	return fill[ContactsLookupResult](f, ActionContactsLookup), f.record(ActionContactsLookup, p)
}
func (f *fakeBackend) ListChats(_ context.Context, p ListChatsParams) (ListChatsResult, error) {
	return fill[ListChatsResult](f, ActionListChats), f.record(ActionListChats, p)
}
func (f *fakeBackend) SendPreview(_ context.Context, p SendPreviewParams) (SendPreviewResult, error) {
	return fill[SendPreviewResult](f, ActionSendPreview), f.record(ActionSendPreview, p)
}
func (f *fakeBackend) Send(_ context.Context, p SendParams) (SendResult, error) {
	if p.Nonce == "" {
		f.record(ActionSend, p)
		return SendResult{}, errors.New(ErrTextMissingNonce)
	}
	return fill[SendResult](f, ActionSend), f.record(ActionSend, p)
}

// harness is a bridge folder with a worker over a fake backend.
type harness struct {
	t      testing.TB
	dir    string
	fake   *fakeBackend
	opens  int
	openMu sync.Mutex
	w      *Worker
	opts   Options
}

// bridgeDir returns a fresh 0700 bridge folder.
func bridgeDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "bridge")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o700); err != nil { // whatever the umask
		t.Fatal(err)
	}
	return d
}

func newHarness(t testing.TB, role string, mod ...func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, dir: bridgeDir(t), fake: newFake(t)}
	h.opts = Options{
		Dir:           h.dir,
		Role:          role,
		HelperVersion: "test-1",
		CodeRoot:      "/opt/tidings",
		Open: func(ctx context.Context, r Role) (Backend, error) {
			h.openMu.Lock()
			h.opens++
			h.openMu.Unlock()
			return h.fake, nil
		},
	}
	for _, m := range mod {
		m(&h.opts)
	}
	h.w = h.worker()
	return h
}

func (h *harness) worker() *Worker {
	h.t.Helper()
	w, err := NewWorker(h.opts)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { w.Close() })
	return w
}

func (h *harness) opened() int {
	h.openMu.Lock()
	defer h.openMu.Unlock()
	return h.opens
}

func (h *harness) path(elem ...string) string {
	return filepath.Join(append([]string{h.dir}, elem...)...)
}

// put writes a raw request file as a client would (temp + rename).
func (h *harness) put(id string, body []byte) {
	h.t.Helper()
	putRaw(h.t, h.path(ControlDir, RequestsDir), RequestName(id), body)
}

func putRaw(t testing.TB, dir, name string, body []byte) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, body, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// request encodes a request object.
func request(id, action string, params any, version string) []byte {
	m := map[string]any{"id": id, "action": action, "params": params}
	if params == nil {
		m["params"] = map[string]any{}
	}
	if version != "" {
		m["protocol_version"] = version
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func (h *harness) drain() Stats {
	h.t.Helper()
	st, err := h.w.Drain(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

// response reads (and removes) response-<id>.json as a generic object.
func (h *harness) response(id string) map[string]any {
	h.t.Helper()
	p := h.path(ControlDir, ResponsesDir, ResponseName(id))
	data, err := os.ReadFile(p)
	if err != nil {
		h.t.Fatalf("no response for %s: %v", id, err)
	}
	os.Remove(p)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		h.t.Fatalf("response %s is not JSON: %v\n%s", id, err, data)
	}
	return m
}

// roundTrip queues one request, drains, and returns the response.
func (h *harness) roundTrip(id string, body []byte) map[string]any {
	h.t.Helper()
	h.put(id, body)
	h.drain()
	return h.response(id)
}

func (h *harness) exists(elem ...string) bool {
	_, err := os.Lstat(h.path(elem...))
	return err == nil
}

func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
