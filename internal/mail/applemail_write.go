package mail

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tidings-mcp/tidings/internal/send"
)

// AppleMailRunTimeout bounds one osascript run of a write: a stuck
// osascript (most often an unanswered Automation consent prompt) is
// stopped, not waited on (the pattern of internal/send).
const AppleMailRunTimeout = 30 * time.Second

// appleMailReadBack bounds how long a write waits for Mail.app to record
// the change in the Envelope Index: appleReadBackTries reads,
// AppleMail.pause (default appleReadBackPause) apart.
const (
	appleReadBackTries = 10
	appleReadBackPause = 300 * time.Millisecond
)

//go:embed scripts/applemail_write.applescript
var appleMailWriteScript string

// errAppleMailDrafts refuses Append: Mail.app's scripting has no way to
// store a given RFC 5322 message as a draft unchanged.
var errAppleMailDrafts = errors.New("drafts are not written through Mail.app; add imap to this [[mail.accounts]] entry to create drafts")

// appleAutomationSentence is the fix for a Mail.app that does not answer
// or refuses Automation.
const appleAutomationSentence = "allow it in System Settings → Privacy & Security → Automation and try again"

// Writable reports whether writes go through Mail.app (macOS only; a
// copied store elsewhere stays read-only).
func (a *AppleMail) Writable() bool { return a.writes }

func (a *AppleMail) osascript() string {
	if a.Osascript != "" {
		return a.Osascript
	}
	return "/usr/bin/osascript"
}

// writeCommand builds the osascript run of the constant script. Every
// variable is an argument (`on run argv`), never script source. Messages
// are named by Mail's `id`, which is the Envelope Index ROWID and so the
// UID Tidings hands out: unique in the store, unlike the Message-ID header
// (the same message sits in Sent and INBOX, and a message not yet
// downloaded has none in the index).
func (a *AppleMail) writeCommand(scriptPath, op, src, dst, value string, uids []uint32) send.Command {
	args := []string{scriptPath, op, a.id, src, dst, value}
	for _, u := range uids {
		args = append(args, strconv.FormatUint(uint64(u), 10))
	}
	return send.Command{Path: a.osascript(), Args: args, Timeout: AppleMailRunTimeout}
}

// runWrite runs one write through Mail.app.
func (a *AppleMail) runWrite(ctx context.Context, op, src, dst, value string, uids []uint32) error {
	dir, err := os.MkdirTemp("", "tidings-mail-")
	if err != nil {
		return fmt.Errorf("mail account %q: %w", a.account, err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "applemail_write.applescript")
	if err := os.WriteFile(script, []byte(appleMailWriteScript), 0o600); err != nil {
		return fmt.Errorf("mail account %q: write script: %w", a.account, err)
	}
	runner := a.Runner
	if runner == nil {
		runner = send.ExecRunner{}
	}
	cmd := a.writeCommand(script, op, src, dst, value, uids)
	res, err := runner.Run(ctx, cmd)
	switch {
	case err != nil:
		return fmt.Errorf("mail account %q: osascript could not run: %w", a.account, err)
	case res.TimedOut:
		return fmt.Errorf("the Mail app did not answer within %s; if macOS is asking whether Tidings may control Mail, %s", cmd.Timeout, appleAutomationSentence)
	case res.ExitCode != 0:
		return fmt.Errorf("the Mail app refused the change: %s", mailScriptError(res.Stderr))
	}
	return nil
}

// mailScriptError is one clipped line of osascript's stderr; -1743
// (Automation not allowed) gets its fix. Only the number osascript writes
// at the very end is read, never one quoted from a message or mailbox name.
func mailScriptError(stderr string) string {
	all := strings.TrimSpace(stderr)
	if strings.HasSuffix(all, "(-1743)") {
		return "macOS has not allowed Tidings to control Mail (error -1743); " + appleAutomationSentence
	}
	s := all
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "osascript failed without a message"
	}
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}

// liveUIDs checks that every uid is a live message of path (nothing is
// run otherwise) and returns the mailbox.
func (a *AppleMail) liveUIDs(ctx context.Context, path string, uidValidity uint32, uids []uint32) (appleBox, error) {
	db, b, err := a.checked(ctx, path, uidValidity)
	if err != nil {
		return appleBox{}, err
	}
	defer db.Close()
	for _, u := range uids {
		if _, _, ok, err := a.row(ctx, db, b, u); err != nil {
			return appleBox{}, err
		} else if !ok {
			return appleBox{}, fmt.Errorf("uid %d: %w", u, ErrNoMessage)
		}
	}
	return b, nil
}

// readBack re-reads the index until done reports every change recorded,
// at most appleReadBackTries times: Mail writes the index after the
// script returns.
func (a *AppleMail) readBack(ctx context.Context, what string, done func(context.Context) (bool, error)) error {
	pause := a.pause
	if pause == 0 {
		pause = appleReadBackPause
	}
	for try := 0; ; try++ {
		ok, err := done(ctx)
		if err != nil || ok {
			return err
		}
		if try+1 >= appleReadBackTries {
			return fmt.Errorf("the Mail app accepted the change but its index does not show %s yet; check Mail before trying again", what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
	}
}

// SetFlags implements Backend: \Seen and \Flagged, through Mail.app, read
// back from the index. Other flags are refused before anything runs.
func (a *AppleMail) SetFlags(ctx context.Context, path string, uidValidity uint32, uids []uint32, flags []string, add bool) error {
	if !a.writes {
		return ErrReadOnly
	}
	var ops []string
	for _, f := range flags {
		switch {
		case strings.EqualFold(f, Seen):
			ops = append(ops, "read")
		case strings.EqualFold(f, Flagged):
			ops = append(ops, "flag")
		default:
			return fmt.Errorf("accounts read from Mail.app only take read status and the flag, not %s; add imap to this [[mail.accounts]] entry for other flags", f)
		}
	}
	if len(uids) == 0 || len(ops) == 0 {
		return nil
	}
	b, err := a.liveUIDs(ctx, path, uidValidity, uids)
	if err != nil {
		return err
	}
	value := "0"
	if add {
		value = "1"
	}
	for _, op := range ops {
		if err := a.runWrite(ctx, op, b.path, "", value, uids); err != nil {
			return err
		}
		col := map[string]string{"read": "read", "flag": "flagged"}[op]
		err := a.readBack(ctx, "the new "+col+" state", func(ctx context.Context) (bool, error) {
			db, err := a.open(ctx)
			if err != nil {
				return false, err
			}
			defer db.Close()
			for _, u := range uids {
				var v bool
				// A message Mail moved meanwhile is not waited on.
				err := db.QueryRowContext(ctx, "SELECT "+col+" FROM messages WHERE ROWID = ?", int64(u)).Scan(&v)
				if err != nil {
					return false, nil
				}
				if v != add {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("mail account %q: %w", a.account, err)
		}
	}
	return nil
}

// Move implements Backend: to another mailbox of the same account (Trash
// included), through Mail.app, read back as every message having left
// path (Mail gives a moved message a new ROWID, so the old one is gone or
// in dest).
func (a *AppleMail) Move(ctx context.Context, path string, uidValidity uint32, uids []uint32, dest string) error {
	if !a.writes {
		return ErrReadOnly
	}
	if len(uids) == 0 {
		return nil
	}
	b, err := a.liveUIDs(ctx, path, uidValidity, uids)
	if err != nil {
		return err
	}
	db, err := a.open(ctx)
	if err != nil {
		return err
	}
	d, err := a.box(ctx, db, dest)
	db.Close()
	if err != nil {
		return err
	}
	if d.rowid == b.rowid {
		return nil
	}
	if err := a.runWrite(ctx, "move", b.path, d.path, "", uids); err != nil {
		return err
	}
	err = a.readBack(ctx, "the messages in "+d.path, func(ctx context.Context) (bool, error) {
		db, err := a.open(ctx)
		if err != nil {
			return false, err
		}
		defer db.Close()
		for _, u := range uids {
			_, _, still, err := a.row(ctx, db, b, u)
			if err != nil || still {
				return false, err
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("mail account %q: %w", a.account, err)
	}
	a.mu.Lock()
	a.files = nil // the moved files live elsewhere now
	a.mu.Unlock()
	return nil
}

// Append implements Backend: refused (errAppleMailDrafts) when writes go
// through Mail.app, read-only otherwise.
func (a *AppleMail) Append(context.Context, string, []byte, []string, time.Time) (uint32, error) {
	if !a.writes {
		return 0, ErrReadOnly
	}
	return 0, errAppleMailDrafts
}
