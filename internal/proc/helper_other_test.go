//go:build !unix

package proc

func signalIgnoreTerm() {}

func recordUntilInterrupt() {}
