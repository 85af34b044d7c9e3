//go:build unix

package account

import (
	"os"
	"os/exec"
	"syscall"
)

var osGetenv = os.Getenv

// ownGroup starts the command in its own process group so a timeout stops
// the helpers it spawned too (a shell wrapper's children).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// terminate sends SIGTERM to the command's process group.
func terminate(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

// killGroup sends SIGKILL to whatever is left of the process group after
// a timeout; exec has already killed the leader.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
