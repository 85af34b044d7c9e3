//go:build !unix

package proc

func signalIgnoreTerm() {}
