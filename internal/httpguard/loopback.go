package httpguard

import (
	"net"
	"net/netip"
	"strings"
)

// IsLoopbackAddr reports whether a listen address (host, host:port or
// [host]:port) binds only the loopback interface: an IP in 127.0.0.0/8, ::1,
// or "localhost". An empty host, as in ":7420", or 0.0.0.0 binds every
// interface and is not loopback.
func IsLoopbackAddr(addr string) bool {
	host, _ := splitHostPort(addr)
	if strings.EqualFold(host, "localhost") {
		return true
	}
	return isLoopbackIP(host)
}

// isLoopbackHost reports whether a Host header names this machine in a way a
// DNS-rebinding attacker cannot produce. Browsers resolve localhost and
// *.localhost to loopback themselves (RFC 6761) and never send an attacker's
// domain as one of these names.
func isLoopbackHost(hostport string) bool {
	host, _ := splitHostPort(hostport)
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	const suffix = ".localhost"
	if host == "localhost" || (strings.HasSuffix(host, suffix) && len(host) > len(suffix)) {
		return true
	}
	return isLoopbackIP(host)
}

func isLoopbackIP(host string) bool {
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// splitHostPort is net.SplitHostPort that also accepts a missing port, which
// Host headers and listen addresses both allow, returning the host without
// IPv6 brackets either way.
func splitHostPort(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	if len(hostport) >= 2 && hostport[0] == '[' && hostport[len(hostport)-1] == ']' {
		return hostport[1 : len(hostport)-1], ""
	}
	return hostport, ""
}
