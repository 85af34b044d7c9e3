//go:build !unix

package proc

import (
	"os"
	"os/exec"
)

// Outside unix there are no process groups: the child alone is stopped.
func ownGroup(*exec.Cmd) {}

func terminate(cmd *exec.Cmd) error { return cmd.Process.Kill() }

func kill(*exec.Cmd) {}

func interrupt(cmd *exec.Cmd) error { return cmd.Process.Signal(os.Interrupt) }
