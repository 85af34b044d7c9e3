package account

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// secretText is the password every fake password_cmd prints; no error,
// log line or printed form may contain it.
const secretText = "s3cr3t-hunter2"

// script writes an executable shell script and returns its path; tests run
// it as argv[0], so no shell parses the argv Tidings builds.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pw.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPasswordSourcesNeverLeakTheOutput: password_env reads the named
// variable; password_cmd runs argv without a shell, loses one trailing
// newline, is stopped after its (here pinned small) time limit even when it
// ignores SIGTERM, and a failure is an error naming the account and what
// went wrong — never the command's stdout or stderr, which also never reach
// the log (captured at debug level).
func TestPasswordSourcesNeverLeakTheOutput(t *testing.T) {
	env := map[string]string{"WORK_PW": secretText}
	tests := []struct {
		name    string
		src     PasswordSource
		want    string // the password, when wantErr is empty
		wantErr string
		// timeout pins a small limit for the cases that must be stopped
		// (they sleep far longer); the others keep the 10 s default, so
		// no outcome depends on how loaded the machine is.
		timeout time.Duration
	}{
		{name: "env", src: PasswordSource{Env: "WORK_PW"}, want: secretText},
		{name: "env unset", src: PasswordSource{Env: "OTHER_PW"}, wantErr: "environment variable OTHER_PW (password_env) is not set"},
		{name: "cmd trims one newline", src: PasswordSource{Cmd: []string{script(t, `printf '%s\n\n' "$1"`), secretText}}, want: secretText + "\n"},
		{name: "cmd trims CRLF", src: PasswordSource{Cmd: []string{script(t, `printf '%s\r\n' "$1"`), secretText}}, want: secretText},
		{name: "cmd without newline", src: PasswordSource{Cmd: []string{script(t, `printf '%s' "$1"`), secretText}}, want: secretText},
		{name: "argv is not a shell line", src: PasswordSource{Cmd: []string{script(t, `printf '%s' "$1"`), "a b; echo c"}}, want: "a b; echo c"},
		{name: "non-zero exit", src: PasswordSource{Cmd: []string{script(t, `echo `+secretText+`; echo `+secretText+` >&2; exit 3`)}},
			wantErr: "exited with status 3 (it wrote 15 bytes to stderr, not shown"},
		{name: "no output", src: PasswordSource{Cmd: []string{script(t, `exit 0`)}}, wantErr: "printed nothing"},
		{name: "not found", src: PasswordSource{Cmd: []string{"/nonexistent/tidings-pw"}}, wantErr: "could not start"},
		{name: "timeout, SIGTERM ignored", src: PasswordSource{Cmd: []string{script(t, `trap '' TERM; echo `+secretText+`; echo `+secretText+` >&2; sleep 30; sleep 30`)}},
			wantErr: "did not finish within 50ms and was stopped", timeout: 50 * time.Millisecond},
		{name: "timeout, child holds stdout", src: PasswordSource{Cmd: []string{script(t, `echo `+secretText+`; sleep 30 & wait`)}},
			wantErr: "did not finish within 50ms", timeout: 50 * time.Millisecond},
		{name: "both", src: PasswordSource{Env: "WORK_PW", Cmd: []string{"true"}}, wantErr: "not both"},
		{name: "neither", src: PasswordSource{}, wantErr: "no password source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			tt.src.Account = `mail account "work"`
			got, err := tt.src.Resolve(context.Background(), Options{
				Getenv:  func(k string) string { return env[k] },
				Timeout: tt.timeout, KillGrace: 50 * time.Millisecond, Logger: log,
			})
			if strings.Contains(logs.String(), secretText) {
				t.Errorf("log holds the secret: %s", logs.String())
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if !strings.HasPrefix(err.Error(), `mail account "work": `) {
					t.Errorf("error does not name the account: %v", err)
				}
				if strings.Contains(err.Error(), secretText) {
					t.Errorf("error holds the output: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Reveal() != tt.want {
				t.Errorf("password = %q, want %q", got.Reveal(), tt.want)
			}
			if len(tt.src.Cmd) > 0 && !strings.Contains(logs.String(), "password_cmd finished") {
				t.Errorf("no debug line for the run: %q", logs.String())
			}
		})
	}
}

// TestSecretNeverPrints: every printed form of a Secret — fmt verbs, a
// struct holding it in an exported or unexported field, slog, JSON — shows
// the redaction, and only Reveal returns the value.
func TestSecretNeverPrints(t *testing.T) {
	s := NewSecret(secretText)
	type holder struct {
		Pub  Secret
		priv Secret
	}
	h := holder{Pub: s, priv: s}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("x", "pw", s, "holder", h)
	slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "pw", s, "holder", h)
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := s.MarshalText()
	forms := map[string]string{
		"%v": fmt.Sprintf("%v", s), "%s": fmt.Sprintf("%s", s), "%q": fmt.Sprintf("%q", s), "%x": fmt.Sprintf("%x", s),
		"%+v": fmt.Sprintf("%+v", s), "%#v": fmt.Sprintf("%#v", s), "%d": fmt.Sprintf("%d", s),
		"struct %v": fmt.Sprintf("%v", h), "struct %+v": fmt.Sprintf("%+v", h), "struct %#v": fmt.Sprintf("%#v", h),
		"pointer %+v": fmt.Sprintf("%+v", &h), "slog": logs.String(), "json": string(js), "text": string(text),
		"String": s.String(), "GoString": s.GoString(), "error wrap": fmt.Errorf("login: %v", s).Error(),
	}
	for name, got := range forms {
		if strings.Contains(got, secretText) || strings.Contains(got, fmt.Sprintf("%x", secretText)) {
			t.Errorf("%s prints the secret: %s", name, got)
		}
	}
	if !strings.Contains(forms["%v"], "REDACTED") || !strings.Contains(forms["json"], "REDACTED") {
		t.Errorf("redaction missing: %v / %s", forms["%v"], forms["json"])
	}
	if s.Reveal() != secretText || NewSecret("").Reveal() != "" || (Secret{}).Reveal() != "" || !(Secret{}).IsZero() {
		t.Error("Reveal does not return the value")
	}
}
