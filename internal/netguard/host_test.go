package netguard

import (
	"net/netip"
	"strings"
	"testing"
)

// Every spelling a C resolver's inet_aton reads as an address is parsed as
// that address here, so it is checked by class and never reaches a
// resolver; numeric-looking hosts that are not addresses are refused.
func TestIPSpellingsAreParsedAsTheIPTheyMean(t *testing.T) {
	for _, tc := range []struct {
		host string
		want string // address; "" = a name; "!" = refused
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"0xa9.0xfe.0xa9.0xfe", "169.254.169.254"},
		{"2852039166", "169.254.169.254"},
		{"10.1", "10.0.0.1"},
		{"192.168.257", "192.168.1.1"},
		{"4294967295", "255.255.255.255"},
		{"::1", "::1"},
		{"[::1]", "::1"},
		{"::ffff:127.0.0.1", "::ffff:127.0.0.1"},
		{"0:0:0:0:0:ffff:7f00:1", "::ffff:127.0.0.1"},
		{"4294967296", "!"},
		{"256.0.0.1", "!"},
		{"1.2.3.4.5", "!"},
		{"08.0.0.1", "!"},
		{"0x1g.1", ""}, // last label is "1": a number → address parse fails
		{"1.2.3.09", "!"},
		{"127.0.0.1..", "!"},
		{"fe80::1%eth0", "!"},
		{"example.com", ""},
		{"Example.COM.", ""},
		{"xn--bcher-kva.example", ""},
		{"bücher.example", ""},
		{"1.example", ""},
		{"0x7f.example", ""},
		{"a b", "!"},
		{"a%2e", "!"},
		{"", "!"},
		{"a..b", "!"},
	} {
		h, err := ParseHost(tc.host)
		switch {
		case tc.want == "!":
			if err == nil {
				t.Errorf("ParseHost(%q) = %v, want refused", tc.host, h)
			}
		case tc.want == "" && tc.host == "0x1g.1":
			if err == nil {
				t.Errorf("ParseHost(%q) = %v, want refused (ends in a number that is no address)", tc.host, h)
			}
		case tc.want == "":
			if err != nil || h.IsIP() {
				t.Errorf("ParseHost(%q) = %v, %v; want a name", tc.host, h, err)
			}
		default:
			if err != nil || h.Addr != netip.MustParseAddr(tc.want) {
				t.Errorf("ParseHost(%q) = %v, %v; want %s", tc.host, h, err, tc.want)
			}
		}
	}
}

// Every refused class, including the IPv6 forms that embed a refused IPv4
// address, and the public addresses that stay allowed.
func TestClassNamesEveryRefusedRange(t *testing.T) {
	for _, tc := range []struct{ addr, class string }{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"10.0.0.1", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"169.254.169.254", "link-local"},
		{"100.64.0.1", "CGNAT"},
		{"100.127.255.255", "CGNAT"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this network"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"192.0.2.1", "documentation"},
		{"198.51.100.1", "documentation"},
		{"203.0.113.1", "documentation"},
		{"198.18.0.1", "benchmarking"},
		{"192.0.0.8", "IETF"},
		{"::1", "loopback"},
		{"::", "unspecified"},
		{"fc00::1", "unique local"},
		{"fd12:3456::1", "unique local"},
		{"fe80::1", "link-local"},
		{"fec0::1", "site-local"},
		{"ff02::1", "multicast"},
		{"2001:db8::1", "documentation"},
		{"::ffff:127.0.0.1", "IPv4-mapped IPv6 of loopback"},
		{"::ffff:10.0.0.1", "IPv4-mapped IPv6 of private"},
		{"::ffff:169.254.169.254", "IPv4-mapped IPv6 of link-local"},
		{"::127.0.0.1", "IPv4-compatible IPv6 of loopback"},
		{"::8.8.8.8", "IPv4-compatible IPv6 (deprecated"},
		{"64:ff9b::7f00:1", "NAT64 (64:ff9b::/96) of loopback"},
		{"64:ff9b::a00:1", "NAT64 (64:ff9b::/96) of private"},
		{"64:ff9b:1::1", "local-use NAT64"},
		{"2002:7f00:1::1", "6to4 (2002::/16) of loopback"},
		{"2001::1", "Teredo"},
		{"8.8.8.8", ""},
		{"93.184.215.14", ""},
		{"100.63.255.255", ""},
		{"172.32.0.1", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},
		{"2606:4700::1111", ""},
		{"2002:808:808::1", ""},
	} {
		got := Class(netip.MustParseAddr(tc.addr))
		if tc.class == "" && got != "" || tc.class != "" && !strings.Contains(got, tc.class) {
			t.Errorf("Class(%s) = %q, want %q", tc.addr, got, tc.class)
		}
	}
}

// FuzzParseHost: whatever the host, ParseHost never panics; a name it
// returns is a valid DNS name that does not end in a number (so no
// numeric spelling ever reaches a resolver); a strict dotted-quad or IPv6
// address parses as exactly that address.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.1", "127.1", "::ffff:127.0.0.1",
		"example.com", "bücher.example", "1.2.3.4.5", "0x", "0.", ".", "a..b", "[::1]", "fe80::1%lo", "127.0.0.1."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHost(s)
		if err != nil {
			return
		}
		if !h.IsIP() {
			if !validName(h.Name) || endsInANumber(h.Name) || h.Name != strings.ToLower(h.Name) {
				t.Fatalf("ParseHost(%q) = name %q, which a resolver could read as an address or is invalid", s, h.Name)
			}
			return
		}
		if a, perr := netip.ParseAddr(s); perr == nil && a.Zone() == "" && a != h.Addr {
			t.Fatalf("ParseHost(%q) = %v, netip reads %v", s, h.Addr, a)
		}
		_ = Class(h.Addr)
	})
}
