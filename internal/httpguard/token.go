package httpguard

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
)

// queryTokenParam carries the token for EventSource, which cannot set
// request headers.
const queryTokenParam = "access_token"

// authorized accepts the bearer header, or the query parameter on a GET
// of an event-stream route that asks for an event stream only: anywhere
// else a token in the URL would be an avoidable leak into history, proxies
// and logs. The route decides, not the Accept header, which any client can
// set on a JSON route.
func (g *Guard) authorized(r *http.Request) bool {
	if tok, ok := bearerToken(r.Header.Get("Authorization")); ok && g.tokenMatches(tok) {
		return true
	}
	if r.Method != http.MethodGet || r.URL == nil || !isEventStreamPath(r.URL.Path) || !acceptsEventStream(r.Header) {
		return false
	}
	tok := r.URL.Query().Get(queryTokenParam)
	return tok != "" && g.tokenMatches(tok)
}

func (g *Guard) tokenMatches(tok string) bool {
	sum := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(sum[:], g.tokenSum[:]) == 1
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

func carriesCredentials(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	// Any query may spell access_token in some escaped form; checking the
	// raw text for it would miss spellings that url.Query still decodes.
	return r.URL != nil && r.URL.RawQuery != ""
}

// scrubCredentials removes the token from a request the guard owns. The
// query is edited pair by pair rather than re-encoded so that the handler
// sees every other parameter exactly as sent.
func scrubCredentials(r *http.Request) {
	r.Header.Del("Authorization")
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
