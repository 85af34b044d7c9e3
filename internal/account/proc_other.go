//go:build !unix

package account

import (
	"os"
	"os/exec"
)

var osGetenv = os.Getenv

func ownGroup(*exec.Cmd) {}

func terminate(cmd *exec.Cmd) error { return cmd.Process.Kill() }

func killGroup(*exec.Cmd) {}
