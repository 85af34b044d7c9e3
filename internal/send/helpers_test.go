package send

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/imessage/chatdb"
	"github.com/tidings-mcp/tidings/internal/imessage/schemas"
	"github.com/tidings-mcp/tidings/internal/policy"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: testclock.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// staticPolicy is a PolicySource with a fixed policy or error.
type staticPolicy struct {
	mu  sync.Mutex
	p   *policy.Policy
	err error
}

func (s *staticPolicy) Current() (*policy.Policy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p, s.err
}

func (s *staticPolicy) set(t *testing.T, mode policy.Mode, blocked, allowed []string) {
	t.Helper()
	p, err := policy.New(mode, blocked, allowed)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.p, s.err = p, nil
	s.mu.Unlock()
}

// names is a NameResolver backed by a map.
type names map[string]string

func (n names) DisplayName(h string) string { return n[h] }

// fakeConfirmer records requests and answers as told.
type fakeConfirmer struct {
	mu       sync.Mutex
	answer   Answer
	err      error
	unavail  error
	requests []ConfirmRequest
}

func (f *fakeConfirmer) Name() string     { return "fake" }
func (f *fakeConfirmer) Available() error { return f.unavail }
func (f *fakeConfirmer) Confirm(_ context.Context, r ConfirmRequest) (Answer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	return f.answer, f.err
}
func (f *fakeConfirmer) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// fakeSender records messages and returns a fixed delivery.
type fakeSender struct {
	mu       sync.Mutex
	delivery Delivery
	err      error
	unavail  error
	sent     []Outgoing
}

func (f *fakeSender) Name() string     { return "fake" }
func (f *fakeSender) Available() error { return f.unavail }
func (f *fakeSender) Send(_ context.Context, m Outgoing) (Delivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m)
	return f.delivery, f.err
}
func (f *fakeSender) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sent)
}

// harness is a gate with fakes around it.
type harness struct {
	g      *Gate
	home   string
	clock  *clock
	pol    *staticPolicy
	conf   *fakeConfirmer
	sender *fakeSender
	opts   Options
}

func newHarness(t *testing.T, mutate ...func(*Options)) *harness {
	t.Helper()
	h := &harness{
		home:   filepath.Join(t.TempDir(), "home"),
		clock:  newClock(),
		pol:    &staticPolicy{},
		conf:   &fakeConfirmer{answer: AnswerApproved},
		sender: &fakeSender{delivery: Delivery{Status: DeliverySent, Rows: []RowStatus{{RowID: 7, Part: PartText, IsSent: true}}, Note: "chat.db shows the message as sent"}},
	}
	h.pol.set(t, policy.ModeBlocklist, nil, nil)
	h.opts = Options{
		Home: h.home, Now: h.clock.Now, Location: time.UTC, Region: "US",
		Policy: h.pol, Names: names{"+14155551234": "Alex Example", "bob@example.com": "Bob"},
		Confirmer: h.conf, Sender: h.sender,
	}
	for _, m := range mutate {
		m(&h.opts)
	}
	g, err := New(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	h.g = g
	return h
}

// reopen builds a second gate on the same home (a restart).
func (h *harness) reopen(t *testing.T) *Gate {
	t.Helper()
	g, err := New(h.opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (h *harness) preview(t *testing.T, to, text string) PreviewResult {
	t.Helper()
	res, err := h.g.Preview(context.Background(), PreviewRequest{To: to, Text: text})
	if err != nil {
		t.Fatalf("Preview(%q): %v", to, err)
	}
	return res
}

func wantCode(t *testing.T, err error, want Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want code %s", want)
	}
	if got := CodeOf(err); got != want {
		t.Fatalf("code = %q (%v), want %q", got, err, want)
	}
}

func readAudit(t *testing.T, home string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, auditFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return b
}

// ---- chat.db fixture ----

// chatDB is a fixture chat.db built from the real macOS 15 schema.
type chatDB struct {
	t    testing.TB
	path string
	db   *sql.DB
	rows *chatdb.Writer
	seq  int
}

func newChatDB(t testing.TB) *chatDB {
	t.Helper()
	ddl, err := schemas.DDL("macos15")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chat.db")
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(ddl); err != nil {
		t.Fatalf("create chat.db: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return &chatDB{t: t, path: path, db: db, rows: chatdb.ForTest(t, db)}
}

func (c *chatDB) exec(q string, args ...any) sql.Result {
	c.t.Helper()
	r, err := c.db.Exec(q, args...)
	if err != nil {
		c.t.Fatalf("%s: %v", q, err)
	}
	return r
}

// direct creates a handle and a direct chat for addr and returns their
// ROWIDs.
func (c *chatDB) direct(addr, service string) (handle, chat int64) {
	c.t.Helper()
	h := c.rows.Handle(chatdb.Handle{ID: addr, Service: service, Uncanonicalized: addr})
	ch := c.rows.Chat(chatdb.Chat{GUID: service + ";-;" + addr, Style: 45, State: 3, Identifier: addr, Service: service, Handles: []int64{h}})
	return h, ch
}

// message inserts a message row in chat and returns its ROWID.
func (c *chatDB) message(chat, handle int64, fromMe bool, text *string, body []byte, isSent bool, errCode int, attach bool) int64 {
	c.t.Helper()
	c.seq++
	m := chatdb.Message{GUID: fmt.Sprintf("msg-%d", c.seq), Body: body, Handle: handle, Service: "iMessage", FromMe: fromMe,
		Sent: isSent, Error: errCode, HasAttachments: attach, Date: int64(c.seq), Chats: []int64{chat}}
	if text != nil {
		m.Text = *text
	}
	return c.rows.Message(m)
}

func (c *chatDB) markSent(rowid int64, errCode int) {
	c.t.Helper()
	sent := 1
	if errCode != 0 {
		sent = 0
	}
	c.exec(`UPDATE message SET is_sent = ?, error = ? WHERE ROWID = ?`, sent, errCode, rowid)
}

func strp(s string) *string { return &s }

// fakeRunner records commands, captures the files they name while the
// "process" runs, and returns scripted results. It never starts a process.
type fakeRunner struct {
	mu      sync.Mutex
	cmds    []Command
	files   []map[string][]byte // per call: every existing file argument
	results []RunResult
	err     error
	onRun   func(c Command)
}

func (f *fakeRunner) Run(_ context.Context, c Command) (RunResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cmds = append(f.cmds, c)
	got := map[string][]byte{}
	for _, a := range c.Args {
		for _, p := range []string{a, trimFlag(a)} {
			if filepath.IsAbs(p) {
				if b, err := os.ReadFile(p); err == nil {
					got[p] = b
				}
			}
		}
	}
	f.files = append(f.files, got)
	if f.onRun != nil {
		f.onRun(c)
	}
	if f.err != nil {
		return RunResult{}, f.err
	}
	i := len(f.cmds) - 1
	if i < len(f.results) {
		return f.results[i], nil
	}
	if len(f.results) > 0 {
		return f.results[len(f.results)-1], nil
	}
	return RunResult{}, nil
}

// trimFlag returns the value of a --flag=value argument.
func trimFlag(a string) string {
	for i := 0; i < len(a); i++ {
		if a[i] == '=' {
			return a[i+1:]
		}
	}
	return a
}

// wantScriptFile fails unless the embedded script is byte for byte its
// reviewed source, scripts/name.
func wantScriptFile(t *testing.T, name, embedded string) {
	t.Helper()
	onDisk, err := os.ReadFile(filepath.Join("scripts", name))
	if err != nil {
		t.Fatal(err)
	}
	if string(onDisk) != embedded {
		t.Fatalf("embedded script differs from scripts/%s", name)
	}
}

// wantGone fails if path (a temporary file or folder, named what in the
// message) still exists.
func wantGone(t *testing.T, path, what string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("%s left behind (stat: %v)", what, err)
	}
}
