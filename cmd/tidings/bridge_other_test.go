//go:build !linux

package main

import "testing"

// watchOpens needs inotify; elsewhere the open-tracking test skips.
func watchOpens(t *testing.T, paths ...string) func() []string {
	t.Skip("open tracking uses Linux inotify")
	return nil
}
