package netguard

import (
	"net/netip"
)

// A refused range and the name of its destination class.
type refusedRange struct {
	prefix netip.Prefix
	class  string
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// refused4 are the IPv4 ranges the guard never dials unless allow-listed.
// Documentation and benchmarking ranges are refused too: they are never
// routed on the public internet, so a URL there can only reach a lab
// network, a misconfigured local host, or — for 198.18.0.0/15 — the
// fake-IP answers local proxy tools hand out for every name; no public
// page lives there and the allow list can still admit one
// (docs/security.md, "SSRF guard").
var refused4 = []refusedRange{
	{mustPrefix("0.0.0.0/32"), "unspecified"},
	{mustPrefix("0.0.0.0/8"), `"this network" (0.0.0.0/8)`},
	{mustPrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{mustPrefix("100.64.0.0/10"), "shared CGNAT (100.64.0.0/10)"},
	{mustPrefix("127.0.0.0/8"), "loopback"},
	{mustPrefix("169.254.0.0/16"), "link-local"},
	{mustPrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{mustPrefix("192.0.0.0/24"), "IETF protocol assignment (192.0.0.0/24)"},
	{mustPrefix("192.0.2.0/24"), "documentation (192.0.2.0/24)"},
	{mustPrefix("192.88.99.0/24"), "6to4 relay anycast (192.88.99.0/24)"},
	{mustPrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{mustPrefix("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"},
	{mustPrefix("198.51.100.0/24"), "documentation (198.51.100.0/24)"},
	{mustPrefix("203.0.113.0/24"), "documentation (203.0.113.0/24)"},
	{mustPrefix("224.0.0.0/4"), "multicast"},
	{mustPrefix("255.255.255.255/32"), "broadcast"},
	{mustPrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},
}

// refused6 are the IPv6 ranges refused outright. Ranges that embed an
// IPv4 address (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, NAT64
// 64:ff9b::/96, 6to4 2002::/16) are judged by the address they embed in
// Class.
var refused6 = []refusedRange{
	{mustPrefix("::/128"), "unspecified"},
	{mustPrefix("::1/128"), "loopback"},
	{mustPrefix("64:ff9b:1::/48"), "local-use NAT64 (64:ff9b:1::/48)"},
	{mustPrefix("100::/64"), "discard-only (100::/64)"},
	{mustPrefix("2001::/32"), "Teredo tunnel (2001::/32)"},
	{mustPrefix("2001:2::/48"), "benchmarking (2001:2::/48)"},
	{mustPrefix("2001:db8::/32"), "documentation (2001:db8::/32)"},
	{mustPrefix("3fff::/20"), "documentation (3fff::/20)"},
	{mustPrefix("fc00::/7"), "unique local (fc00::/7)"},
	{mustPrefix("fe80::/10"), "link-local"},
	{mustPrefix("fec0::/10"), "site-local (fec0::/10)"},
	{mustPrefix("ff00::/8"), "multicast"},
}

var (
	compat4 = mustPrefix("::/96")
	nat64   = mustPrefix("64:ff9b::/96")
	sixto4  = mustPrefix("2002::/16")
)

// Class returns the destination class for which the guard refuses a — for
// example "loopback", "private (RFC 1918)" or "IPv4-mapped IPv6 of
// loopback" — or "" when a is a public address the guard dials.
func Class(a netip.Addr) string {
	if !a.IsValid() {
		return "invalid"
	}
	a = a.WithZone("")
	if a.Is4() {
		for _, r := range refused4 {
			if r.prefix.Contains(a) {
				return r.class
			}
		}
		return ""
	}
	if a.Is4In6() {
		if c := Class(a.Unmap()); c != "" {
			return "IPv4-mapped IPv6 of " + c
		}
		return ""
	}
	for _, r := range refused6 {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	b := a.As16()
	switch {
	case compat4.Contains(a):
		// Deprecated (RFC 4291 §2.5.5.1) and never routed: refused
		// whatever it embeds, named after the embedded class if any.
		if c := Class(netip.AddrFrom4([4]byte(b[12:16]))); c != "" {
			return "IPv4-compatible IPv6 of " + c
		}
		return "IPv4-compatible IPv6 (deprecated, ::/96)"
	case nat64.Contains(a):
		if c := Class(netip.AddrFrom4([4]byte(b[12:16]))); c != "" {
			return "NAT64 (64:ff9b::/96) of " + c
		}
	case sixto4.Contains(a):
		if c := Class(netip.AddrFrom4([4]byte(b[2:6]))); c != "" {
			return "6to4 (2002::/16) of " + c
		}
	}
	return ""
}
