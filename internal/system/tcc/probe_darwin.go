//go:build darwin

package tcc

import (
	"context"
	"os"
)

// Default returns the macOS prober. Full Disk Access and Contacts are
// read probes of the protected path (their only honest test). Automation,
// Location, Screen Recording and Microphone have status APIs
// (AEDeterminePermissionToAutomateTarget, CLLocationManager,
// CGPreflightScreenCaptureAccess, AVCaptureDevice) that a build without
// cgo cannot call; they are reported unknown with where to look, never
// guessed from a failed call.
func Default() Prober { return darwinProber{} }

type darwinProber struct{}

func (darwinProber) Probe(_ context.Context, n Need) Result {
	switch n.Grant {
	case FullDiskAccess, Contacts:
		return ReadProbe(n, os.Open)
	}
	return Result{Need: n, State: Unknown, How: "no status API reachable from this build",
		Detail: "check System Settings > Privacy & Security for the program that starts Tidings; macOS asks on first use"}
}
