package send

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidings-mcp/tidings/internal/config"
	"github.com/tidings-mcp/tidings/internal/imessage/typedstream"
)

// newSender returns a MessagesSender over a fixture chat.db whose fake
// osascript runs onRun (playing Messages: inserting rows) and exits 0.
func newSender(t *testing.T, db *chatDB, onRun func(Command)) (*MessagesSender, *fakeRunner) {
	t.Helper()
	r := &fakeRunner{results: []RunResult{{Stdout: "ok\n"}}, onRun: onRun}
	s := &MessagesSender{
		Runner:     r,
		TempDir:    t.TempDir(),
		StagingDir: filepath.Join(t.TempDir(), "Library", "Messages", ".send-staging"),
		Verifier:   Verifier{ChatDB: db.path, Timeout: 250 * time.Millisecond, Poll: 20 * time.Millisecond},
	}
	return s, r
}

func TestSendScriptIsData(t *testing.T) {
	wantScriptFile(t, "send.applescript", sendScript)
	db := newChatDB(t)
	for i, text := range hostileTexts {
		s, r := newSender(t, db, nil)
		s.Verifier.Timeout = time.Millisecond
		m := Outgoing{Address: "+14155551234", Service: ServiceSMS, Text: text}
		if _, err := s.Send(context.Background(), m); err != nil {
			t.Fatalf("text %d: %v", i, err)
		}
		c := r.cmds[0]
		script := c.Args[0]
		want := []string{script, "participant", "+14155551234", "SMS", text, ""}
		if c.Path != "/usr/bin/osascript" || !reflect.DeepEqual(c.Args, want) {
			t.Fatalf("text %d: command %s %q", i, c.Path, clip(strings.Join(c.Args, "|"), 200))
		}
		if c.Timeout != SendRunTimeout {
			t.Errorf("run bound = %s, want %s", c.Timeout, SendRunTimeout)
		}
		if string(r.files[0][script]) != sendScript {
			t.Fatalf("text %d altered the send script", i)
		}
		wantGone(t, filepath.Dir(script), "temporary folder")
	}
}

func TestSendScriptTargetsAChatByGUID(t *testing.T) {
	s := &MessagesSender{}
	c := s.sendCommand("/tmp/x/send.applescript", Outgoing{ChatGUID: "iMessage;+;chat123456789", Address: "ignored", Service: ServiceIMessage, Text: "hi all"}, "")
	want := []string{"/tmp/x/send.applescript", "chat", "iMessage;+;chat123456789", "iMessage", "hi all", ""}
	if !reflect.DeepEqual(c.Args, want) {
		t.Fatalf("args = %q, want %q", c.Args, want)
	}
	if !strings.Contains(sendScript, "chat id targetID") || !strings.Contains(sendScript, "on run argv") {
		t.Fatal("the script does not address chats by id from argv")
	}
}

func TestVerificationOutcomes(t *testing.T) {
	const addr = "+14155551234"
	const text = "On my way,\n10 minutes."
	body, err := typedstream.EncodeAttributedBody(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// play inserts what Messages would, given the handle and chat.
		play   func(db *chatDB, h, ch, otherH, otherCh int64)
		status DeliveryStatus
		code   int
		rows   int
		note   string
	}{
		{"sent", func(db *chatDB, h, ch, _, _ int64) {
			db.message(ch, h, true, strp(text), nil, true, 0, false)
		}, DeliverySent, 0, 1, "sent"},
		{"sent, text only in attributedBody", func(db *chatDB, h, ch, _, _ int64) {
			db.message(ch, h, true, nil, body, true, 0, false)
		}, DeliverySent, 0, 1, "sent"},
		{"sent with CR line endings", func(db *chatDB, h, ch, _, _ int64) {
			db.message(ch, h, true, strp(strings.ReplaceAll(text, "\n", "\r")), nil, true, 0, false)
		}, DeliverySent, 0, 1, "sent"},
		{"failed with Apple's error", func(db *chatDB, h, ch, _, _ int64) {
			db.message(ch, h, true, strp(text), nil, false, 22, false)
		}, DeliveryFailed, 22, 1, "error 22"},
		{"pending until the timeout", func(db *chatDB, h, ch, _, _ int64) {
			db.message(ch, h, true, strp(text), nil, false, 0, false)
		}, DeliveryUnconfirmed, 0, 1, "not marked sent"},
		{"nothing appeared", func(*chatDB, int64, int64, int64, int64) {}, DeliveryUnconfirmed, 0, 0, "no row"},
		{"another text to the same person is not this send", func(db *chatDB, h, ch, _, _ int64) {
			db.message(ch, h, true, strp("something else"), nil, true, 0, false)
		}, DeliveryUnconfirmed, 0, 0, "no row"},
		{"the same text to someone else is not this send", func(db *chatDB, _, _, oh, och int64) {
			db.message(och, oh, true, strp(text), nil, true, 0, false)
		}, DeliveryUnconfirmed, 0, 0, "no row"},
		{"an incoming message is not this send", func(db *chatDB, h, ch, _, _ int64) {
			db.message(ch, h, false, strp(text), nil, true, 0, false)
		}, DeliveryUnconfirmed, 0, 0, "no row"},
		{"found through the chat when handle_id is 0", func(db *chatDB, _, ch, _, _ int64) {
			db.message(ch, 0, true, strp(text), nil, true, 0, false)
		}, DeliverySent, 0, 1, "sent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newChatDB(t)
			h, ch := db.direct(addr, "iMessage")
			oh, och := db.direct("+14155559876", "iMessage")
			// Older rows (below the mark) never count, even when identical.
			db.message(ch, h, true, strp(text), nil, true, 0, false)
			db.message(ch, h, true, strp(text), nil, false, 99, false)
			s, _ := newSender(t, db, func(Command) { tt.play(db, h, ch, oh, och) })
			d, err := s.Send(context.Background(), Outgoing{Address: addr, Service: ServiceIMessage, Text: text})
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != tt.status || d.ErrorCode != tt.code || len(d.Rows) != tt.rows || !strings.Contains(d.Note, tt.note) {
				t.Fatalf("delivery = %+v, want %s code %d rows %d note ~%q", d, tt.status, tt.code, tt.rows, tt.note)
			}
			for _, r := range d.Rows {
				if r.RowID <= 2 {
					t.Fatalf("a row from before the send was counted: %+v", r)
				}
			}
		})
	}
}

func TestVerificationWaitsForTheRow(t *testing.T) {
	db := newChatDB(t)
	h, ch := db.direct("bob@example.com", "iMessage")
	var row int64
	s, _ := newSender(t, db, func(Command) {
		row = db.message(ch, h, true, strp("late"), nil, false, 0, false)
		go func() {
			time.Sleep(100 * time.Millisecond)
			db.markSent(row, 0)
		}()
	})
	s.Verifier.Timeout = 5 * time.Second
	d, err := s.Send(context.Background(), Outgoing{Address: "bob@example.com", Service: ServiceIMessage, Text: "late"})
	if err != nil || d.Status != DeliverySent || d.Rows[0].RowID != row {
		t.Fatalf("delivery = %+v, %v", d, err)
	}
}

func TestVerificationCannotVerify(t *testing.T) {
	for _, tt := range []struct {
		name string
		path func(t *testing.T) string
	}{
		{"missing database", func(t *testing.T) string { return filepath.Join(t.TempDir(), "chat.db") }},
		{"not configured", func(*testing.T) string { return "" }},
		{"not a Messages database", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "chat.db")
			os.WriteFile(p, []byte("SQLite format 3\x00 but not really"), 0o600)
			return p
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &fakeRunner{results: []RunResult{{Stdout: "ok"}}}
			s := &MessagesSender{Runner: r, TempDir: t.TempDir(), Verifier: Verifier{ChatDB: tt.path(t), Timeout: 50 * time.Millisecond}}
			d, err := s.Send(context.Background(), Outgoing{Address: "a@b.co", Service: ServiceIMessage, Text: "hi"})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.cmds) != 1 {
				t.Fatal("an approved message was not handed over because chat.db is unreadable")
			}
			if d.Status != DeliveryCannotVerify || !strings.Contains(d.Note, "Full Disk Access") && tt.name != "not configured" {
				t.Fatalf("delivery = %+v", d)
			}
		})
	}
}

func TestImageSendIsStagedVerifiedAndCleanedUp(t *testing.T) {
	const addr = "+14155551234"
	dir := t.TempDir()
	src := filepath.Join(dir, "photo.png")
	writePNG(t, src, 8, 8)
	img, err := checkImage(src, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		textSent  bool
		imageRow  bool
		imageSent bool
		imageErr  int
		status    DeliveryStatus
		code      int
		note      string
	}{
		{"both sent", true, true, true, 0, DeliverySent, 0, "text and the image"},
		{"image pending", true, true, false, 0, DeliveryUnconfirmed, 0, "image is not confirmed"},
		{"image row never appears", true, false, false, 0, DeliveryUnconfirmed, 0, "image is not confirmed"},
		{"image failed, text sent", true, true, false, 25, DeliveryFailed, 25, "error 25 for the image"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := newChatDB(t)
			h, ch := db.direct(addr, "iMessage")
			var staged string
			s, r := newSender(t, db, func(c Command) {
				staged = c.Args[5]
				db.message(ch, h, true, strp("look"), nil, tt.textSent, 0, false)
				if tt.imageRow {
					db.message(ch, h, true, strp("\uFFFC"), nil, tt.imageSent, tt.imageErr, true)
				}
			})
			d, err := s.Send(context.Background(), Outgoing{Address: addr, Service: ServiceIMessage, Text: "look", Image: img})
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != tt.status || d.ErrorCode != tt.code || !strings.Contains(d.Note, tt.note) {
				t.Fatalf("delivery = %+v", d)
			}
			if filepath.Dir(staged) != s.StagingDir || !strings.HasSuffix(staged, "-photo.png") {
				t.Fatalf("image passed as %q", staged)
			}
			orig, _ := os.ReadFile(src)
			if string(r.files[0][staged]) != string(orig) {
				t.Fatal("Messages was not handed an exact copy")
			}
			wantGone(t, staged, "staged image")
		})
	}
}

func TestSendFailures(t *testing.T) {
	for _, tt := range []struct {
		name string
		res  RunResult
		msg  string
	}{
		{"automation not allowed", RunResult{ExitCode: 1, Stderr: "execution error: Not authorized to send Apple events to Messages. (-1743)"}, "Automation"},
		{"script error echoing the text", RunResult{ExitCode: 1, Stderr: "execution error: Can’t get participant \"x\". (-1728)\n" + strings.Repeat("long text ", 1000)}, "Messages refused"},
		{"stuck osascript", RunResult{ExitCode: -1, TimedOut: true}, "did not finish within 30s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := newChatDB(t)
			s, _ := newSender(t, db, nil)
			s.Runner = &fakeRunner{results: []RunResult{tt.res}}
			_, err := s.Send(context.Background(), Outgoing{Address: "a@b.co", Service: ServiceIMessage, Text: "hi"})
			wantCode(t, err, CodeSendFailed)
			if !strings.Contains(err.Error(), tt.msg) || len(err.Error()) > 400 {
				t.Fatalf("err = %q", clip(err.Error(), 500))
			}
		})
	}
}

func TestUnavailableSender(t *testing.T) {
	_, s := otherPlatform(PlatformOptions{Getenv: env(nil), LookPath: lookPath()})
	wantCode(t, s.Available(), CodeNoSender)
	_, err := s.Send(context.Background(), Outgoing{})
	wantCode(t, err, CodeNoSender)
	if err.Error() != NoSenderSentence || strings.Count(NoSenderSentence, ". ") != 0 {
		t.Fatalf("refusal %q is not one sentence", err)
	}
	c, s2 := macPlatform(PlatformOptions{ChatDB: "/x/chat.db", UserHome: "/Users/a", VerifyTimeout: 3 * time.Second})
	ms := s2.(*MessagesSender)
	if c.Name() != "osascript" || ms.StagingDir != "/Users/a/Library/Messages/.send-staging" || ms.Verifier.ChatDB != "/x/chat.db" || ms.Verifier.Timeout != 3*time.Second {
		t.Fatalf("mac platform = %+v %+v", c, ms)
	}
}

func TestFromConfig(t *testing.T) {
	cfg, err := config.Bind(nil).Load(env(map[string]string{"TIDINGS_HOME": filepath.Join(t.TempDir(), "home"), "TIDINGS_NOW": "2026-11-30T09:00:00Z", "TIDINGS_SEND_RATE_LIMIT": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SendRateLimit != 2 || cfg.SendVerifySeconds != 8 {
		t.Fatalf("config: rate %d verify %d", cfg.SendRateLimit, cfg.SendVerifySeconds)
	}
	pol := &staticPolicy{}
	pol.set(t, "blocklist", nil, nil)
	g, err := FromConfig(cfg, pol, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := g.Status(); st.RateLimitPerHour != 2 {
		t.Fatalf("status = %+v", st)
	}
	res, err := g.Preview(context.Background(), PreviewRequest{To: "+14155551234", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	// The pinned clock is the gate's clock: the audit line carries it.
	if b := readAudit(t, cfg.Home); !strings.Contains(string(b), `"time":"2026-11-30T09:00:00Z"`) || res.SendNonce == "" {
		t.Fatalf("audit = %s", b)
	}
	for _, bad := range []map[string]string{{"TIDINGS_SEND_RATE_LIMIT": "0"}, {"TIDINGS_SEND_VERIFY_SECONDS": "0"}, {"TIDINGS_SEND_VERIFY_SECONDS": "999"}} {
		bad["TIDINGS_HOME"] = t.TempDir()
		c, err := config.Bind(nil).Load(env(bad))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := FromConfig(c, pol, nil, nil, nil); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestOsascriptCodeIsReadOnlyFromTheTrailingPosition pins that the error
// code of a failed send is the one osascript writes last, "(-NNNN)" at the
// end of stderr, never a number found elsewhere: AppleScript's message
// echoes what it failed on (an address, the text), so anything before the
// trailing code can be caller input (docs/security.md, "Sending and verification").
func TestOsascriptCodeIsReadOnlyFromTheTrailingPosition(t *testing.T) {
	const automation = "Automation"
	for _, tt := range []struct {
		name       string
		stderr     string
		code       int
		found      bool
		automation bool
	}{
		{"real -1743", "execution error: Not authorized to send Apple events to Messages. (-1743)", -1743, true, true},
		{"real -1743 with trailing newline and spaces", "send.applescript: execution error: Not authorized to send Apple events to Messages. (-1743)\n  \n", -1743, true, true},
		{"caller text with (-1743) mid-text, real -1728", `execution error: Can’t get participant "x (-1743) y". (-1728)`, -1728, true, false},
		{"caller text with bare -1743, real -2700", `execution error: Error: text -1743 was refused (-2700)`, -2700, true, false},
		{"caller text ending in (-1743) inside quotes, real -1728", `execution error: Can’t make "hello (-1743)" into type text. (-1728)`, -1728, true, false},
		{"multi-line echo with (-1743) on the first line, real -1708", "execution error: Can’t get buddy \"a (-1743)\n" + strings.Repeat("more text ", 50) + "\". (-1708)\n", -1708, true, false},
		{"caller text with (-1728), real -1743", `execution error: Can’t get participant "x (-1728) y". Not authorized. (-1743)`, -1743, true, true},
		{"-1743 only mid-text, no trailing code", `execution error: the text (-1743) is odd`, 0, false, false},
		{"-1743 followed by more text", "execution error: (-1743) then something", 0, false, false},
		{"trailing parenthesis that is not a code", `execution error: Can’t get "x (-1743)" (abc)`, 0, false, false},
		{"trailing code without minus", `execution error: odd (1743)`, 0, false, false},
		{"trailing digits too long", `execution error: odd (-17431743)`, 0, false, false},
		{"empty", "", 0, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, found := osascriptCode(tt.stderr)
			if code != tt.code || found != tt.found {
				t.Fatalf("osascriptCode = %d, %v; want %d, %v", code, found, tt.code, tt.found)
			}
			db := newChatDB(t)
			s, _ := newSender(t, db, nil)
			s.Runner = &fakeRunner{results: []RunResult{{ExitCode: 1, Stderr: tt.stderr}}}
			_, err := s.Send(context.Background(), Outgoing{Address: "a@b.co", Service: ServiceIMessage, Text: "hi"})
			wantCode(t, err, CodeSendFailed)
			if got := strings.Contains(err.Error(), automation); got != tt.automation {
				t.Fatalf("automation sentence = %v, want %v: %q", got, tt.automation, err)
			}
			if tt.found && !tt.automation && !strings.Contains(err.Error(), fmt.Sprintf("error %d", tt.code)) {
				t.Fatalf("err = %q, want it to name error %d", err, tt.code)
			}
		})
	}
}
