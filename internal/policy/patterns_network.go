package policy

import (
	"net/url"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/netguard"
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
// link-local address, or a name reserved for such places, from its text
// (netguard resolves names where the call is made).
func privateHost(host string) bool { return netguard.PrivateName(host) }
