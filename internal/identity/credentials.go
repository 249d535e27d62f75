package identity

import (
	"net/http"
	"net/url"
	"strings"
)

// CookieName is the sign-in session cookie.
const CookieName = "caduceus_session"

// CSRFHeader carries a cookie session's CSRF token on writes.
const CSRFHeader = "X-CSRF-Token"

// queryTokenParam carries a token for EventSource, which cannot set
// request headers.
const queryTokenParam = "access_token"

// presentedToken returns the bearer header's token, or the query
// parameter's on a GET of an event-stream route that asks for an event
// stream only: anywhere else a token in the URL would be an avoidable
// leak into history, proxies and logs. The route decides, not the Accept
// header, which any client can set on a JSON route. present is true when
// an Authorization header was sent at all, so that a malformed one is a
// wrong credential rather than none.
func presentedToken(r *http.Request) (tok string, present bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		tok, _ := bearerToken(h)
		return tok, true
	}
	if r.Method != http.MethodGet || r.URL == nil || !isEventStreamPath(r.URL.Path) || !acceptsEventStream(r.Header) {
		return "", false
	}
	tok = r.URL.Query().Get(queryTokenParam)
	return tok, tok != ""
}

// bearerToken extracts the credentials of an "Authorization: Bearer x"
// header; the scheme name is case-insensitive (RFC 9110 §11.1).
func bearerToken(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// isEventStreamPath reports whether path is one of the event-stream
// routes: /api/events, /api/sessions/{id}/events, /api/runs/{id}/events.
// It matches the path exactly, segment by segment, so a JSON route cannot
// pass for one with a suffix, a prefix, dot segments or extra slashes.
func isEventStreamPath(path string) bool {
	if path == "/api/events" {
		return true
	}
	parts := strings.Split(path, "/")
	if len(parts) != 5 || parts[0] != "" || parts[1] != "api" || parts[4] != "events" {
		return false
	}
	if parts[2] != "sessions" && parts[2] != "runs" {
		return false
	}
	idPart := parts[3]
	return idPart != "" && idPart != "." && idPart != ".."
}

func acceptsEventStream(h http.Header) bool {
	for _, v := range h.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			mediaType, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mediaType), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

// sessionCookie returns the sign-in cookie's value, "" when absent.
func sessionCookie(r *http.Request) string {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return ""
	}
	return c.Value
}

func carriesCredentials(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" || r.Header.Get(CSRFHeader) != "" || r.Header.Get("Cookie") != "" {
		return true
	}
	// Any query may spell access_token in some escaped form; checking the
	// raw text for it would miss spellings that url.Query still decodes.
	return r.URL != nil && r.URL.RawQuery != ""
}

// scrub removes every credential from a request Wrap owns: the
// Authorization header, the access_token query parameter, the session
// cookie and the CSRF header. The query is edited pair by pair rather than
// re-encoded so that the handler sees every other parameter exactly as
// sent; other cookies are kept.
func scrub(r *http.Request) {
	r.Header.Del("Authorization")
	r.Header.Del(CSRFHeader)
	if r.Header.Get("Cookie") != "" {
		var kept []string
		for _, c := range r.Cookies() {
			if c.Name != CookieName {
				kept = append(kept, c.Name+"="+c.Value)
			}
		}
		r.Header.Del("Cookie")
		if len(kept) > 0 {
			r.Header.Set("Cookie", strings.Join(kept, "; "))
		}
	}
	if r.URL == nil || r.URL.RawQuery == "" {
		return
	}
	pairs := strings.Split(r.URL.RawQuery, "&")
	kept := pairs[:0]
	for _, pair := range pairs {
		key, _, _ := strings.Cut(pair, "=")
		// Match the key as url.Query decodes it, so an escaped spelling
		// such as access%5Ftoken cannot authenticate yet survive.
		if k, err := url.QueryUnescape(key); err == nil && k == queryTokenParam {
			continue
		}
		kept = append(kept, pair)
	}
	r.URL.RawQuery = strings.Join(kept, "&")
	r.RequestURI = r.URL.RequestURI()
}
