package httpguard

import (
	"errors"
	"fmt"
	"net/http"
)

// DefaultMaxBodyBytes caps request bodies when Config.MaxBodyBytes is zero.
// API requests are small JSON documents; 1 MiB leaves room for long prompts
// while stopping a client from making the server buffer arbitrary input.
const DefaultMaxBodyBytes int64 = 1 << 20

// Config describes the server the Guard protects.
type Config struct {
	// Addr is the listen address as given to net.Listen. Whether it is
	// loopback decides whether a way to sign in is mandatory and whether
	// the Host check applies.
	Addr string
	// Token is CADUCEUS_TOKEN ("" when unset). The guard only checks that
	// it can travel in a header and counts it as a way to sign in; the
	// identity package checks requests for it.
	Token string
	// Accounts tells whether an enabled account exists: another way to
	// sign in, so a non-loopback server may start without a token.
	Accounts bool
	// MaxBodyBytes caps request bodies; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyLimit gives the few requests that carry files (uploads) a cap
	// of their own: it returns the cap for r, or 0 for MaxBodyBytes. Only
	// the requests it names get more; nil names none.
	BodyLimit func(r *http.Request) int64
	// AllowedOrigins lists browser origins besides the server's own, such as
	// "http://localhost:5173" for a UI dev server, that may make
	// state-changing requests.
	AllowedOrigins []string
}

// Guard is an immutable request filter built by New; one Guard may wrap any
// number of handlers and serve concurrent requests.
type Guard struct {
	loopback  bool
	maxBody   int64
	bodyLimit func(r *http.Request) int64
	allowed   map[string]bool
}

// New validates cfg and builds a Guard. It refuses a non-loopback Addr
// with no way to sign in (no Token and no enabled account), because such a
// server would hand agent control to anyone on the network.
func New(cfg Config) (*Guard, error) {
	g := &Guard{
		loopback:  IsLoopbackAddr(cfg.Addr),
		maxBody:   cfg.MaxBodyBytes,
		bodyLimit: cfg.BodyLimit,
		allowed:   make(map[string]bool, len(cfg.AllowedOrigins)),
	}
	switch {
	case cfg.Token != "":
		if err := validateToken(cfg.Token); err != nil {
			return nil, err
		}
	case !g.loopback && !cfg.Accounts:
		return nil, fmt.Errorf("httpguard: refusing to listen on %s with no way to sign in: "+
			"that address is reachable from other machines, and anyone who can connect "+
			"could drive your agents; create an admin account with "+
			"`caduceus user add NAME --role admin`, or set CADUCEUS_TOKEN to a long random secret, "+
			"or listen on 127.0.0.1", describeAddr(cfg.Addr))
	}
	switch {
	case g.maxBody == 0:
		g.maxBody = DefaultMaxBodyBytes
	case g.maxBody < 0:
		return nil, fmt.Errorf("httpguard: MaxBodyBytes must not be negative (got %d); use 0 for the default of %d", g.maxBody, DefaultMaxBodyBytes)
	}
	for _, o := range cfg.AllowedOrigins {
		c, err := canonicalOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("httpguard: allowed origin %q: %w", o, err)
		}
		g.allowed[c] = true
	}
	return g, nil
}

// validateToken rejects tokens that cannot travel intact in an Authorization
// header: header parsing trims and splits on whitespace, so such a token
// would never match and the server would be locked. The token itself is
// never part of the message.
func validateToken(tok string) error {
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c <= ' ' || c > '~' {
			return errors.New("httpguard: CADUCEUS_TOKEN must consist of printable ASCII characters without spaces")
		}
	}
	return nil
}

func describeAddr(addr string) string {
	if addr == "" {
		return `"" (all interfaces)`
	}
	return fmt.Sprintf("%q", addr)
}

// Wrap returns next behind the guard. Checks run cheapest-and-most-general
// first, so a rebinding page learns nothing about origins or tokens.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	if next == nil {
		panic("httpguard: Wrap called with a nil handler")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Before any check, so that error responses carry them too.
		setSecurityHeaders(w.Header())

		// Off loopback the Host may legitimately be any name the machine is
		// reachable under; sign-in is what protects it there.
		if g.loopback && !isLoopbackHost(r.Host) {
			WriteError(w, http.StatusForbidden, CodeForbiddenHost,
				"the Host header is not a loopback name; this server only answers to localhost, 127.0.0.1 or [::1] "+
					"(to serve other names, listen on a non-loopback address with accounts or CADUCEUS_TOKEN)", nil)
			return
		}
		if isStateChanging(r.Method) && !g.originAllowed(r) {
			WriteError(w, http.StatusForbidden, CodeForbiddenOrigin,
				"cross-origin state-changing requests are not allowed; add the origin to the allowed origins if it is trusted", nil)
			return
		}
		// Refusing before the handler runs spares it reading a body that
		// would be cut off anyway; MaxBytesReader below covers bodies of
		// unknown length.
		limit := g.limitFor(r)
		if r.ContentLength > limit {
			WriteError(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge,
				fmt.Sprintf("request body exceeds the limit of %d bytes", limit),
				map[string]any{"limit_bytes": limit})
			return
		}
		r = g.forward(w, r, limit)
		next.ServeHTTP(w, r)
	})
}

// forward returns the request the wrapped handler sees: a copy, so the
// caller's request is left alone, with the body capped. Credentials are
// the identity package's, which resolves and removes them.
func (g *Guard) forward(w http.ResponseWriter, r *http.Request, limit int64) *http.Request {
	r = r.WithContext(r.Context())
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, limit)
	}
	return r
}

// limitFor is the body cap of r: BodyLimit's when it names r, else
// MaxBodyBytes.
func (g *Guard) limitFor(r *http.Request) int64 {
	if g.bodyLimit != nil {
		if n := g.bodyLimit(r); n > 0 {
			return n
		}
	}
	return g.maxBody
}

func setSecurityHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	// Referer would otherwise leak an SSE URL carrying access_token.
	h.Set("Referrer-Policy", "no-referrer")
	// Framing would let another page clickjack the UI's buttons.
	h.Set("X-Frame-Options", "DENY")
}

// isStateChanging treats every method but the safe ones as state-changing,
// so an unusual method (or a lower-case "post" a lenient handler accepts)
// cannot slip past the origin check.
func isStateChanging(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return false
	}
	return true
}
