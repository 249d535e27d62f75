package httpguard

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// DefaultMaxBodyBytes caps request bodies when Config.MaxBodyBytes is zero.
// API requests are small JSON documents; 1 MiB leaves room for long prompts
// while stopping a client from making the server buffer arbitrary input.
const DefaultMaxBodyBytes int64 = 1 << 20

// healthPath stays reachable without a token so that liveness probes and
// service managers need no secret; it reveals nothing but "up".
const healthPath = "/api/health"

// metricsPath is outside /api/ (where scrapers expect it) but is no page:
// it tells how busy the server is and what models it calls, so it needs
// the token like the API.
const metricsPath = "/metrics"

// Config describes the server the Guard protects.
type Config struct {
	// Addr is the listen address as given to net.Listen. Whether it is
	// loopback decides whether a token is mandatory and whether the Host
	// check applies.
	Addr string
	// Token, when set, must accompany every request (except the health
	// probe) as "Authorization: Bearer <token>". Mandatory off loopback.
	Token string
	// MaxBodyBytes caps request bodies; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// AllowedOrigins lists browser origins besides the server's own, such as
	// "http://localhost:5173" for a UI dev server, that may make
	// state-changing requests.
	AllowedOrigins []string
}

// Guard is an immutable request filter built by New; one Guard may wrap any
// number of handlers and serve concurrent requests.
type Guard struct {
	loopback bool
	hasToken bool
	// tokenSum is the SHA-256 of the token: comparing fixed-size digests
	// keeps the comparison constant-time even in the token's length, and the
	// Guard never holds the secret itself.
	tokenSum [sha256.Size]byte
	maxBody  int64
	allowed  map[string]bool
}

// New validates cfg and builds a Guard. It refuses a non-loopback Addr without
// a Token, because such a server would hand agent control to anyone on the
// network.
func New(cfg Config) (*Guard, error) {
	g := &Guard{
		loopback: IsLoopbackAddr(cfg.Addr),
		maxBody:  cfg.MaxBodyBytes,
		allowed:  make(map[string]bool, len(cfg.AllowedOrigins)),
	}
	switch {
	case cfg.Token != "":
		if err := validateToken(cfg.Token); err != nil {
			return nil, err
		}
		g.hasToken = true
		g.tokenSum = sha256.Sum256([]byte(cfg.Token))
	case !g.loopback:
		return nil, fmt.Errorf("httpguard: refusing to listen on %s without a token: "+
			"that address is reachable from other machines, and anyone who can connect "+
			"could drive your agents; set CADUCEUS_TOKEN to a long random secret, "+
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
		// reachable under; the token is what protects it there.
		if g.loopback && !isLoopbackHost(r.Host) {
			WriteError(w, http.StatusForbidden, CodeForbiddenHost,
				"the Host header is not a loopback name; this server only answers to localhost, 127.0.0.1 or [::1] "+
					"(to serve other names, listen on a non-loopback address with CADUCEUS_TOKEN set)", nil)
			return
		}
		if isStateChanging(r.Method) && !g.originAllowed(r) {
			WriteError(w, http.StatusForbidden, CodeForbiddenOrigin,
				"cross-origin state-changing requests are not allowed; add the origin to the allowed origins if it is trusted", nil)
			return
		}
		if g.hasToken && !isHealthCheck(r) && !isStaticPage(r) && !g.authorized(r) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			WriteError(w, http.StatusUnauthorized, CodeUnauthorized,
				"missing or invalid token; send \"Authorization: Bearer <CADUCEUS_TOKEN>\"", nil)
			return
		}
		// Refusing before the handler runs spares it reading a body that
		// would be cut off anyway; MaxBytesReader below covers bodies of
		// unknown length.
		if r.ContentLength > g.maxBody {
			WriteError(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge,
				fmt.Sprintf("request body exceeds the limit of %d bytes", g.maxBody),
				map[string]any{"limit_bytes": g.maxBody})
			return
		}
		r = g.forward(w, r)
		next.ServeHTTP(w, r)
	})
}

// forward returns the request the wrapped handler sees: a copy, so the
// caller's request is left alone, with the body capped and, when a token is
// configured, the credentials removed so no handler or inner logger can echo
// or record them.
func (g *Guard) forward(w http.ResponseWriter, r *http.Request) *http.Request {
	if g.hasToken && carriesCredentials(r) {
		r = r.Clone(r.Context())
		scrubCredentials(r)
	} else {
		r = r.WithContext(r.Context())
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, g.maxBody)
	}
	return r
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

// isStaticPage reports a read of the browser workbench's page or bundle
// (everything outside /api/ but the metrics). They hold no data, and a
// browser must load them before it can ask the person for the token the
// API then requires.
func isStaticPage(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		r.URL != nil && r.URL.Path != "/api" && !strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != metricsPath
}

func isHealthCheck(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		r.URL != nil && r.URL.Path == healthPath
}
