// Package identity answers "who is asking" for every HTTP request: the
// server token (CADUCEUS_TOKEN), a personal API token, a browser's sign-in
// session cookie, or nobody. Resolver.Wrap resolves the principal once per
// request, refuses a wrong credential or a missing one where sign-in is
// required (401), checks the CSRF header of cookie-authenticated writes,
// and strips every credential from the request before handlers and
// loggers see it. What a principal may do per route is the API's table;
// this package only says who it is and what its role and scope permit.
package identity

import (
	"context"
	"log/slog"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// Kind is how a principal proved who it is.
type Kind string

// Kinds of principal.
const (
	KindUser        Kind = "user"         // a person signed in with a session cookie
	KindToken       Kind = "token"        // a person's API token
	KindServerToken Kind = "server_token" // CADUCEUS_TOKEN
	KindLocal       Kind = "local"        // nobody, on an open loopback server
)

// Principal is who a request acts for.
type Principal struct {
	Kind   Kind
	UserID string // KindUser and KindToken
	Name   string
	Role   auth.Role
	// Scope caps Role for KindToken; empty otherwise.
	Scope   auth.Scope
	TokenID string // KindToken
	// SessionID is the stored id (the cookie's hash) of a KindUser
	// principal's sign-in session.
	SessionID string
	// csrf is the session's CSRF token, kept in memory for GET
	// /api/auth/me and the CSRF check; never logged (see LogValue).
	csrf string
}

// serverPrincipal and localPrincipal have the admin role, as the server
// token and an open loopback server always had.
var (
	serverPrincipal = Principal{Kind: KindServerToken, Name: "server token", Role: auth.RoleAdmin}
	localPrincipal  = Principal{Kind: KindLocal, Name: "local", Role: auth.RoleAdmin}
)

// May reports whether the principal may do a: a token both by its user's
// role and its scope.
func (p Principal) May(a auth.Action) bool {
	if p.Kind == KindToken {
		return auth.Allowed(p.Role, p.Scope, a)
	}
	return p.Role.May(a)
}

// EffectiveRole is the role the principal acts with: a token's scope
// lowers its user's role (an operator's admin-scoped token is an operator).
func (p Principal) EffectiveRole() auth.Role {
	switch {
	case p.May(auth.ActUsers):
		return auth.RoleAdmin
	case p.May(auth.ActStart):
		return auth.RoleOperator
	case p.May(auth.ActRead):
		return auth.RoleViewer
	}
	return ""
}

// IsPerson reports whether the principal is a person's account (signed
// in, or by one of their tokens).
func (p Principal) IsPerson() bool { return p.UserID != "" }

// CSRFToken is the CSRF token of a cookie session ("" for any other
// principal).
func (p Principal) CSRFToken() string { return p.csrf }

// LogValue keeps the CSRF token and session id out of logs.
func (p Principal) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kind", string(p.Kind)), slog.String("name", p.Name),
		slog.String("user_id", p.UserID), slog.String("token_id", p.TokenID))
}

// Actor returns who the principal is as events record it ("by"): never a
// secret, hash or token prefix.
func (p Principal) Actor() *event.Actor {
	return &event.Actor{Kind: string(p.Kind), Name: p.Name, UserID: p.UserID, TokenID: p.TokenID}
}

// Outcome is how a request's credentials resolved.
type Outcome int

// Outcomes.
const (
	// Resolved: a valid credential, or none on an open server (local).
	Resolved Outcome = iota
	// Missing: no credential where sign-in is required.
	Missing
	// Bad: a credential that is wrong (unknown, revoked, expired, or its
	// account disabled). Never falls back to local.
	Bad
)

// Result is what Wrap found for a request.
type Result struct {
	Principal Principal // meaningful when Outcome is Resolved
	Outcome   Outcome
}

type ctxKey struct{}

// From returns the resolution Wrap recorded on the request's context.
func From(ctx context.Context) (Result, bool) {
	r, ok := ctx.Value(ctxKey{}).(Result)
	return r, ok
}

// WithResult records r on ctx, as Wrap does; for tests of handlers that
// run without the middleware.
func WithResult(ctx context.Context, r Result) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}
