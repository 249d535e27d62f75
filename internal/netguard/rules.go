package netguard

import (
	"fmt"
	"net/netip"
	"strings"
)

// rules is a parsed allow- or block-list.
type rules struct {
	names []string // lower case, no trailing dot; each matches its subdomains too
	nets  []netip.Prefix
}

func parseRules(entries []string) (rules, error) {
	var r rules
	for _, e := range entries {
		s := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(e)), ".")
		s = strings.TrimPrefix(s, "*.")
		switch {
		case s == "":
			continue
		case strings.Contains(s, "/"):
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return rules{}, fmt.Errorf("%q is not a network: %w", e, err)
			}
			r.nets = append(r.nets, p.Masked())
		default:
			if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
				r.nets = append(r.nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
				continue
			}
			if strings.ContainsAny(s, " :/?#@[]") {
				return rules{}, fmt.Errorf("%q is not a host name, an address or a network", e)
			}
			r.names = append(r.names, s)
		}
	}
	return r, nil
}

func (r rules) matchName(host string) bool {
	for _, n := range r.names {
		if host == n || strings.HasSuffix(host, "."+n) {
			return true
		}
	}
	return false
}

func (r rules) matchAddr(a netip.Addr) bool {
	for _, p := range r.nets {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
