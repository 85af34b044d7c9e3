//go:build unix

package policy

import "testing"

// HardenedTrustForTest makes hardened mode accept owner (instead of root)
// as the allowlist's owner and stop its ancestor check at root (instead of
// "/"), so tests outside this package can build a "root-owned" hierarchy
// in a temporary folder and drive hardened mode end to end. The returned
// function restores the production values. It panics outside a test
// binary: no production path can weaken hardened mode through it.
func HardenedTrustForTest(owner uint32, root string) (restore func()) {
	if !testing.Testing() {
		panic("policy.HardenedTrustForTest called outside a test")
	}
	oldOwner, oldRoot := hardenedOwner, hardenedTrustRoot
	hardenedOwner, hardenedTrustRoot = owner, root
	return func() { hardenedOwner, hardenedTrustRoot = oldOwner, oldRoot }
}
