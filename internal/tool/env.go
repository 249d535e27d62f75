package tool

import (
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/secret"
)

// allowedEnv are the variables commands inherit from the runner: what
// programs need to find themselves, their home and their locale, and
// nothing else. Everything else stays out, so that `env` tells the model
// nothing the person did not choose to give it.
var allowedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "TMPDIR",
	"LANG", "LANGUAGE",
	// Where trusted CA certificates are: without them curl, git, pip and
	// node fail TLS on machines behind an intercepting proxy. Paths, not
	// secrets.
	"SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",
}

// proxyEnv are passed only without credentials in them (see proxyAllowed):
// on a machine that reaches the network through a proxy, commands need
// them too.
var proxyEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy"}

// commandEnv builds the environment of commands from the runner's
// environment (environ) and the variables the configuration adds (extra:
// "NAME=value", or "NAME" to pass the runner's own value). The runner's
// variables pass only if allowed (allowedEnv, LC_*, proxies without
// credentials); no variable whose name looks secret passes, even when
// added: Caduceus's token and provider keys never reach a command.
func commandEnv(environ, extra []string) []string {
	own := map[string]string{}
	var order []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, dup := own[k]; !dup {
			order = append(order, k)
		}
		own[k] = v
	}
	out := map[string]string{}
	for _, k := range order {
		v := own[k]
		switch {
		case slices.Contains(allowedEnv, k), strings.HasPrefix(k, "LC_"):
			out[k] = v
		case slices.Contains(proxyEnv, k) && proxyAllowed(v):
			out[k] = v
		}
	}
	for _, e := range extra {
		k, v, set := strings.Cut(e, "=")
		if !set {
			var ok bool
			if v, ok = own[k]; !ok {
				continue
			}
		}
		if k != "" {
			out[k] = v
		}
	}
	env := make([]string, 0, len(out))
	for k, v := range out {
		if secret.LooksSecret(k) {
			continue
		}
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// CommandEnv is the environment of a command a person runs in a session's
// workspace (a terminal): the same variables the agent's commands get
// from environ, so no secret of the server's reaches it either.
func CommandEnv(environ, extra []string) []string { return commandEnv(environ, extra) }

// proxyAllowed reports whether a proxy setting holds no credentials
// (http://user:password@proxy:3128 does).
func proxyAllowed(v string) bool {
	if !strings.Contains(v, "@") {
		return true
	}
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if !strings.Contains(part, "://") {
			part = "http://" + part
		}
		if u, err := url.Parse(part); err != nil || u.User != nil {
			return false
		}
	}
	return true
}

// runnerEnviron is the environment commands' variables come from: the
// configured one, else the process's own.
func (c Config) runnerEnviron() []string {
	if c.Environ != nil {
		return c.Environ
	}
	return os.Environ()
}
