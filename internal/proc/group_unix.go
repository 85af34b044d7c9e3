//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the child as the leader of a new process group, so a
// signal to -pid reaches the children it starts too.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// terminate sends SIGTERM to the child's process group.
func terminate(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }

// kill sends SIGKILL to what is left of the child's process group.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// interrupt sends SIGINT to the child's process group.
func interrupt(cmd *exec.Cmd) error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
