package config

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"
)

// Network is where the agent's network tools (web_fetch, the browser) may
// connect, and the browser's own settings.
type Network struct {
	// NetAllow lists hosts (matching their subdomains), addresses and
	// networks the tools may reach although they are private.
	NetAllow []string
	// NetBlock lists hosts, addresses and networks the tools never reach.
	NetBlock []string
	// Browser is "off" (no browser tools), "auto" (Chromium if found) or
	// the path of a Chromium binary.
	Browser string
	// BrowserIdle closes a session's browser unused for this long.
	BrowserIdle time.Duration
	// BrowserSandbox keeps Chromium's own sandbox on (it needs user
	// namespaces, or a non-root user with the setuid helper).
	BrowserSandbox bool
	// NetResolver resolves names for the guard; nil is the system's. Not
	// a flag: tests make a name resolve to 127.0.0.1 with it.
	NetResolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
}

// Browser settings.
const (
	BrowserOff  = "off"
	BrowserAuto = "auto"
)

// DefaultBrowserIdle is how long an unused browser stays open.
const DefaultBrowserIdle = 10 * time.Minute

func (n *Network) flags(fs *flag.FlagSet, getenv func(string) string) error {
	n.NetAllow = splitCommas(getenv("CADUCEUS_NET_ALLOW"))
	n.NetBlock = splitCommas(getenv("CADUCEUS_NET_BLOCK"))
	fs.Var(&listFlag{v: &n.NetAllow}, "net-allow", "a host, address or network (CIDR) web_fetch and the browser may reach although it is private; repeat for several (env CADUCEUS_NET_ALLOW, comma-separated)")
	fs.Var(&listFlag{v: &n.NetBlock}, "net-block", "a host, address or network web_fetch and the browser never reach; repeat for several (env CADUCEUS_NET_BLOCK, comma-separated)")
	fs.StringVar(&n.Browser, "browser", envOr(getenv, "CADUCEUS_BROWSER", BrowserOff), "browser tools for the agent: off, auto (Chromium if installed) or the path of a Chromium binary (env CADUCEUS_BROWSER)")
	idle, err := durationEnv(getenv, "CADUCEUS_BROWSER_IDLE", DefaultBrowserIdle)
	if err != nil {
		return err
	}
	fs.DurationVar(&n.BrowserIdle, "browser-idle", idle, "close a session's browser unused this long (env CADUCEUS_BROWSER_IDLE)")
	fs.BoolVar(&n.BrowserSandbox, "browser-sandbox", getenv("CADUCEUS_BROWSER_SANDBOX") == "1", "keep Chromium's sandbox on; needs user namespaces (env CADUCEUS_BROWSER_SANDBOX=1)")
	return nil
}

func (n *Network) check() error {
	switch n.Browser {
	case BrowserOff, BrowserAuto:
	default:
		if fi, err := os.Stat(n.Browser); err != nil || fi.IsDir() {
			return fmt.Errorf("browser %q: not off, auto or a Chromium binary", n.Browser)
		}
	}
	if n.BrowserIdle <= 0 {
		return fmt.Errorf("browser-idle must be positive, not %s", n.BrowserIdle)
	}
	return nil
}

func splitCommas(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
