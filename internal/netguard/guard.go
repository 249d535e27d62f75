package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Resolver looks up a host's addresses; *net.Resolver is one. Tests pass a
// map so that a name can resolve to 127.0.0.1 without touching DNS.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is what a Guard lets through.
type Config struct {
	// Allow lists hosts and networks that may be reached even though they
	// are private: a name ("intranet.example", matching its subdomains
	// too), an address ("127.0.0.1") or a network ("10.0.0.0/8").
	Allow []string
	// Block lists hosts and networks never reached, in the same forms; it
	// wins over Allow.
	Block []string
	// AllowPrivate lets every private address through (a trusted lab).
	AllowPrivate bool
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver Resolver
}

// Guard checks hosts against a Config; safe for concurrent use.
type Guard struct {
	allow, block rules
	allowPrivate bool
	resolver     Resolver
	dialer       net.Dialer
}

// ErrBlocked is wrapped by every refusal, for errors.Is.
var ErrBlocked = errors.New("address not allowed")

// BlockedError says which host was refused and why.
type BlockedError struct {
	Host   string
	Addr   netip.Addr // the address that was refused; zero for a host refused by name
	Reason string
}

func (e *BlockedError) Error() string {
	if e.Addr.IsValid() && e.Addr.String() != e.Host {
		return fmt.Sprintf("%s (%s) is not allowed: %s", e.Host, e.Addr, e.Reason)
	}
	return fmt.Sprintf("%s is not allowed: %s", e.Host, e.Reason)
}

func (e *BlockedError) Unwrap() error { return ErrBlocked }

// New returns a Guard, or an error naming the first entry of Allow or
// Block that is neither a host name, an address nor a network.
func New(cfg Config) (*Guard, error) {
	g := &Guard{allowPrivate: cfg.AllowPrivate, resolver: cfg.Resolver}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	var err error
	if g.allow, err = parseRules(cfg.Allow); err != nil {
		return nil, fmt.Errorf("allow: %w", err)
	}
	if g.block, err = parseRules(cfg.Block); err != nil {
		return nil, fmt.Errorf("block: %w", err)
	}
	return g, nil
}

// Resolve checks host and returns the addresses that may be dialled. A
// refusal is a *BlockedError; a failed lookup is returned as it came.
func (g *Guard) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return nil, &BlockedError{Host: host, Reason: "no host"}
	}
	if g.block.matchName(host) {
		return nil, &BlockedError{Host: host, Reason: "on the block-list"}
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.Unmap()}
	} else if a, ok := LegacyIPv4(host); ok {
		addrs = []netip.Addr{a}
	} else {
		found, err := g.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("resolve %s: no addresses", host)
		}
		for _, a := range found {
			addrs = append(addrs, a.Unmap())
		}
	}
	nameAllowed := g.allow.matchName(host)
	// Every address is checked, not only the first: a client may try the
	// others, and a name with one public and one private address is how a
	// rebinding attack would look.
	for _, a := range addrs {
		switch {
		case g.block.matchAddr(a):
			return nil, &BlockedError{Host: host, Addr: a, Reason: "on the block-list"}
		case nameAllowed, g.allowPrivate, g.allow.matchAddr(a):
		case PrivateAddr(a):
			return nil, &BlockedError{Host: host, Addr: a,
				Reason: "a private, loopback or link-local address (allow it in the configuration to reach it)"}
		}
	}
	return addrs, nil
}

// DialContext is a dial function for http.Transport and proxies: it
// resolves and checks the host, then dials the checked addresses in turn.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	addrs, err := g.Resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var first error
	for _, a := range addrs {
		c, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}
