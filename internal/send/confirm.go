package send

import (
	"context"
	_ "embed"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ConfirmTimeout is how long a person has to approve a send; waiting longer
// cancels it (the protocol's 60 s dialog limit).
const ConfirmTimeout = 60 * time.Second

// Answer is a person's response to a confirmation.
type Answer string

// Answers. Only AnswerApproved lets a send go ahead.
const (
	AnswerApproved  Answer = "approved"
	AnswerCancelled Answer = "cancelled"
	AnswerTimeout   Answer = "timeout"
)

// ConfirmRequest is what the person is shown. Name is the sanitized contact
// name ("" when the address is not in their contacts); Address is the exact
// address Messages will be given.
type ConfirmRequest struct {
	Name    string
	Address string
	Service string
	Text    string
	// Image is the image's file name when one is attached.
	Image string
	// Notes are extra warnings, such as "you sent this exact text to this
	// person 3 minutes ago".
	Notes []string
}

// Confirmer asks the person — outside the agent, in a window the agent
// cannot answer — whether to send. Implementations fail closed: any error
// or unexpected output is not an approval.
type Confirmer interface {
	// Name identifies the confirmer in status output ("osascript",
	// "zenity", "kdialog", "none").
	Name() string
	// Available is nil when Confirm can show a dialog, else an *Error with
	// one sentence on how to get one.
	Available() error
	// Confirm shows the request and waits at most ConfirmTimeout.
	Confirm(ctx context.Context, r ConfirmRequest) (Answer, error)
}

// noteLines renders the image and notes for a dialog.
func (r ConfirmRequest) noteLines() []string {
	var out []string
	if r.Image != "" {
		out = append(out, "Image attached: "+r.Image)
	}
	return append(out, r.Notes...)
}

//go:embed scripts/confirm.applescript
var confirmScript string

// MacDialog is the macOS confirmer: an NSAlert run by osascript with the
// resolved name, the exact address, the service and the full text in a
// scrollable read-only text view; Cancel is the default button and the
// Send button has no key equivalent; after Timeout the alert is aborted,
// which counts as cancelling. The script is a constant file (see
// scripts/confirm.applescript); the name, address and service travel in
// argv and the text in a private file, so no data is ever part of
// AppleScript source.
type MacDialog struct {
	Runner    Runner
	Osascript string        // default /usr/bin/osascript
	TempDir   string        // parent of the per-dialog private folder; default os.TempDir()
	Timeout   time.Duration // default ConfirmTimeout
}

// Name implements Confirmer.
func (d MacDialog) Name() string { return "osascript" }

func (d MacDialog) osascript() string {
	if d.Osascript != "" {
		return d.Osascript
	}
	return "/usr/bin/osascript"
}

func (d MacDialog) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return ConfirmTimeout
}

// Available implements Confirmer.
func (d MacDialog) Available() error {
	if _, err := os.Stat(d.osascript()); err != nil {
		return newErr(CodeNoConfirmer, fmt.Sprintf("no confirmation dialog is available: %s is missing, so nobody could approve a send", d.osascript()))
	}
	return nil
}

// command builds the osascript invocation for a script and text file.
func (d MacDialog) command(scriptPath, textPath string, r ConfirmRequest) Command {
	secs := int(d.timeout() / time.Second)
	return Command{
		Path:    d.osascript(),
		Args:    []string{scriptPath, r.Name, r.Address, r.Service, textPath, strings.Join(r.noteLines(), "\n"), strconv.Itoa(secs)},
		Timeout: d.timeout() + 5*time.Second, // the script aborts itself first
	}
}

// Confirm implements Confirmer.
func (d MacDialog) Confirm(ctx context.Context, r ConfirmRequest) (Answer, error) {
	dir, err := privateTempDir(d.TempDir)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	scriptPath := filepath.Join(dir, "confirm.applescript")
	textPath := filepath.Join(dir, "message.txt")
	if err := writePrivateFile(scriptPath, []byte(confirmScript)); err != nil {
		return "", fmt.Errorf("write dialog script: %w", err)
	}
	if err := writePrivateFile(textPath, []byte(r.Text)); err != nil {
		return "", fmt.Errorf("write message for the dialog: %w", err)
	}
	res, err := d.Runner.Run(ctx, d.command(scriptPath, textPath, r))
	if err != nil {
		return "", err
	}
	if res.TimedOut {
		return AnswerTimeout, nil
	}
	if res.ExitCode != 0 {
		return "", fmt.Errorf("confirmation dialog failed (osascript exit %d): %s", res.ExitCode, firstLine(res.Stderr))
	}
	switch strings.TrimSpace(res.Stdout) {
	case "send":
		return AnswerApproved, nil
	case "cancel":
		return AnswerCancelled, nil
	case "timeout":
		return AnswerTimeout, nil
	}
	return "", fmt.Errorf("confirmation dialog gave an unexpected answer: %s", firstLine(res.Stdout))
}

// DesktopDialog is the Linux (and BSD) confirmer: zenity, or kdialog when
// zenity is missing, in a graphical session (DISPLAY or WAYLAND_DISPLAY
// set). Without one it refuses every send with a sentence saying how to get
// one.
//
// zenity shows a --text-info window: a scrollable, read-only view of a
// private file holding a header (name, exact address, service, notes) and
// then the text. The file is shown as plain text (no --html), so nothing
// in it is markup; the window title and the checkbox label are constants.
// Send stays disabled until the checkbox is ticked, so no key press alone
// sends; --timeout makes waiting a cancellation (exit 5).
//
// kdialog has no window that shows a file and asks a question, so it gets
// two: --textbox shows the same file read-only, then --warningyesno asks
// about the name and address (HTML-escaped inside <qt>, because Qt guesses
// rich text otherwise); KDE makes No ("Cancel") the default button of a
// warning yes/no box. kdialog has no timeout; the process is stopped when
// Timeout runs out.
type DesktopDialog struct {
	Runner   Runner
	LookPath func(string) (string, error) // default exec.LookPath
	Getenv   func(string) string          // default os.Getenv
	TempDir  string
	Timeout  time.Duration // default ConfirmTimeout
}

// NoDialogSentence is the refusal when no desktop confirmer can run.
const NoDialogSentence = "no confirmation dialog is available: sending needs a person to approve each message in a desktop dialog, so run Tidings inside a graphical session (DISPLAY or WAYLAND_DISPLAY set) with zenity or kdialog installed"

func (d DesktopDialog) lookPath(name string) (string, error) {
	if d.LookPath != nil {
		return d.LookPath(name)
	}
	return exec.LookPath(name)
}

func (d DesktopDialog) getenv(k string) string {
	if d.Getenv != nil {
		return d.Getenv(k)
	}
	return os.Getenv(k)
}

func (d DesktopDialog) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return ConfirmTimeout
}

// tool returns the dialog program to use and its path.
func (d DesktopDialog) tool() (name, path string, err error) {
	if d.getenv("DISPLAY") == "" && d.getenv("WAYLAND_DISPLAY") == "" {
		return "", "", newErr(CodeNoConfirmer, NoDialogSentence)
	}
	for _, n := range []string{"zenity", "kdialog"} {
		if p, err := d.lookPath(n); err == nil {
			return n, p, nil
		}
	}
	return "", "", newErr(CodeNoConfirmer, NoDialogSentence)
}

// Name implements Confirmer.
func (d DesktopDialog) Name() string {
	if n, _, err := d.tool(); err == nil {
		return n
	}
	return "none"
}

// Available implements Confirmer.
func (d DesktopDialog) Available() error {
	_, _, err := d.tool()
	return err
}

const dialogTitle = "Tidings: approve a message"

// dialogFile is the content both desktop dialogs show: a header the agent
// cannot shape (it comes from validated values), a rule, then the text.
func dialogFile(r ConfirmRequest) string {
	name := r.Name
	if name == "" {
		name = "(not in your contacts)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "To:       %s\nAddress:  %s\nService:  %s\n", name, r.Address, r.Service)
	for _, n := range r.noteLines() {
		b.WriteString("Note:     " + n + "\n")
	}
	b.WriteString("\nAn AI assistant asked to send the message below. Nothing is sent unless you approve it.\n")
	b.WriteString("──────────────── message ────────────────\n")
	b.WriteString(r.Text)
	return b.String()
}

// zenityCommand builds the zenity invocation showing file.
func (d DesktopDialog) zenityCommand(path, file string) Command {
	secs := int(d.timeout() / time.Second)
	return Command{
		Path: path,
		Args: []string{"--text-info", "--title=" + dialogTitle, "--filename=" + file,
			"--checkbox=I have read the recipient and the message and want to send it",
			"--ok-label=Send", "--cancel-label=Cancel", "--width=560", "--height=480",
			"--timeout=" + strconv.Itoa(secs)},
		Timeout: d.timeout() + 5*time.Second,
	}
}

// kdialogCommands builds the two kdialog invocations.
func (d DesktopDialog) kdialogCommands(path, file string, r ConfirmRequest) (show, ask Command) {
	name := r.Name
	if name == "" {
		name = "(not in your contacts)"
	}
	question := fmt.Sprintf("<qt>Send the message you just read to <b>%s</b> (%s) by %s?</qt>",
		html.EscapeString(name), html.EscapeString(r.Address), html.EscapeString(r.Service))
	show = Command{Path: path, Args: []string{"--title", dialogTitle, "--textbox", file, "560", "480"}, Timeout: d.timeout()}
	ask = Command{Path: path, Args: []string{"--title", dialogTitle, "--warningyesno", question, "--yes-label", "Send", "--no-label", "Cancel"}, Timeout: d.timeout()}
	return show, ask
}

// Confirm implements Confirmer.
func (d DesktopDialog) Confirm(ctx context.Context, r ConfirmRequest) (Answer, error) {
	name, path, err := d.tool()
	if err != nil {
		return "", err
	}
	dir, err := privateTempDir(d.TempDir)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "message.txt")
	if err := writePrivateFile(file, []byte(dialogFile(r))); err != nil {
		return "", fmt.Errorf("write message for the dialog: %w", err)
	}
	if name == "zenity" {
		res, err := d.Runner.Run(ctx, d.zenityCommand(path, file))
		if err != nil {
			return "", err
		}
		return zenityAnswer(res)
	}
	deadline := time.Now().Add(d.timeout())
	show, ask := d.kdialogCommands(path, file, r)
	res, err := d.Runner.Run(ctx, show)
	if err != nil {
		return "", err
	}
	if res.TimedOut {
		return AnswerTimeout, nil
	}
	if res.ExitCode != 0 {
		return AnswerCancelled, nil
	}
	left := time.Until(deadline)
	if left <= 0 {
		return AnswerTimeout, nil
	}
	ask.Timeout = left
	res, err = d.Runner.Run(ctx, ask)
	if err != nil {
		return "", err
	}
	switch {
	case res.TimedOut:
		return AnswerTimeout, nil
	case res.ExitCode == 0:
		return AnswerApproved, nil
	case res.ExitCode == 1 || res.ExitCode == 2:
		return AnswerCancelled, nil
	}
	return "", fmt.Errorf("kdialog failed (exit %d): %s", res.ExitCode, firstLine(res.Stderr))
}

// zenityAnswer maps zenity's exit codes: 0 Send, 1 Cancel or closed,
// 5 timeout; anything else is a failure.
func zenityAnswer(res RunResult) (Answer, error) {
	switch {
	case res.TimedOut || res.ExitCode == 5:
		return AnswerTimeout, nil
	case res.ExitCode == 0:
		return AnswerApproved, nil
	case res.ExitCode == 1:
		return AnswerCancelled, nil
	}
	return "", fmt.Errorf("zenity failed (exit %d): %s", res.ExitCode, firstLine(res.Stderr))
}

// firstLine returns the first line of s, at most 200 characters, for error
// messages.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(s, 200)
}
