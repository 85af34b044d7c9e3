package send

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Outgoing is one approved message for a Sender.
type Outgoing struct {
	// Address is the validated recipient (E.164, short code digits or
	// lower-case email). ChatGUID, when set, targets a group chat instead;
	// the gate never sets it today (group sends are not offered).
	Address  string
	ChatGUID string
	Service  string
	Text     string
	// Image is the validated image, or nil.
	Image *Image
}

// Sender delivers an approved message and reports what is known about its
// delivery. Senders are pluggable: MessagesSender on macOS, Unavailable
// elsewhere.
type Sender interface {
	// Name identifies the sender in status output.
	Name() string
	// Available is nil when Send can work, else an *Error with one
	// sentence saying why not.
	Available() error
	// Send hands the message over and verifies it. The error is for a
	// message that was not handed over at all; once it was, the result
	// is a Delivery (which may say failed).
	Send(ctx context.Context, m Outgoing) (Delivery, error)
}

// Unavailable is the sender of a platform that cannot send.
type Unavailable struct{ Reason string }

// Name implements Sender.
func (u Unavailable) Name() string { return "none" }

// Available implements Sender.
func (u Unavailable) Available() error { return newErr(CodeNoSender, u.Reason) }

// Send implements Sender.
func (u Unavailable) Send(context.Context, Outgoing) (Delivery, error) {
	return Delivery{}, newErr(CodeNoSender, u.Reason)
}

// SendRunTimeout bounds one osascript run of a send: a stuck osascript (most
// often an unanswered Automation consent prompt) is stopped, not waited on
// forever.
const SendRunTimeout = 30 * time.Second

//go:embed scripts/send.applescript
var sendScript string

// MessagesSender sends through Messages.app with osascript and verifies the
// result in chat.db. The AppleScript is a constant file (see
// scripts/send.applescript) run from a private temporary folder; the
// target, service, text and staged image path travel in argv (`on run
// argv`), never in the script's source. osascript's output goes to files,
// its run is bounded (RunTimeout, then SIGTERM, then SIGKILL), and every
// temporary file is removed, also on failure.
type MessagesSender struct {
	Runner    Runner
	Osascript string // default /usr/bin/osascript
	// TempDir is the parent of the per-send private folder; default
	// os.TempDir().
	TempDir string
	// StagingDir is where images are copied so sandboxed Messages can read
	// them: ~/Library/Messages/.send-staging.
	StagingDir string
	RunTimeout time.Duration // default SendRunTimeout
	Verifier   Verifier
}

// Name implements Sender.
func (s *MessagesSender) Name() string { return "messages-osascript" }

func (s *MessagesSender) osascript() string {
	if s.Osascript != "" {
		return s.Osascript
	}
	return "/usr/bin/osascript"
}

// Available implements Sender.
func (s *MessagesSender) Available() error {
	if _, err := os.Stat(s.osascript()); err != nil {
		return newErr(CodeNoSender, fmt.Sprintf("sending is unavailable: %s is missing", s.osascript()))
	}
	return nil
}

// sendCommand builds the osascript invocation. The first argument after
// the script selects how the target is addressed: "participant" (an
// address on the chosen service's account) or "chat" (a chat GUID, the
// only reliable handle on a group — a display name is not).
func (s *MessagesSender) sendCommand(scriptPath string, m Outgoing, imagePath string) Command {
	kind, target := "participant", m.Address
	if m.ChatGUID != "" {
		kind, target = "chat", m.ChatGUID
	}
	timeout := s.RunTimeout
	if timeout <= 0 {
		timeout = SendRunTimeout
	}
	return Command{
		Path:    s.osascript(),
		Args:    []string{scriptPath, kind, target, m.Service, m.Text, imagePath},
		Timeout: timeout,
	}
}

// Send implements Sender.
func (s *MessagesSender) Send(ctx context.Context, m Outgoing) (Delivery, error) {
	dir, err := privateTempDir(s.TempDir)
	if err != nil {
		return Delivery{}, newErr(CodeSendFailed, "send failed before anything was handed to Messages: "+err.Error())
	}
	defer os.RemoveAll(dir)
	scriptPath := filepath.Join(dir, "send.applescript")
	if err := writePrivateFile(scriptPath, []byte(sendScript)); err != nil {
		return Delivery{}, newErr(CodeSendFailed, "send failed before anything was handed to Messages: write script: "+err.Error())
	}
	imagePath := ""
	if m.Image != nil {
		if s.StagingDir == "" {
			return Delivery{}, newErr(CodeSendFailed, "send failed: no staging folder for images is configured")
		}
		reapStaging(s.StagingDir)
		imagePath, err = stageImage(m.Image, s.StagingDir)
		if err != nil {
			return Delivery{}, newErr(CodeSendFailed, "send failed before anything was handed to Messages: "+err.Error())
		}
		// Removed only after verification: Messages reads the file
		// after osascript returns.
		defer os.Remove(imagePath)
	}

	mark := s.Verifier.Mark(ctx)
	defer mark.Close()

	res, err := s.Runner.Run(ctx, s.sendCommand(scriptPath, m, imagePath))
	if err != nil {
		return Delivery{}, newErr(CodeSendFailed, "send failed: osascript could not run: "+err.Error())
	}
	if res.TimedOut {
		return Delivery{}, newErr(CodeSendFailed, fmt.Sprintf("send failed: osascript did not finish within %s and was stopped; if macOS is asking whether Tidings may control Messages, allow it (System Settings → Privacy & Security → Automation) and try again", s.sendCommand("", m, "").Timeout))
	}
	if res.ExitCode != 0 {
		return Delivery{}, newErr(CodeSendFailed, "send failed: Messages refused the message: "+osascriptError(res.Stderr))
	}
	return s.Verifier.Await(ctx, mark, Expect{Address: m.Address, ChatGUID: m.ChatGUID, Text: m.Text, Image: m.Image != nil}), nil
}

// osascriptError turns osascript's stderr into one sentence. AppleScript
// echoes what it failed on, which can be the whole text, so only the error
// number and a short prefix are kept; -1743 gets the fix. The number is
// the one [osascriptCode] reads at the end, never one found in the text.
func osascriptError(stderr string) string {
	s := firstLine(stderr)
	code, ok := osascriptCode(stderr)
	if ok && code == -1743 {
		return "macOS has not allowed Tidings to control Messages (error -1743); allow it in System Settings → Privacy & Security → Automation"
	}
	if s == "" {
		return "osascript failed without a message"
	}
	if ok {
		return fmt.Sprintf("error %d: %s", code, clip(s, 160))
	}
	return clip(s, 160)
}

// osascriptCode returns the error number osascript writes at the very end
// of its error line, "… (-NNNN)", after trailing whitespace is trimmed.
// Everything before that position is AppleScript's message, which quotes
// whatever the script failed on (an address, the message text), so a
// number anywhere else is caller input and is not a code: a text saying
// "(-1743)" must not be reported as a refused Automation grant, and a real
// -1743 must not hide behind a quoted "(-1728)" (docs/security.md, "Sending and
// verification").
func osascriptCode(stderr string) (int, bool) {
	s := strings.TrimSpace(stderr)
	if !strings.HasSuffix(s, ")") {
		return 0, false
	}
	open := strings.LastIndexByte(s, '(')
	if open < 0 {
		return 0, false
	}
	digits, ok := strings.CutPrefix(s[open+1:len(s)-1], "-")
	if !ok || len(digits) == 0 || len(digits) > 5 {
		return 0, false
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return -n, true
}
