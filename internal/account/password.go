package account

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"time"
)

// DefaultCmdTimeout is how long password_cmd may run before it is stopped.
const DefaultCmdTimeout = 10 * time.Second

// defaultKillGrace is the time between SIGTERM and SIGKILL.
const defaultKillGrace = 2 * time.Second

// maxSecretOutput bounds what is read from password_cmd's stdout (and
// stderr, which is read only so it does not reach the terminal or the MCP
// client's log).
const maxSecretOutput = 64 << 10

// PasswordSource says where an account's password (or, for auth =
// "xoauth2", its access token) comes from: exactly one of Env and Cmd.
type PasswordSource struct {
	// Account names the account in errors, e.g. `mail account "work"`.
	Account string
	// Env is the name of an environment variable holding the password.
	Env string
	// Cmd is the argv of a command printing the password on stdout; it is
	// run directly, never through a shell.
	Cmd []string
}

// Options tune Resolve; the zero value is production's.
type Options struct {
	// Getenv reads the environment; nil = os.Getenv.
	Getenv func(string) string
	// Timeout bounds password_cmd; zero = DefaultCmdTimeout (10 s).
	Timeout time.Duration
	// KillGrace is the wait between SIGTERM and SIGKILL; zero = 2 s.
	KillGrace time.Duration
	// Logger receives one debug line per password_cmd run (account, exit
	// status, duration), never its output; nil = slog.Default().
	Logger *slog.Logger
}

// Resolve returns the password. Errors name the account and the failure
// (unset variable, command not found, timeout, exit status, no output) and
// never hold the command's output: stdout is the secret, and stderr of a
// password manager can echo it or other secrets, so it is counted, not
// shown (docs/security.md "Accounts and secrets").
func (src PasswordSource) Resolve(ctx context.Context, o Options) (Secret, error) {
	switch {
	case src.Env != "" && len(src.Cmd) > 0:
		return Secret{}, fmt.Errorf("%s: set password_env or password_cmd, not both", src.Account)
	case src.Env != "":
		getenv := o.Getenv
		if getenv == nil {
			getenv = osGetenv
		}
		v := getenv(src.Env)
		if v == "" {
			return Secret{}, fmt.Errorf("%s: environment variable %s (password_env) is not set", src.Account, src.Env)
		}
		return NewSecret(v), nil
	case len(src.Cmd) > 0:
		return src.runCmd(ctx, o)
	}
	return Secret{}, fmt.Errorf("%s: no password source: set password_env or password_cmd", src.Account)
}

// cappedBuffer keeps the first max bytes and counts the rest.
type cappedBuffer struct {
	buf   bytes.Buffer
	max   int
	total int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.total += len(p)
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (src PasswordSource) runCmd(ctx context.Context, o Options) (Secret, error) {
	timeout, grace := o.Timeout, o.KillGrace
	if timeout <= 0 {
		timeout = DefaultCmdTimeout
	}
	if grace <= 0 {
		grace = defaultKillGrace
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stdout := &cappedBuffer{max: maxSecretOutput}
	stderr := &cappedBuffer{max: maxSecretOutput}
	cmd := exec.CommandContext(runCtx, src.Cmd[0], src.Cmd[1:]...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownGroup(cmd)
	cmd.Cancel = func() error { return terminate(cmd) }
	cmd.WaitDelay = grace
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Secret{}, fmt.Errorf("%s: password_cmd %q could not start: %w", src.Account, src.Cmd[0], unwrapExec(err))
	}
	waitErr := cmd.Wait()
	timedOut := runCtx.Err() != nil && ctx.Err() == nil
	if timedOut {
		killGroup(cmd) // children that outlived the leader
	}
	status := cmd.ProcessState.ExitCode()
	log.Debug("password_cmd finished", "account", src.Account, "exit_status", status, "timed_out", timedOut,
		"duration", time.Since(start).Round(time.Millisecond))
	hint := ""
	if stderr.total > 0 {
		hint = fmt.Sprintf(" (it wrote %d bytes to stderr, not shown because they may hold secrets)", stderr.total)
	}
	switch {
	case ctx.Err() != nil:
		return Secret{}, fmt.Errorf("%s: password_cmd: %w", src.Account, ctx.Err())
	case timedOut:
		return Secret{}, fmt.Errorf("%s: password_cmd %q did not finish within %s and was stopped%s", src.Account, src.Cmd[0], timeout, hint)
	case status != 0:
		return Secret{}, fmt.Errorf("%s: password_cmd %q exited with status %d%s", src.Account, src.Cmd[0], status, hint)
	case waitErr != nil && !errors.Is(waitErr, exec.ErrWaitDelay):
		return Secret{}, fmt.Errorf("%s: password_cmd %q failed%s", src.Account, src.Cmd[0], hint)
	case stdout.total > maxSecretOutput:
		return Secret{}, fmt.Errorf("%s: password_cmd %q printed more than 64 KiB, which is not a password", src.Account, src.Cmd[0])
	}
	out := stdout.buf.String()
	if s, ok := strings.CutSuffix(out, "\n"); ok {
		out = strings.TrimSuffix(s, "\r")
	}
	if out == "" {
		return Secret{}, fmt.Errorf("%s: password_cmd %q printed nothing on stdout%s", src.Account, src.Cmd[0], hint)
	}
	return NewSecret(out), nil
}

// unwrapExec drops exec.Error's quoting of the whole argv's first element
// twice; the message stays "executable file not found in $PATH" and the like.
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}
