package httpguard

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// originAllowed decides whether a state-changing request may come from where
// the browser says it comes from. Requests without browser provenance
// headers are not from a browser page and cannot be forged cross-site.
func (g *Guard) originAllowed(r *http.Request) bool {
	origins := r.Header.Values("Origin")
	if len(origins) == 0 {
		// Browsers omit Origin in a few corners (older versions, some
		// redirects) but still label the fetch as cross-site.
		return !strings.EqualFold(strings.TrimSpace(r.Header.Get("Sec-Fetch-Site")), "cross-site")
	}
	// A browser sends exactly one Origin; anything else is not worth
	// interpreting generously.
	if len(origins) > 1 {
		return false
	}
	u, err := parseOrigin(origins[0])
	if err != nil {
		return false
	}
	if sameOrigin(u, r.Host) {
		return true
	}
	return g.allowed[formatOrigin(u)]
}

// sameOrigin compares the origin's host:port with the Host the request was
// sent to, filling in the scheme's default port on both sides because
// browsers omit it in both headers.
func sameOrigin(u *url.URL, host string) bool {
	def := defaultPort(u.Scheme)
	if def == "" || host == "" {
		return false
	}
	h, p := splitHostPort(host)
	if p == "" {
		p = def
	}
	op := u.Port()
	if op == "" {
		op = def
	}
	return strings.EqualFold(u.Hostname(), h) && op == p
}

// canonicalOrigin validates a configured origin and returns the form
// incoming origins are compared in.
func canonicalOrigin(s string) (string, error) {
	if strings.TrimSpace(s) == "*" {
		return "", errors.New("wildcards are not supported; list each trusted origin")
	}
	u, err := parseOrigin(strings.TrimSuffix(strings.TrimSpace(s), "/"))
	if err != nil {
		return "", err
	}
	return formatOrigin(u), nil
}

// parseOrigin accepts the serialisation browsers send: scheme://host[:port]
// and nothing more. "null" (sandboxed frames, file: pages) fails here and is
// therefore never same-origin.
func parseOrigin(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.New("not a valid origin")
	}
	if u.Scheme == "" || u.Host == "" || u.Opaque != "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, errors.New("an origin is scheme://host[:port] with no path, query or credentials")
	}
	return u, nil
}

// formatOrigin lower-cases the host and drops a default port so that
// "HTTP://LocalHost:80" and "http://localhost" compare equal.
func formatOrigin(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == defaultPort(u.Scheme) {
		port = ""
	}
	switch {
	case port != "":
		host = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"):
		host = "[" + host + "]"
	}
	return u.Scheme + "://" + host
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// Origins returns the configured origins besides the server's own, in
// their canonical form (scheme://host[:port]): where a WebSocket, which
// the Guard does not see upgraded, may come from too.
func (g *Guard) Origins() []string {
	out := make([]string, 0, len(g.allowed))
	for o := range g.allowed {
		out = append(out, o)
	}
	slices.Sort(out)
	return out
}
