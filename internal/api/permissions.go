package api

import (
	"fmt"
	"net/http"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/identity"
)

// perm is what a route needs of the principal.
type perm string

// Permissions of routes.
const (
	permPublic perm = "public" // nobody needs to be signed in
	permRead   perm = "read"   // every GET and event stream
	// permOwn: a person's own credentials (their tokens, their password).
	// Any role may manage its own, but a read-scoped token may not: it
	// was handed out to read, and minting or revoking tokens is a write.
	permOwn     perm = "own"
	permOperate perm = "operate" // start, steer, cancel, approve, rules
	permAdmin   perm = "admin"   // accounts, other people's tokens
)

// permAction is the auth action whose level a permission needs.
func permAction(p perm) auth.Action {
	switch p {
	case permRead, permPublic, permOwn:
		return auth.ActRead
	case permOperate:
		return auth.ActStart
	}
	return auth.ActUsers
}

// routePerms is what each route needs: the one table of who may do what.
// A route of the mux missing here is refused to everyone (and fails
// TestEveryRouteHasAPermission).
var routePerms = map[string]perm{
	"GET /api/health":         permPublic,
	"GET /api/auth/me":        permPublic,
	"POST /api/auth/login":    permPublic,
	"POST /api/auth/logout":   permPublic,
	"POST /api/auth/password": permOwn, // a signed-in person, whatever the role

	// Tokens: everyone manages their own (the scope is capped by the
	// role); listing everyone's (?all=1) and revoking another's is
	// checked in the handlers as admin.
	"GET /api/tokens":         permRead,
	"POST /api/tokens":        permOwn,
	"DELETE /api/tokens/{id}": permOwn,
	"GET /api/users":          permAdmin,
	"POST /api/users":         permAdmin,
	"PATCH /api/users/{id}":   permAdmin,

	"GET /api/meta":     permRead,
	"GET /api/models":   permRead,
	"GET /api/commands": permRead,
	"GET /api/events":   permRead,

	// Search (issue 15).
	"GET /api/search": permRead,

	"GET /api/sessions":                permRead,
	"POST /api/sessions":               permOperate,
	"GET /api/sessions/{id}":           permRead,
	"PATCH /api/sessions/{id}":         permOperate,
	"DELETE /api/sessions/{id}":        permOperate,
	"GET /api/sessions/{id}/messages":  permRead,
	"POST /api/sessions/{id}/messages": permOperate,
	"GET /api/sessions/{id}/runs":      permRead,
	"POST /api/sessions/{id}/compact":  permOperate,
	// Issue 15, branch + export/import.
	"POST /api/sessions/{id}/branch":  permOperate,
	"GET /api/sessions/{id}/export":   permRead,
	"POST /api/sessions/import":       permOperate,
	"GET /api/sessions/{id}/events":   permRead,
	"GET /api/runs/{id}":              permRead,
	"POST /api/runs/{id}/cancel":      permOperate,
	"POST /api/runs/{id}/resume":      permOperate,
	"GET /api/runs/{id}/events":       permRead,
	"GET /api/requests":               permRead,
	"GET /api/requests/{id}":          permRead,
	"POST /api/requests/{id}/respond": permOperate,
	"GET /api/rules":                  permRead,
	"POST /api/rules":                 permOperate,
	"DELETE /api/rules/{id}":          permOperate,

	// Versions of a conversation.
	"POST /api/runs/{id}/retry":        permOperate,
	"POST /api/runs/{id}/continue":     permOperate,
	"POST /api/sessions/{id}/edit":     permOperate,
	"POST /api/sessions/{id}/undo":     permOperate,
	"POST /api/sessions/{id}/versions": permOperate,

	// Git panel: reads read, anything that changes the work tree,
	// index or history operates.
	"GET /api/sessions/{id}/git/status":   permRead,
	"GET /api/sessions/{id}/git/diff":     permRead,
	"GET /api/sessions/{id}/git/log":      permRead,
	"GET /api/sessions/{id}/git/branches": permRead,
	"POST /api/sessions/{id}/git/stage":   permOperate,
	"POST /api/sessions/{id}/git/unstage": permOperate,
	"POST /api/sessions/{id}/git/commit":  permOperate,
	"POST /api/sessions/{id}/git/switch":  permOperate,

	// Attachments: uploading writes into the workspace.
	"POST /api/sessions/{id}/uploads":       permOperate,
	"GET /api/sessions/{id}/uploads/{name}": permRead,

	// Files
	"GET /api/sessions/{id}/files":         permRead,
	"GET /api/sessions/{id}/files/content": permRead,
	"PUT /api/sessions/{id}/files/content": permOperate,
	"GET /api/sessions/{id}/files/search":  permRead,
	"GET /api/sessions/{id}/files/resolve": permRead,

	// Terminal: a shell runs anything, so operate (a read-scoped token
	// and a viewer are refused).
	"GET /api/sessions/{id}/terminal": permOperate,

	// Changes and rollback (checkpoints).
	"GET /api/sessions/{id}/checkpoints": permRead,
	"GET /api/sessions/{id}/changes":     permRead,
	"GET /api/checkpoints/{id}/diff":     permRead,
	"POST /api/checkpoints/{id}/restore": permOperate,
	"GET /api/runs/{id}/changes":         permRead,
	"POST /api/runs/{id}/revert":         permOperate,

	// Goals.
	"GET /api/sessions/{id}/goal":    permRead,
	"PUT /api/sessions/{id}/goal":    permOperate,
	"DELETE /api/sessions/{id}/goal": permOperate,

	// Organising sessions: projects.
	"GET /api/projects":         permRead,
	"POST /api/projects":        permOperate,
	"GET /api/projects/{id}":    permRead,
	"PATCH /api/projects/{id}":  permOperate,
	"DELETE /api/projects/{id}": permOperate,

	// Profiles (h16-profiles): they configure the server's agents, so
	// changing them is an admin's; a session or project picks one with
	// its own PATCH.
	"GET /api/profiles":                 permRead,
	"POST /api/profiles":                permAdmin,
	"GET /api/profiles/{id}":            permRead,
	"PATCH /api/profiles/{id}":          permAdmin,
	"DELETE /api/profiles/{id}":         permAdmin,
	"POST /api/profiles/{id}/duplicate": permAdmin,
	// Memory (h16-memory): a person curates what their agent remembers,
	// as the agent itself does while it works for them; it configures
	// nothing of the server.
	"GET /api/profiles/{id}/memory":            permRead,
	"POST /api/profiles/{id}/memory":           permOperate,
	"GET /api/profiles/{id}/memory/prompt":     permRead,
	"PATCH /api/profiles/{id}/memory/{entry}":  permOperate,
	"DELETE /api/profiles/{id}/memory/{entry}": permOperate,
	"GET /api/tools":                           permRead,
	// The operator's console: processes, logs, a run's raw journal
	// (h16-ops). The server's log is the server's, not a session's.
	"GET /api/processes":            permRead,
	"GET /api/processes/{id}/log":   permRead,
	"POST /api/processes/{id}/kill": permOperate,
	"GET /api/logs":                 permAdmin,
	"GET /api/runs/{id}/journal":    permRead,
	// Usage and cost (issue 16, h16-usage).
	"GET /api/usage": permRead,
	// Providers and settings (issue 16, h16-providers): reading is
	// reading; changing the server's configuration is admin's, and so is
	// "test", which makes the server call out with a stored key.
	"GET /api/providers":            permRead,
	"POST /api/providers":           permAdmin,
	"GET /api/providers/{id}":       permRead,
	"PATCH /api/providers/{id}":     permAdmin,
	"DELETE /api/providers/{id}":    permAdmin,
	"POST /api/providers/{id}/test": permAdmin,
	"GET /api/settings":             permRead,
	"PATCH /api/settings":           permAdmin,
	// Web search (issue 18, h18-web): like providers, and "test" calls
	// out with the stored key.
	"GET /api/settings/web-search":       permRead,
	"PUT /api/settings/web-search":       permAdmin,
	"DELETE /api/settings/web-search":    permAdmin,
	"POST /api/settings/web-search/test": permAdmin,
	// Skills (h16-skills): a skill is instructions the agent follows, so
	// changing skills, or which ones a profile enables, is an admin's.
	"GET /api/skills":               permRead,
	"POST /api/skills":              permAdmin,
	"POST /api/skills/install":      permAdmin,
	"GET /api/skills/{name}":        permRead,
	"PUT /api/skills/{name}":        permAdmin,
	"DELETE /api/skills/{name}":     permAdmin,
	"GET /api/profiles/{id}/skills": permRead,
	"PUT /api/profiles/{id}/skills": permAdmin,
	// The approval-policy page (h16-policy): reading it is everyone's;
	// rules are above, profiles' modes with profiles.
	"GET /api/approvals/mode":      permRead,
	"GET /api/approvals/decisions": permRead,
	// Budgets, pause and health (h16-budgets). Pausing a run is operating
	// it; limits of sessions, profiles and the server's day configure the
	// server.
	"POST /api/runs/{id}/pause": permOperate,
	"GET /api/budgets":          permRead,
	"PUT /api/budgets":          permAdmin,
	// Webhooks and triggers (h17-hooks). A trigger is public: its caller
	// is another system, and nothing starts without a valid signature.
	// Changing webhooks and triggers is configuring the server: admin;
	// reading triggers and deliveries is everyone's (no secret shows), but
	// a webhook's URL can hold a token (Slack's do): admin.
	"POST /hooks/{id}":                  permPublic,
	"GET /api/webhooks":                 permAdmin,
	"POST /api/webhooks":                permAdmin,
	"GET /api/webhooks/{id}":            permAdmin,
	"PATCH /api/webhooks/{id}":          permAdmin,
	"DELETE /api/webhooks/{id}":         permAdmin,
	"POST /api/webhooks/{id}/test":      permAdmin,
	"GET /api/webhooks/{id}/deliveries": permRead,
	"POST /api/webhooks/run-key":        permAdmin,
	// MCP servers (h18-mcpwire) run commands on this machine: configuring
	// them is admin; seeing them (state, tools) is reading.
	"GET /api/mcp/servers":               permRead,
	"POST /api/mcp/servers":              permAdmin,
	"GET /api/mcp/servers/{id}":          permRead,
	"PATCH /api/mcp/servers/{id}":        permAdmin,
	"DELETE /api/mcp/servers/{id}":       permAdmin,
	"POST /api/mcp/servers/{id}/restart": permAdmin,
	"GET /api/triggers":                  permRead,
	"POST /api/triggers":                 permAdmin,
	"GET /api/triggers/{id}":             permRead,
	"PATCH /api/triggers/{id}":           permAdmin,
	"DELETE /api/triggers/{id}":          permAdmin,
	// Scheduled jobs (h17-jobs): a job starts runs unattended with a
	// profile, so defining one configures the server; firing, pausing and
	// resuming one is operating it.
	"GET /api/jobs":              permRead,
	"POST /api/jobs":             permAdmin,
	"GET /api/jobs/{id}":         permRead,
	"PATCH /api/jobs/{id}":       permAdmin,
	"DELETE /api/jobs/{id}":      permAdmin,
	"POST /api/jobs/{id}/run":    permOperate,
	"POST /api/jobs/{id}/pause":  permOperate,
	"POST /api/jobs/{id}/resume": permOperate,
	"GET /api/jobs/{id}/runs":    permRead,
	"GET /api/schedules/preview": permRead,
}

// permitted checks the request's principal against the route's entry and
// answers the refusal itself: 403 forbidden with what the route needs
// and the principal's effective role.
func (a *API) permitted(w http.ResponseWriter, r *http.Request, pattern string) bool {
	need, ok := routePerms[pattern]
	if !ok {
		a.log.Error("route without a permission entry: refused", "pattern", pattern)
		writeError(w, http.StatusForbidden, CodeForbidden, "this route has no permission entry; nobody may use it", nil)
		return false
	}
	if need == permPublic {
		return true
	}
	p, ok := principal(r)
	if !ok {
		// identity.Wrap refuses these before; an exempt path reaching a
		// non-public route would be a bug, so refuse rather than serve.
		writeError(w, http.StatusUnauthorized, identity.CodeUnauthorized, "sign in first", nil)
		return false
	}
	if need == permOwn && p.Kind == identity.KindToken && p.Scope == auth.ScopeRead {
		writeError(w, http.StatusForbidden, CodeForbidden, "a read-scoped token can only read; manage tokens and passwords signed in or with an operate token",
			map[string]any{"need": "operate", "scope": string(p.Scope)})
		return false
	}
	if p.May(permAction(need)) {
		return true
	}
	role := p.EffectiveRole()
	writeError(w, http.StatusForbidden, CodeForbidden, forbiddenMessage(role, need),
		map[string]any{"need": string(need), "role": string(role)})
	return false
}

func forbiddenMessage(role auth.Role, need perm) string {
	switch {
	case need == permOperate:
		return fmt.Sprintf("your role (%s) may only read; starting, steering and approving need operator", role)
	case need == permAdmin:
		return fmt.Sprintf("your role (%s) may not manage accounts or other people's tokens; that needs admin", role)
	}
	return fmt.Sprintf("your role (%s) may not do this; it needs %s", role, need)
}
