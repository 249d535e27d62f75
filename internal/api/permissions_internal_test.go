package api

import (
	"net/http"
	"strings"
	"testing"
)

// TestEveryRouteHasAPermission walks every route the mux registers: a
// route added without an entry in routePerms fails here (and is refused
// to everyone at run time); an entry without a route is stale.
func TestEveryRouteHasAPermission(t *testing.T) {
	a := &API{}
	seen := map[string]bool{}
	for _, rt := range a.routes() {
		seen[rt.pattern] = true
		need, ok := routePerms[rt.pattern]
		if !ok {
			t.Errorf("route %q has no entry in routePerms", rt.pattern)
			continue
		}
		method, _, _ := strings.Cut(rt.pattern, " ")
		// Reads need read, except the account list (admin), the
		// terminal (a GET upgraded to a WebSocket that runs a shell) and
		// the server's log (admin; h16-ops) and the webhooks, whose URLs
		// can hold a token (a Slack incoming webhook's does; h17-hooks).
		if method == http.MethodGet && need != permRead && need != permPublic && rt.pattern != "GET /api/users" &&
			rt.pattern != "GET /api/sessions/{id}/terminal" && rt.pattern != "GET /api/logs" &&
			rt.pattern != "GET /api/webhooks" && rt.pattern != "GET /api/webhooks/{id}" {
			t.Errorf("GET route %q needs %s; reads need read", rt.pattern, need)
		}
		// Besides signing in, an inbound trigger is public: its caller is
		// another system, and its signature is checked (h17-hooks).
		if method != http.MethodGet && need == permPublic && !strings.HasPrefix(rt.pattern, "POST /api/auth/") &&
			rt.pattern != "POST /hooks/{id}" {
			t.Errorf("state-changing route %q is public", rt.pattern)
		}
	}
	for p := range routePerms {
		if !seen[p] {
			t.Errorf("routePerms has %q, which is no route", p)
		}
	}
}
