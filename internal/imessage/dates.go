package imessage

import "time"

// appleEpoch is 2001-01-01T00:00:00Z in Unix seconds, the epoch of every
// Messages date.
const appleEpoch = 978307200

// nsThreshold separates the two date units Apple has used: values at or above
// it are nanoseconds since 2001 (iOS 11 / macOS 10.13 and later), values below
// are seconds. The unit is decided per value because one database can hold
// both (attachment dates stay in seconds; migrated rows keep theirs).
const nsThreshold = 1_000_000_000_000

// appleTime converts a Messages date to UTC. Zero and negative values mean
// "not set" and return the zero time.
func appleTime(v int64) time.Time {
	switch {
	case v <= 0:
		return time.Time{}
	case v >= nsThreshold:
		return time.Unix(appleEpoch, v).UTC()
	default:
		return time.Unix(appleEpoch+v, 0).UTC()
	}
}

// appleSeconds converts fractional seconds since 2001 (plist dates, e.g. the
// edit history's "d") to UTC.
func appleSeconds(s float64) time.Time {
	if s <= 0 {
		return time.Time{}
	}
	sec := int64(s)
	return time.Unix(appleEpoch+sec, int64((s-float64(sec))*1e9)).UTC()
}

// AppleNanos returns t as nanoseconds since 2001, the unit modern databases
// store. The demo generator and tests use it to write dates.
func AppleNanos(t time.Time) int64 {
	return t.UnixNano() - appleEpoch*1e9
}

// sinceArgs returns the two thresholds a "date column ≥ t" test needs, one per
// unit, so a query can compare values of either unit (see dateAtLeast).
func sinceArgs(t time.Time) (ns, s int64) {
	if t.IsZero() || t.Unix() < appleEpoch {
		return 1, 1
	}
	return AppleNanos(t), t.Unix() - appleEpoch
}

// dateAtLeast returns an SQL condition "column ≥ the time given by the two
// parameters", correct for nanosecond and second values alike. The first
// placeholder is the nanosecond threshold, the second the seconds one.
func dateAtLeast(col string) string {
	return "(" + col + " >= ? OR (" + col + " > 0 AND " + col + " < 1000000000000 AND " + col + " >= ?))"
}
