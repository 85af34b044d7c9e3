// Package netguard is the SSRF guard of every URL a caller chooses
// (web_fetch): an HTTP client whose dialer resolves the host itself with
// an injectable resolver, checks every address it got, and dials the
// checked IP, so DNS rebinding between a check and a connection is
// impossible and a refusal happens before any packet leaves
// (docs/security.md, "SSRF guard"). It does not import the MCP SDK.
package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// Host is a URL host as the guard reads it: an IP address, or a DNS name
// that a resolver may be asked about.
type Host struct {
	// Addr is set when the host is an IP address in any spelling a C
	// resolver accepts (decimal 2130706433, octal 0177.0.0.1, hex 0x7f.1,
	// short 127.1, IPv6 literals); such a host is never resolved.
	Addr netip.Addr
	// Name is the lower-case ASCII (IDNA) name when Addr is not set.
	Name string
}

// IsIP reports whether the host is an address literal.
func (h Host) IsIP() bool { return h.Addr.IsValid() }

func (h Host) String() string {
	if h.IsIP() {
		return h.Addr.String()
	}
	return h.Name
}

// ErrBadHost is wrapped by every ParseHost error.
var ErrBadHost = errors.New("not a valid host name or IP address")

// ParseHost reads a URL host (without brackets or port). A host whose last
// label is a number — the WHATWG URL standard's "ends in a number" rule —
// is an IPv4 address by inet_aton's rules (each part decimal, 0-prefixed
// octal or 0x-prefixed hex; 1 to 4 parts, the last filling the remaining
// bytes) or it is refused: it is never handed to a resolver, because a C
// resolver would read 2130706433 or 0177.0.0.1 as 127.0.0.1 behind the
// guard's back. A host with a colon is an IPv6 literal (zones refused).
// Anything else must be a DNS name of letters, digits, '-' and '_' after
// IDNA mapping.
func ParseHost(s string) (Host, error) {
	if s == "" {
		return Host{}, fmt.Errorf("empty host: %w", ErrBadHost)
	}
	if strings.Contains(s, ":") {
		a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
		if err != nil {
			return Host{}, fmt.Errorf("%q: %w", s, ErrBadHost)
		}
		if a.Zone() != "" {
			return Host{}, fmt.Errorf("%q is an IPv6 address with a zone: %w", s, ErrBadHost)
		}
		return Host{Addr: a}, nil
	}
	name := s
	if !isASCII(name) {
		var err error
		if name, err = idna.Lookup.ToASCII(name); err != nil {
			return Host{}, fmt.Errorf("%q: %w", s, ErrBadHost)
		}
	}
	name = strings.ToLower(name)
	if endsInANumber(name) {
		a, ok := parseIPv4(name)
		if !ok {
			return Host{}, fmt.Errorf("%q looks like an IPv4 address but is not one: %w", s, ErrBadHost)
		}
		return Host{Addr: a}, nil
	}
	if !validName(name) {
		return Host{}, fmt.Errorf("%q: %w", s, ErrBadHost)
	}
	return Host{Name: strings.TrimSuffix(name, ".")}, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// validName: 1 to 253 bytes, labels of 1 to 63 letters, digits, '-' or
// '_', an optional trailing dot.
func validName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// endsInANumber is the WHATWG URL standard's test: the last label
// (ignoring one trailing dot) is all digits or parses as an IPv4 number.
func endsInANumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4Number reads one part: 0x/0X hex, a leading 0 octal, else
// decimal; "0x" alone is 0. Values above 2^32-1 fail (no part may exceed
// the whole address).
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
		if n > 0xFFFFFFFF {
			return 0, false
		}
	}
	return n, true
}

// parseIPv4 is inet_aton: a.b.c.d, a.b.c (c fills 16 bits), a.b (b fills
// 24 bits), a (32 bits); one trailing dot allowed.
func parseIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
