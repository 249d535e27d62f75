package netguard

import (
	"net/netip"
	"strconv"
	"strings"
)

// cgnat is carrier-grade NAT space, used by overlay networks (Tailscale).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// thisNetwork is 0.0.0.0/8, which Linux routes to this machine.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// PrivateAddr reports whether addr is this machine, a private or
// link-local network, or otherwise not a place on the public internet.
func PrivateAddr(addr netip.Addr) bool {
	addr = addr.Unmap()
	return addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsUnspecified() || addr.IsInterfaceLocalMulticast() || addr.IsMulticast() ||
		cgnat.Contains(addr) || (addr.Is4() && thisNetwork.Contains(addr))
}

// PrivateName reports from its text alone whether host names this machine
// or the private network: a literal private address (in any spelling
// inet_aton accepts) or a name reserved for such places. It cannot see
// where other names resolve; Guard.Resolve does.
func PrivateName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	switch {
	case h == "localhost", strings.HasSuffix(h, ".localhost"),
		strings.HasSuffix(h, ".local"),                     // mDNS
		h == "metadata", strings.HasSuffix(h, ".internal"), // metadata.google.internal, host.docker.internal
		strings.HasSuffix(h, ".home.arpa"):
		return true
	}
	addr, err := netip.ParseAddr(h)
	if err != nil {
		var ok bool
		if addr, ok = LegacyIPv4(h); !ok {
			return false
		}
	}
	return PrivateAddr(addr)
}

// LegacyIPv4 reads the IPv4 spellings inet_aton accepts and URL parsers
// pass through: "127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1".
func LegacyIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	// The last part fills the remaining bytes.
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (24 - 8*uint(i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(32-8*uint(len(nums)-1)) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
