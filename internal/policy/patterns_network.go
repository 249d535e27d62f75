package policy

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// localNetwork flags curl and wget calls to this machine or the private
// network, where Caduceus's own API and cloud metadata services listen.
func (a *analyzer) localNetwork(args []word) {
	f := flags(args, "", "unix-socket", "abstract-unix-socket", "resolve", "connect-to")
	for _, o := range []string{"unix-socket", "abstract-unix-socket", "resolve", "connect-to"} {
		if f.hasLong(o) {
			a.report(RiskNetworkPrivate, "Contacts a service on this machine (--"+o+")")
			return
		}
	}
	for _, w := range args {
		if strings.HasPrefix(w.text, "-") {
			continue
		}
		if host, ok := hostOf(w.text); ok && privateHost(host) {
			a.report(RiskNetworkPrivate, "Contacts a service on this machine or the local network ("+host+")")
			return
		}
	}
}

// hostOf extracts the host of a URL, or of "host[:port][/path]" as curl
// accepts it.
func hostOf(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, " \t\n") {
		return "", false
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", false
	}
	return u.Hostname(), u.Hostname() != ""
}

// privateHost reports whether host is this machine, a private or
// link-local address, or a name reserved for such places.
func privateHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
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
		if addr, ok = legacyIPv4(h); !ok {
			return false
		}
	}
	addr = addr.Unmap()
	if addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsUnspecified() || addr.IsInterfaceLocalMulticast() {
		return true
	}
	// Carrier-grade NAT space, used by overlay networks such as Tailscale.
	return netip.MustParsePrefix("100.64.0.0/10").Contains(addr)
}

// legacyIPv4 reads the IPv4 spellings inet_aton accepts and URL parsers
// pass through: "127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1".
func legacyIPv4(h string) (netip.Addr, bool) {
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
