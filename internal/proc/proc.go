// Package proc runs the external programs of the device services
// (internal/capture, internal/shortcuts, internal/utilities): a Command is
// data (a program path and its argv, never a shell string), so tests assert
// exactly what would run, and ExecRunner is the one real runner.
//
// The process boundary it guarantees (docs/security.md, "Device services"):
//   - argv only: the program is exec'd directly, nothing is interpreted by a
//     shell, and stdin is /dev/null;
//   - a bounded wait: at Timeout the whole process group gets SIGTERM, and
//     KillGrace later SIGKILL, so a recorder's helper children do not
//     outlive the call;
//   - stdout and stderr go to private temporary files read back (at most
//     MaxCapture bytes each) after the process ended, never to a pipe or an
//     unbounded buffer: a pipe nobody drains stalls a chatty program, and
//     the wait then never ends.
//
// It does not import the MCP SDK.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// MaxCapture is how much of stdout and of stderr a Result keeps.
const MaxCapture = 64 << 10

// Command is one external process described as data.
type Command struct {
	// Path is the program's absolute path (found by exec.LookPath when the
	// service was built).
	Path string
	Args []string
	// Env, when not nil, is the child's whole environment (DISPLAY for a
	// test's Xvfb, for example); nil inherits this process's.
	Env []string
	// Timeout bounds the run; zero means DefaultTimeout.
	Timeout time.Duration
	// Interrupt, when positive, is how long the program runs before it is
	// asked to finish: SIGINT to its process group, the ordinary end of a
	// recorder with no duration flag (pw-record, afrecord), which then
	// closes its file. Timeout still bounds what follows.
	Interrupt time.Duration
}

// DefaultTimeout bounds a Command without its own Timeout.
const DefaultTimeout = 30 * time.Second

// Result is what a finished process left behind.
type Result struct {
	ExitCode int
	// Stdout and Stderr are cut to their first MaxCapture bytes.
	Stdout, Stderr string
	// TimedOut is true when the process was stopped because Timeout passed.
	TimedOut bool
	// Interrupted is true when the process got Command.Interrupt's SIGINT.
	Interrupted bool
}

// Runner starts processes. ExecRunner is the real one; tests use a fake
// that records Commands.
type Runner interface {
	// Run runs c to completion. The error is for a process that could not
	// be started or a ctx that ended; a non-zero exit is a Result.
	Run(ctx context.Context, c Command) (Result, error)
}

// ExecRunner runs commands with os/exec in their own process group.
type ExecRunner struct {
	// TempDir holds the output files; empty means os.TempDir().
	TempDir string
	// KillGrace is the time between SIGTERM and SIGKILL; zero means 2 s.
	KillGrace time.Duration
}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, c Command) (Result, error) {
	grace := r.KillGrace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	stdout, err := os.CreateTemp(r.TempDir, "tidings-proc-out-*")
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", c.Path, err)
	}
	defer os.Remove(stdout.Name())
	defer stdout.Close()
	stderr, err := os.CreateTemp(r.TempDir, "tidings-proc-err-*")
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", c.Path, err)
	}
	defer os.Remove(stderr.Name())
	defer stderr.Close()

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, c.Path, c.Args...)
	cmd.Stdin = nil // /dev/null
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = c.Env
	ownGroup(cmd)
	// Cancel (ctx ended or Timeout passed) sends SIGTERM to the group;
	// WaitDelay later os/exec kills the leader and we kill the group.
	cmd.Cancel = func() error { return terminate(cmd) }
	cmd.WaitDelay = grace
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("run %s: %w", c.Path, err)
	}
	interrupted := make(chan bool, 1)
	if c.Interrupt > 0 {
		done := make(chan struct{})
		defer close(done)
		go func() {
			t := time.NewTimer(c.Interrupt)
			defer t.Stop()
			select {
			case <-t.C:
				interrupted <- interrupt(cmd) == nil
			case <-done:
			}
		}()
	}
	waitErr := cmd.Wait()
	kill(cmd) // whatever of the group is left (a child that ignored SIGTERM)
	res := Result{ExitCode: cmd.ProcessState.ExitCode(), TimedOut: runCtx.Err() != nil && ctx.Err() == nil}
	select {
	case res.Interrupted = <-interrupted:
	default:
	}
	res.Stdout, res.Stderr = readCapture(stdout), readCapture(stderr)
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) && runCtx.Err() == nil {
		return res, fmt.Errorf("run %s: %w", c.Path, waitErr)
	}
	return res, nil
}

func readCapture(f *os.File) string {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, MaxCapture))
	return string(b)
}
