//go:build !darwin

package tcc

// Default returns nil off macOS: Check reports every need not_applicable.
func Default() Prober { return nil }
