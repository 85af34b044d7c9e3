package mail

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/tidings-mcp/tidings/internal/mcpserver"
	"github.com/tidings-mcp/tidings/internal/mcpserver/mcptest"
	"github.com/tidings-mcp/tidings/internal/send"
	"github.com/tidings-mcp/tidings/internal/testclock"
)

// sink is go-smtp's server as an SMTP sink on loopback: it records every
// message it accepts.
type sink struct {
	mu   sync.Mutex
	msgs []sunk
	addr string
}

type sunk struct {
	from  string
	rcpts []string
	data  []byte
}

type sinkSession struct {
	s   *sink
	cur sunk
}

func (ss *sinkSession) Reset()        { ss.cur = sunk{} }
func (ss *sinkSession) Logout() error { return nil }
func (ss *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	ss.cur.from = from
	return nil
}
func (ss *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.cur.rcpts = append(ss.cur.rcpts, to)
	return nil
}
func (ss *sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.cur.data = b
	ss.s.mu.Lock()
	ss.s.msgs = append(ss.s.msgs, ss.cur)
	ss.s.mu.Unlock()
	return nil
}

func startSink(t *testing.T) *sink {
	t.Helper()
	s := &sink{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &sinkSession{s: s}, nil }))
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = time.Minute, time.Minute
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return s
}

func (s *sink) all() []sunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// approver is a confirmer that answers as told and counts dialogs.
type approver struct {
	mu     sync.Mutex
	answer send.Answer
	asked  []send.ConfirmRequest
}

func (a *approver) Name() string     { return "test" }
func (a *approver) Available() error { return nil }
func (a *approver) Confirm(_ context.Context, r send.ConfirmRequest) (send.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, r)
	return a.answer, nil
}

type sendSet struct {
	sink  *sink
	conf  *approver
	st    *Store
	files string
	home  string
}

// sendServer is the mail service with preview_mail and mail_send: the
// "work" account submits to the sink and keeps its Sent copy in the
// in-memory IMAP server.
func sendServer(t *testing.T, noSentCopy bool) (*sendSet, func(name, args string) (bool, string, map[string]any)) {
	t.Helper()
	set := &sendSet{sink: startSink(t), conf: &approver{answer: send.AnswerApproved}, st: mailSet(t), files: t.TempDir(), home: t.TempDir()}
	sub, err := NewSMTP(SMTPConfig{Account: "work", URL: "smtp://" + set.sink.addr})
	if err != nil {
		t.Fatal(err)
	}
	snd := &Sender{St: set.st, SMTP: map[string]*SMTP{"work": sub}, NoSentCopy: map[string]bool{"work": noSentCopy}}
	gate, err := send.NewMailGate(send.Options{Home: set.home, Now: testclock.Anchor, Location: time.UTC, Region: "US",
		Policy: policyHome(t, []string{blockedAddr}, nil), Confirmer: set.conf}, snd)
	if err != nil {
		t.Fatal(err)
	}
	svc := Service(set.st)
	svc.Tools = append(svc.Tools, SendTools(set.st, snd, gate)...)
	p := &mcpserver.Profile{Access: "write", AllowExternal: true, FileDirs: []string{set.files}}
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test", Profile: p}, mcpserver.Filters{Toolsets: []string{"mail"}, Profile: p}, svc)
	if err != nil {
		t.Fatal(err)
	}
	cs := mcptest.Sessions(t, srv)["stdio"]
	return set, func(name, args string) (bool, string, map[string]any) { return mcptest.Call(t, cs, name, args) }
}

const sendArgs = `{"account":"work","to":["Ana <ana@example.org>"],"bcc":["carla@example.org"],"subject":"Lunch","body":"Thursday at one?"%s}`

func withNonce(args, nonce string) string {
	return strings.TrimSuffix(args, "}") + `,"send_nonce":"` + nonce + `"}`
}

func TestMailSendDeliversThenSavesTheExactBytesToSent(t *testing.T) {
	set, call := sendServer(t, false)
	att := filepath.Join(set.files, "menu.txt")
	if err := os.WriteFile(att, []byte("soup\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := strings.Replace(sendArgs, "%s", `,"attachments":["`+att+`"]`, 1)
	isErr, text, pv := call("preview_mail", args)
	if isErr || pv["send_nonce"] == nil || pv["from"] != "me@example.com" {
		t.Fatalf("preview: %s %v", text, pv)
	}
	if got := len(set.sink.all()); got != 0 {
		t.Fatalf("the preview sent %d messages", got)
	}
	isErr, text, sent := call("mail_send", withNonce(args, pv["send_nonce"].(string)))
	if isErr {
		t.Fatalf("mail_send: %s", text)
	}
	msgs := set.sink.all()
	if len(msgs) != 1 || msgs[0].from != "me@example.com" || !slices.Equal(msgs[0].rcpts, []string{"ana@example.org", "carla@example.org"}) {
		t.Fatalf("sink got %+v", msgs)
	}
	data := msgs[0].data
	if bytes.Contains(data, []byte("carla")) || !bytes.Contains(data, []byte("filename=menu.txt")) || !bytes.Contains(data, []byte("Subject: Lunch")) {
		t.Fatalf("submitted bytes (Bcc must not show, the attachment must):\n%s", data)
	}
	d := field(sent, "delivery")
	if field(sent["delivery"], "accepted") != true || field(d, "sent_copy") != "saved" {
		t.Fatalf("result = %v", sent)
	}
	// The Sent copy is the submitted message, byte for byte.
	work, _ := set.st.Backend("work")
	mb, _ := work.Status(context.Background(), "Sent")
	uids, _ := work.UIDs(context.Background(), "Sent", mb.UIDValidity)
	raw, _, err := work.Raw(context.Background(), "Sent", mb.UIDValidity, uids[len(uids)-1], 1<<20)
	if err != nil || !bytes.Equal(bytes.TrimRight(raw, "\r\n"), bytes.TrimRight(data, "\r\n")) {
		t.Fatalf("Sent copy differs from what was submitted (%v):\n%s\n---\n%s", err, raw, data)
	}
	if len(set.conf.asked) != 1 || !strings.Contains(set.conf.asked[0].Address, "carla@example.org") {
		t.Fatalf("the dialog showed %+v", set.conf.asked)
	}
	audit, _ := os.ReadFile(filepath.Join(set.home, "audit.jsonl"))
	if !strings.Contains(string(audit), `"event":"send_result"`) || strings.Contains(string(audit), "Thursday") {
		t.Fatalf("audit = %s", audit)
	}
}

func TestMailSendReportsASkippedSentCopy(t *testing.T) {
	_, call := sendServer(t, true)
	args := strings.Replace(sendArgs, "%s", "", 1)
	_, _, pv := call("preview_mail", args)
	isErr, text, sent := call("mail_send", withNonce(args, pv["send_nonce"].(string)))
	if isErr || field(sent["delivery"], "sent_copy") != "skipped" || field(sent["delivery"], "accepted") != true {
		t.Fatalf("%s %v", text, sent)
	}
}

func TestRedTeamMailSendRefusals(t *testing.T) {
	set, call := sendServer(t, false)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(set.files, "link.txt")); err != nil {
		t.Fatal(err)
	}
	base := strings.Replace(sendArgs, "%s", "", 1)
	for _, tc := range []struct{ name, args, want string }{
		{"a from no account owns is refused at the preview", strings.Replace(base, `"account":"work"`, `"account":"work","from":"ceo@example.com"`, 1), "may not send as"},
		{"an attachment outside file_dirs", strings.Replace(sendArgs, "%s", `,"attachments":["`+outside+`"]`, 1), "outside the folders"},
		{"an attachment through a symlink out of file_dirs", strings.Replace(sendArgs, "%s", `,"attachments":["`+filepath.Join(set.files, "link.txt")+`"]`, 1), "outside the folders"},
		{"a read-only account cannot send", strings.Replace(base, `"account":"work"`, `"account":"home"`, 1), "cannot send"},
	} {
		isErr, text, _ := call("preview_mail", tc.args)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s: %v %q, want %q", tc.name, isErr, text, tc.want)
		}
	}
	// A blocked recipient gets a preview that says so and no nonce.
	_, _, pv := call("preview_mail", strings.Replace(base, `"carla@example.org"`, `"`+blockedAddr+`"`, 1))
	if pv["blocked"] != true || pv["send_nonce"] != nil {
		t.Errorf("blocked preview = %v", pv)
	}
	// The nonce is bound to the message: a changed subject is refused
	// before any dialog, and the nonce is spent.
	_, _, pv = call("preview_mail", base)
	nonce := pv["send_nonce"].(string)
	isErr, text, _ := call("mail_send", withNonce(strings.Replace(base, "Lunch", "Lunch!", 1), nonce))
	if !isErr || !strings.Contains(text, "differs from preview") {
		t.Errorf("changed subject: %v %q", isErr, text)
	}
	if isErr, _, _ := call("mail_send", withNonce(base, nonce)); !isErr {
		t.Errorf("a spent nonce sent")
	}
	// Cancelled in the dialog: nothing is sent.
	set.conf.answer = send.AnswerCancelled
	_, _, pv = call("preview_mail", base)
	if isErr, _, _ := call("mail_send", withNonce(base, pv["send_nonce"].(string))); !isErr {
		t.Errorf("a cancelled send succeeded")
	}
	if n := len(set.sink.all()); n != 0 {
		t.Fatalf("the sink received %d messages", n)
	}
}

func TestEveryMailToolFitsTheListBudget(t *testing.T) {
	set := &sendSet{st: mailSet(t)}
	snd := &Sender{St: set.st}
	svc := Service(set.st)
	svc.Tools = append(svc.Tools, SendTools(set.st, snd, nil)...)
	p := &mcpserver.Profile{Access: "write", AllowExternal: true, FileDirs: []string{t.TempDir()}}
	srv, err := mcpserver.New(&mcpserver.Deps{Version: "test", Profile: p}, mcpserver.Filters{Toolsets: []string{"mail"}, Profile: p}, svc)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mcptest.Sessions(t, srv)["stdio"].ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tl := range res.Tools {
		if !strings.HasPrefix(tl.Name, "mail_") && tl.Name != "preview_mail" {
			continue
		}
		n++
		b, _ := json.Marshal(tl)
		if len(b) > mcpserver.ListBudgetPerTool {
			t.Errorf("%s: %d bytes in tools/list, budget %d", tl.Name, len(b), mcpserver.ListBudgetPerTool)
		}
	}
	if n != 14 {
		t.Fatalf("%d mail tools listed, want 14", n)
	}
}
