package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the external program: with PROC_HELPER set it
// plays one part and exits.
func TestMain(m *testing.M) {
	switch os.Getenv("PROC_HELPER") {
	case "":
		os.Exit(m.Run())
	case "args":
		fmt.Print(strings.Join(os.Args[1:], "\x00"))
		os.Exit(0)
	case "flood":
		b := strings.Repeat("x", 1<<20)
		fmt.Print(b)
		fmt.Fprint(os.Stderr, b)
		os.Exit(3)
	case "env":
		fmt.Print(os.Getenv("DISPLAY"))
		os.Exit(0)
	case "hang":
		// A child that ignores SIGTERM, its pid in the file named by
		// argv[1]; then the leader waits forever too.
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "PROC_HELPER=stubborn")
		if err := child.Start(); err != nil {
			os.Exit(9)
		}
		_ = os.WriteFile(os.Args[1], []byte(strconv.Itoa(child.Process.Pid)), 0o600)
		time.Sleep(time.Hour)
	case "record":
		recordUntilInterrupt()
	case "stubborn":
		signalIgnoreTerm()
		time.Sleep(time.Hour)
	}
	os.Exit(2)
}

func helper(t *testing.T, part string, args ...string) Command {
	t.Helper()
	return Command{Path: os.Args[0], Args: args, Env: append(os.Environ(), "PROC_HELPER="+part), Timeout: time.Minute}
}

// TestArgvReachesTheProgramLiterally: every argument arrives as one argv
// element, byte for byte; nothing is read by a shell.
func TestArgvReachesTheProgramLiterally(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "pwned")
	args := []string{"$(touch " + marker + ")", "; touch " + marker, "a b", "`id`", "-x", ""}
	res, err := ExecRunner{}.Run(context.Background(), helper(t, "args", args...))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(res.Stdout, "\x00"); strings.Join(got, "|") != strings.Join(args, "|") {
		t.Fatalf("argv = %q, want %q", got, args)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an argument was run by a shell")
	}
}

// TestOutputIsBoundedAndDoesNotStallTheProgram: a program writing a
// megabyte to each stream finishes, and the result keeps MaxCapture bytes.
func TestOutputIsBoundedAndDoesNotStallTheProgram(t *testing.T) {
	res, err := ExecRunner{}.Run(context.Background(), helper(t, "flood"))
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || len(res.Stdout) != MaxCapture || len(res.Stderr) != MaxCapture || res.TimedOut {
		t.Fatalf("exit %d, stdout %d, stderr %d bytes, timed out %v", res.ExitCode, len(res.Stdout), len(res.Stderr), res.TimedOut)
	}
}

// TestTheChildGetsTheCommandsEnvironmentOnly: Env is the child's whole
// environment (a test's DISPLAY reaches the child, not this process).
func TestTheChildGetsTheCommandsEnvironmentOnly(t *testing.T) {
	c := helper(t, "env")
	c.Env = []string{"PROC_HELPER=env", "DISPLAY=:97"}
	res, err := ExecRunner{}.Run(context.Background(), c)
	if err != nil || res.Stdout != ":97" {
		t.Fatalf("stdout %q, err %v", res.Stdout, err)
	}
	if os.Getenv("DISPLAY") == ":97" {
		t.Fatal("DISPLAY leaked into this process")
	}
}

// TestCancelledContextIsAnError: a call whose ctx ends reports ctx's error.
func TestCancelledContextIsAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (ExecRunner{}).Run(ctx, helper(t, "args")); err == nil {
		t.Fatal("no error for a cancelled context")
	}
}
