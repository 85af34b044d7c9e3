//go:build !darwin

package mail

// appleMailWrites: off macOS there is no Mail.app to write through; a
// copied Mail store is read-only.
const appleMailWrites = false
