package identity

import (
	"net/http"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Error codes of the middleware.
const (
	CodeUnauthorized     = httpguard.CodeUnauthorized
	CodeCSRFFailed       = "csrf_failed"
	CodeForbidden        = "forbidden"
	CodeStoreUnavailable = "store_unavailable"
)

// Paths open to anybody: the liveness probe, the sign-in endpoints (a
// browser must learn whether and how to sign in) and the static pages.
const (
	healthPath  = "/api/health"
	mePath      = "/api/auth/me"
	loginPath   = "/api/auth/login"
	logoutPath  = "/api/auth/logout"
	metricsPath = "/metrics"
)

// exempt reports a request that needs no principal. Such a request still
// gets its credentials resolved (GET /api/auth/me reports them) but is
// never refused for them.
func exempt(r *http.Request) bool {
	if r.URL == nil {
		return false
	}
	path := r.URL.Path
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return path == healthPath || path == mePath || isStaticPage(r)
	case http.MethodPost:
		return path == loginPath || path == logoutPath
	}
	return false
}

// isStaticPage reports a read of the workbench's page or bundle
// (everything outside /api/ but the metrics): they hold no data, and a
// browser must load them before it can sign in.
func isStaticPage(r *http.Request) bool {
	path := r.URL.Path
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		path != "/api" && !strings.HasPrefix(path, "/api/") && path != metricsPath
}

// isStateChanging treats every method but the safe ones as state-changing,
// as the guard does.
func isStateChanging(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return false
	}
	return true
}

// Wrap returns next behind sign-in: it resolves the request's principal,
// refuses a missing (where required) or wrong credential with 401
// unauthorized and a cookie session's write without the CSRF header with
// 403 csrf_failed, and hands next a copy of the request without
// credentials whose context holds the Result (From). A request already
// resolved by an outer Wrap passes through unchanged.
func (rs *Resolver) Wrap(next http.Handler) http.Handler {
	if next == nil {
		panic("identity: Wrap called with a nil handler")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, done := From(r.Context()); done {
			next.ServeHTTP(w, r)
			return
		}
		if r.URL != nil && isStaticPage(r) {
			// Pages need nobody: their credentials are not even looked
			// up (no store reads per asset), only removed.
			r = r.Clone(WithResult(r.Context(), Result{Outcome: Missing}))
			scrub(r)
			next.ServeHTTP(w, r)
			return
		}
		tok, tokPresent := presentedToken(r)
		cookie := sessionCookie(r)
		if r.Method == http.MethodPost && r.URL != nil && r.URL.Path == loginPath {
			// Signing in makes a new session: whatever the browser still
			// holds is neither checked nor needed.
			tok, tokPresent, cookie = "", false, ""
		}
		res, err := rs.resolve(r.Context(), tok, tokPresent, cookie)
		if err != nil {
			if r.Context().Err() != nil {
				return
			}
			rs.log.Warn("sign-in check failed", "method", r.Method, "path", r.URL.Path, "err", err)
			if store.Transient(err) {
				w.Header().Set("Retry-After", "2")
				httpguard.WriteError(w, http.StatusServiceUnavailable, CodeStoreUnavailable,
					"the server's database is busy or unreachable right now; try again shortly", nil)
				return
			}
			httpguard.WriteError(w, http.StatusInternalServerError, "internal_error", "internal error; see the server log", nil)
			return
		}
		if !exempt(r) {
			switch res.Outcome {
			case Missing:
				w.Header().Set("WWW-Authenticate", "Bearer")
				httpguard.WriteError(w, http.StatusUnauthorized, CodeUnauthorized,
					"sign in, or send \"Authorization: Bearer <token>\" (CADUCEUS_TOKEN or a personal API token)", nil)
				return
			case Bad:
				if !tokPresent {
					ClearCookie(w, r)
				}
				w.Header().Set("WWW-Authenticate", "Bearer")
				httpguard.WriteError(w, http.StatusUnauthorized, CodeUnauthorized,
					"the token or sign-in session is not valid (unknown, revoked or expired, or its account is disabled); sign in again", nil)
				return
			}
		}
		if res.Outcome == Resolved && res.Principal.Kind == KindUser && isStateChanging(r.Method) &&
			!csrfMatches(r.Header.Get(CSRFHeader), hashHex(res.Principal.csrf)) {
			httpguard.WriteError(w, http.StatusForbidden, CodeCSRFFailed,
				"this request is signed in with a browser session and needs the header "+CSRFHeader+
					" (its value is the csrf_token of POST /api/auth/login or GET /api/auth/me)", nil)
			return
		}
		if carriesCredentials(r) {
			r = r.Clone(WithResult(r.Context(), res))
			scrub(r)
		} else {
			r = r.WithContext(WithResult(r.Context(), res))
		}
		next.ServeHTTP(w, r)
	})
}

// Require refuses a request whose principal may not do a (403 forbidden);
// for handlers outside the API's route table, such as /metrics.
func Require(a auth.Action, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := From(r.Context())
		if !ok || res.Outcome != Resolved || !res.Principal.May(a) {
			httpguard.WriteError(w, http.StatusForbidden, CodeForbidden, "your role may not see this", nil)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// SetCookie sends a new session's cookie: HttpOnly (no script reads it),
// SameSite=Strict (no other site's page sends it), Secure when the
// request came over TLS or secure is set (--secure-cookies, for a server
// behind a TLS-terminating proxy). The browser keeps it for the longest
// lifetime a session can have; the server enforces the idle expiry.
func SetCookie(w http.ResponseWriter, r *http.Request, s NewSession, secure bool) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.Cookie, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: secure || r.TLS != nil, MaxAge: int(MaxLifetime / time.Second)})
}

// ClearCookie tells the browser to drop the session cookie.
func ClearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: -1})
}
