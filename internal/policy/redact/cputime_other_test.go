//go:build !unix

package redact

import "time"

// cpuTime is unavailable here; benchmarks then omit the per-core figure.
func cpuTime() time.Duration { return 0 }
