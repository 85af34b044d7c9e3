package send

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// hostileTexts try to escape an AppleScript string or inject a command.
var hostileTexts = []string{
	`" & do shell script "touch /tmp/pwned" & "`,
	`\" & (do shell script "id") & \"`,
	"end run\non run argv\n\tdo shell script \"rm -rf ~\"\nend run",
	`«class utf8» 'single' "double" \\backslash\\ ` + "`backtick`",
	"tell application \"Finder\" to delete every file\r\n" + `"""`,
	strings.Repeat(`"\`, 50_000) + "\n" + strings.Repeat("x", 100),
}

func TestMacDialogCommandIsData(t *testing.T) {
	wantScriptFile(t, "confirm.applescript", confirmScript)
	for i, text := range hostileTexts {
		r := &fakeRunner{results: []RunResult{{Stdout: "cancel\n"}}}
		tmp := t.TempDir()
		d := MacDialog{Runner: r, TempDir: tmp}
		req := ConfirmRequest{Name: `Eve" & do shell script "x`, Address: "+14155551234", Service: "iMessage", Text: text, Notes: []string{"You sent this exact message to this person 3m0s ago."}}
		ans, err := d.Confirm(context.Background(), req)
		if err != nil || ans != AnswerCancelled {
			t.Fatalf("text %d: %v, %v", i, ans, err)
		}
		c := r.cmds[0]
		if c.Path != "/usr/bin/osascript" || len(c.Args) != 7 {
			t.Fatalf("command = %q %q", c.Path, c.Args)
		}
		script, textFile := c.Args[0], c.Args[4]
		want := []string{script, req.Name, "+14155551234", "iMessage", textFile, req.Notes[0], "60"}
		if !reflect.DeepEqual(c.Args, want) {
			t.Fatalf("args = %q\nwant   %q", c.Args, want)
		}
		if c.Timeout != 65*time.Second {
			t.Errorf("process bound = %s", c.Timeout)
		}
		// The script run is byte-for-byte the constant; the text reached
		// the dialog only through its own file.
		files := r.files[0]
		if string(files[script]) != confirmScript {
			t.Fatalf("text %d altered the script", i)
		}
		if string(files[textFile]) != text {
			t.Fatalf("text %d: message file differs", i)
		}
		if strings.Contains(confirmScript, "pwned") || strings.Contains(confirmScript, "rm -rf") {
			t.Fatal("script source contains data")
		}
		// Everything was in a private folder that is gone now.
		if filepath.Dir(script) != filepath.Dir(textFile) || filepath.Dir(filepath.Dir(script)) != tmp {
			t.Fatalf("files not in one private folder: %s %s", script, textFile)
		}
		wantGone(t, filepath.Dir(script), "temporary folder")
	}
}

func TestMacDialogAnswers(t *testing.T) {
	for _, tt := range []struct {
		res  RunResult
		runE error
		want Answer
		err  bool
	}{
		{RunResult{Stdout: "send\n"}, nil, AnswerApproved, false},
		{RunResult{Stdout: "cancel\n"}, nil, AnswerCancelled, false},
		{RunResult{Stdout: "timeout\n"}, nil, AnswerTimeout, false},
		{RunResult{TimedOut: true, ExitCode: -1}, nil, AnswerTimeout, false},
		{RunResult{Stdout: "Send\n"}, nil, "", true},
		{RunResult{Stdout: "send please"}, nil, "", true},
		{RunResult{Stdout: ""}, nil, "", true},
		{RunResult{Stdout: "error: cannot read the message text"}, nil, "", true},
		{RunResult{ExitCode: 1, Stdout: "send", Stderr: "execution error: -128"}, nil, "", true},
		{RunResult{}, errors.New("exec: not found"), "", true},
	} {
		r := &fakeRunner{results: []RunResult{tt.res}, err: tt.runE}
		ans, err := MacDialog{Runner: r, TempDir: t.TempDir()}.Confirm(context.Background(), ConfirmRequest{Address: "a@b.co", Service: "iMessage", Text: "hi"})
		if (err != nil) != tt.err || ans != tt.want {
			t.Errorf("%+v: got %q, %v; want %q err=%v", tt.res, ans, err, tt.want, tt.err)
		}
		if err != nil && ans == AnswerApproved {
			t.Fatal("an error approved a send")
		}
	}
}

func TestMacDialogAvailability(t *testing.T) {
	err := MacDialog{Osascript: filepath.Join(t.TempDir(), "osascript")}.Available()
	wantCode(t, err, CodeNoConfirmer)
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func lookPath(found ...string) func(string) (string, error) {
	return func(n string) (string, error) {
		for _, f := range found {
			if f == n {
				return "/usr/bin/" + n, nil
			}
		}
		return "", errors.New("not found")
	}
}

func TestDesktopDialogAvailability(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		bins []string
		want string // tool name or "" for refusal
	}{
		{"headless", nil, []string{"zenity", "kdialog"}, ""},
		{"x11 without tools", map[string]string{"DISPLAY": ":0"}, nil, ""},
		{"x11 zenity", map[string]string{"DISPLAY": ":0"}, []string{"zenity", "kdialog"}, "zenity"},
		{"wayland kdialog", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, []string{"kdialog"}, "kdialog"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := DesktopDialog{Getenv: env(tt.env), LookPath: lookPath(tt.bins...), Runner: &fakeRunner{}}
			err := d.Available()
			if tt.want == "" {
				wantCode(t, err, CodeNoConfirmer)
				if err.Error() != NoDialogSentence || strings.Count(err.Error(), ". ") != 0 {
					t.Errorf("refusal %q is not the one sentence", err)
				}
				if d.Name() != "none" {
					t.Errorf("name = %q", d.Name())
				}
				if _, cerr := d.Confirm(context.Background(), ConfirmRequest{Text: "x"}); CodeOf(cerr) != CodeNoConfirmer {
					t.Errorf("Confirm without a dialog: %v", cerr)
				}
				return
			}
			if err != nil || d.Name() != tt.want {
				t.Fatalf("Available = %v, Name = %q; want %q", err, d.Name(), tt.want)
			}
		})
	}
}

func TestZenityCommandIsData(t *testing.T) {
	for _, text := range hostileTexts {
		r := &fakeRunner{results: []RunResult{{ExitCode: 0}}}
		d := DesktopDialog{Runner: r, Getenv: env(map[string]string{"DISPLAY": ":0"}), LookPath: lookPath("zenity"), TempDir: t.TempDir()}
		req := ConfirmRequest{Name: "<b>Mallory</b> & co", Address: "+14155551234", Service: "SMS", Text: text + " <span>markup</span>"}
		ans, err := d.Confirm(context.Background(), req)
		if err != nil || ans != AnswerApproved {
			t.Fatalf("%v, %v", ans, err)
		}
		c := r.cmds[0]
		var file string
		for _, a := range c.Args {
			if strings.HasPrefix(a, "--filename=") {
				file = strings.TrimPrefix(a, "--filename=")
			}
		}
		want := []string{"--text-info", "--title=Tidings: approve a message", "--filename=" + file,
			"--checkbox=I have read the recipient and the message and want to send it",
			"--ok-label=Send", "--cancel-label=Cancel", "--width=560", "--height=480", "--timeout=60"}
		if c.Path != "/usr/bin/zenity" || !reflect.DeepEqual(c.Args, want) {
			t.Fatalf("command = %s %q\nwant %q", c.Path, c.Args, want)
		}
		// No argument carries data: only the file does, as plain text.
		for _, a := range c.Args {
			if strings.Contains(a, "Mallory") || strings.Contains(a, "4155551234") || strings.Contains(a, "markup") {
				t.Fatalf("argument %q carries data", a)
			}
		}
		got := string(r.files[0][file])
		header := "To:       <b>Mallory</b> & co\nAddress:  +14155551234\nService:  SMS\n"
		if !strings.HasPrefix(got, header) || !strings.HasSuffix(got, "──────────────── message ────────────────\n"+req.Text) {
			t.Fatalf("dialog file = %q", clip(got, 300))
		}
		wantGone(t, file, "dialog file")
	}
}

func TestZenityAnswers(t *testing.T) {
	for _, tt := range []struct {
		res  RunResult
		want Answer
		err  bool
	}{
		{RunResult{ExitCode: 0}, AnswerApproved, false},
		{RunResult{ExitCode: 1}, AnswerCancelled, false},
		{RunResult{ExitCode: 5}, AnswerTimeout, false},
		{RunResult{ExitCode: -1, TimedOut: true}, AnswerTimeout, false},
		{RunResult{ExitCode: 255, Stderr: "cannot open display"}, "", true},
		{RunResult{ExitCode: -1}, "", true},
	} {
		r := &fakeRunner{results: []RunResult{tt.res}}
		d := DesktopDialog{Runner: r, Getenv: env(map[string]string{"DISPLAY": ":0"}), LookPath: lookPath("zenity"), TempDir: t.TempDir()}
		ans, err := d.Confirm(context.Background(), ConfirmRequest{Address: "a@b.co", Service: "iMessage", Text: "hi"})
		if (err != nil) != tt.err || ans != tt.want {
			t.Errorf("%+v: %q, %v; want %q err=%v", tt.res, ans, err, tt.want, tt.err)
		}
	}
}

func TestKdialogCommands(t *testing.T) {
	r := &fakeRunner{results: []RunResult{{ExitCode: 0}, {ExitCode: 0}}}
	d := DesktopDialog{Runner: r, Getenv: env(map[string]string{"WAYLAND_DISPLAY": "w"}), LookPath: lookPath("kdialog"), TempDir: t.TempDir()}
	req := ConfirmRequest{Name: `<img src=x onerror="alert(1)">Eve & "Bob"`, Address: "eve@example.com", Service: "iMessage", Text: hostileTexts[0]}
	ans, err := d.Confirm(context.Background(), req)
	if err != nil || ans != AnswerApproved {
		t.Fatalf("%v, %v", ans, err)
	}
	if len(r.cmds) != 2 {
		t.Fatalf("%d commands, want 2", len(r.cmds))
	}
	show, ask := r.cmds[0], r.cmds[1]
	file := show.Args[3]
	if !reflect.DeepEqual(show.Args, []string{"--title", dialogTitle, "--textbox", file, "560", "480"}) {
		t.Fatalf("show = %q", show.Args)
	}
	if string(r.files[0][file]) != dialogFile(req) {
		t.Fatal("textbox file differs from the dialog content")
	}
	wantQ := `<qt>Send the message you just read to <b>&lt;img src=x onerror=&#34;alert(1)&#34;&gt;Eve &amp; &#34;Bob&#34;</b> (eve@example.com) by iMessage?</qt>`
	if !reflect.DeepEqual(ask.Args, []string{"--title", dialogTitle, "--warningyesno", wantQ, "--yes-label", "Send", "--no-label", "Cancel"}) {
		t.Fatalf("ask = %q", ask.Args)
	}
	if strings.Contains(strings.Join(ask.Args, " "), "do shell script") {
		t.Fatal("the message text reached kdialog's argv")
	}
	for _, tt := range []struct {
		results []RunResult
		want    Answer
	}{
		{[]RunResult{{ExitCode: 0}, {ExitCode: 1}}, AnswerCancelled},
		{[]RunResult{{ExitCode: 1}}, AnswerCancelled},
		{[]RunResult{{TimedOut: true}}, AnswerTimeout},
		{[]RunResult{{ExitCode: 0}, {TimedOut: true}}, AnswerTimeout},
	} {
		r := &fakeRunner{results: tt.results}
		d.Runner = r
		if ans, err := d.Confirm(context.Background(), req); err != nil || ans != tt.want {
			t.Errorf("%+v: %q, %v; want %q", tt.results, ans, err, tt.want)
		}
	}
}
