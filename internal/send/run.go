package send

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Command is one external process, described as data so tests can assert
// exactly what would run. Data never enters a script's source: scripts are
// constant files and everything variable travels in Args or in files the
// Args name.
type Command struct {
	Path string
	Args []string
	// Timeout bounds the run: the process gets SIGTERM when it passes and
	// SIGKILL KillGrace later.
	Timeout time.Duration
}

// RunResult is what a finished process left behind. Stdout and Stderr are
// cut to their first 64 KiB.
type RunResult struct {
	ExitCode int
	Stdout   string
	Stderr   string
	// TimedOut is true when the process was stopped because Timeout passed.
	TimedOut bool
}

// Runner starts processes. ExecRunner is the real one; tests use a fake
// that records Commands and runs nothing.
type Runner interface {
	// Run runs c to completion. The error is for a process that could not
	// be started; a non-zero exit is a RunResult.
	Run(ctx context.Context, c Command) (RunResult, error)
}

// maxCapture is how much of stdout/stderr a RunResult keeps.
const maxCapture = 64 << 10

// ExecRunner runs commands with os/exec. stdout and stderr go to private
// temporary files that are read only after the process ended: a pipe
// nobody drains fills up when a process echoes a long argument back in an
// error, and the wait then never ends (docs/security.md, "Sending and
// verification"). The wait is bounded:
// SIGTERM at Timeout, SIGKILL KillGrace later.
type ExecRunner struct {
	// TempDir holds the output files; empty means os.TempDir().
	TempDir string
	// KillGrace is the time between SIGTERM and SIGKILL; zero means 3 s.
	KillGrace time.Duration
}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, c Command) (RunResult, error) {
	grace := r.KillGrace
	if grace <= 0 {
		grace = 3 * time.Second
	}
	stdout, err := os.CreateTemp(r.TempDir, "tidings-out-*")
	if err != nil {
		return RunResult{}, fmt.Errorf("run %s: %w", c.Path, err)
	}
	defer os.Remove(stdout.Name())
	defer stdout.Close()
	stderr, err := os.CreateTemp(r.TempDir, "tidings-err-*")
	if err != nil {
		return RunResult{}, fmt.Errorf("run %s: %w", c.Path, err)
	}
	defer os.Remove(stderr.Name())
	defer stderr.Close()

	runCtx := ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(runCtx, c.Path, c.Args...)
	cmd.Stdin = nil
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = grace
	if err := cmd.Start(); err != nil {
		return RunResult{}, fmt.Errorf("run %s: %w", c.Path, err)
	}
	waitErr := cmd.Wait()
	res := RunResult{ExitCode: cmd.ProcessState.ExitCode()}
	if runCtx.Err() != nil && ctx.Err() == nil {
		res.TimedOut = true
	}
	res.Stdout = readCapture(stdout)
	res.Stderr = readCapture(stderr)
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) && runCtx.Err() == nil {
		return res, fmt.Errorf("run %s: %w", c.Path, waitErr)
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

func readCapture(f *os.File) string {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxCapture))
	return string(b)
}

// privateTempDir creates a 0700 temporary directory for a script and its
// data files; the caller removes it (also on failure).
func privateTempDir(parent string) (string, error) {
	dir, err := os.MkdirTemp(parent, "tidings-send-")
	if err != nil {
		return "", fmt.Errorf("temporary folder: %w", err)
	}
	return dir, nil
}
