//go:build linux || darwin

package send

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// These tests start /bin/sh: the real runner's bounded wait and output
// files are process behaviour that a fake cannot show.

func TestExecRunnerCapturesOutputAndExitCode(t *testing.T) {
	tmp := t.TempDir()
	r := ExecRunner{TempDir: tmp}
	res, err := r.Run(context.Background(), Command{Path: "/bin/sh", Args: []string{"-c", `printf 'out:%s' "$1"; printf 'err' >&2; exit 3`, "sh", `a "quoted" arg`}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Stdout != `out:a "quoted" arg` || res.Stderr != "err" || res.TimedOut {
		t.Fatalf("res = %+v", res)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("output files left behind: %v", entries)
	}
}

// A process that writes far more than a pipe holds to both streams must
// not deadlock the wait (the failure docs/security.md describes under
// "Sending and verification").
func TestExecRunnerLargeOutputDoesNotBlock(t *testing.T) {
	r := ExecRunner{TempDir: t.TempDir()}
	res, err := r.Run(context.Background(), Command{Path: "/bin/sh", Args: []string{"-c", `i=0; while [ $i -lt 3000 ]; do echo "0123456789012345678901234567890123456789012345678901234567890123456789" ; echo "errerrerrerrerrerrerrerrerrerrerrerrerrerrerrerrerrerrerrerrerrerr" >&2; i=$((i+1)); done`}, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || len(res.Stdout) != maxCapture || len(res.Stderr) != maxCapture {
		t.Fatalf("exit %d, stdout %d bytes, stderr %d bytes; want 0 and %d each", res.ExitCode, len(res.Stdout), len(res.Stderr), maxCapture)
	}
}

// A process that ignores SIGTERM is killed after the grace period.
func TestExecRunnerTerminatesThenKills(t *testing.T) {
	r := ExecRunner{TempDir: t.TempDir(), KillGrace: 200 * time.Millisecond}
	start := time.Now()
	res, err := r.Run(context.Background(), Command{Path: "/bin/sh", Args: []string{"-c", `trap '' TERM; echo started; while :; do :; done`}, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode == 0 || !strings.HasPrefix(res.Stdout, "started") {
		t.Fatalf("res = %+v", res)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("run took %s; the kill did not happen", el)
	}
}

func TestExecRunnerMissingProgram(t *testing.T) {
	_, err := ExecRunner{}.Run(context.Background(), Command{Path: "/nonexistent/osascript"})
	if err == nil {
		t.Fatal("a missing program ran")
	}
}
