// Package netlimit bounds what one client address may hold on a server:
// open connections (Listener) and any other per-client resource, such as
// event streams (PerAddr). Clients are told apart by address only: on a
// network that is what a client cannot cheaply multiply, and on loopback
// every local program shares 127.0.0.1, which is why the limits are
// generous.
package netlimit

import (
	"net"
	"net/netip"
	"sync"
)

// PerAddr counts a resource per client address against a limit. The zero
// value and a PerAddr with a limit below 1 admit everything.
type PerAddr struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

// NewPerAddr returns a counter admitting limit holders per address; limit < 1
// means no limit.
func NewPerAddr(limit int) *PerAddr {
	return &PerAddr{max: limit, n: map[string]int{}}
}

// Limit is the bound per address (0 when there is none).
func (p *PerAddr) Limit() int {
	if p == nil || p.max < 1 {
		return 0
	}
	return p.max
}

// Acquire takes one unit for key and reports whether it was within the
// limit; only a successful Acquire is to be Released.
func (p *PerAddr) Acquire(key string) bool {
	if p.Limit() == 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[key] >= p.max {
		return false
	}
	p.n[key]++
	return true
}

// Release returns a unit Acquire took.
func (p *PerAddr) Release(key string) {
	if p.Limit() == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// Deleting at zero keeps the map as small as the set of clients
	// holding something now, not of every client ever seen.
	if p.n[key] <= 1 {
		delete(p.n, key)
		return
	}
	p.n[key]--
}

// Held is what key holds now.
func (p *PerAddr) Held(key string) int {
	if p.Limit() == 0 {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[key]
}

// Key names the client of a remote address ("ip:port" or a net.Addr's
// String()): its IP, with IPv4-mapped IPv6 addresses as IPv4. An IPv6
// client is keyed by its /64 prefix, which a single host or home router
// usually owns whole and could otherwise draw unlimited addresses from.
// An address that does not parse is its own key.
func Key(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return remote
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		pfx, err := ip.Prefix(64)
		if err == nil {
			return pfx.String()
		}
	}
	return ip.String()
}
