// Package auth is the model of people and what they may do: roles of
// accounts, scopes of personal API tokens, argon2id password hashes and
// token hashes. It holds no state and touches no store or network; the
// store keeps accounts and tokens, and the web tier (sign-in, sessions,
// route enforcement) asks this package what a role or scope permits.
package auth

import (
	"errors"
	"fmt"
)

// ErrBadValue is returned for a role, scope or action this package does not
// know.
var ErrBadValue = errors.New("unknown value")

// Action is a kind of thing a request does. Each action needs a level:
// reading needs read, operating runs needs operate, administration needs
// admin.
type Action string

// Actions.
const (
	ActRead     Action = "read"     // see sessions, runs, events, files
	ActStart    Action = "start"    // start a run
	ActSteer    Action = "steer"    // queue, goals, pause/resume
	ActCancel   Action = "cancel"   // stop a run
	ActApprove  Action = "approve"  // resolve an approval
	ActAnswer   Action = "answer"   // answer a clarify question
	ActUsers    Action = "users"    // add, change, disable accounts
	ActTokens   Action = "tokens"   // list or revoke other people's tokens
	ActSettings Action = "settings" // change server settings
)

// level orders what a role or scope grants: each level includes the ones
// below it, which is why roles and scopes compare as numbers.
type level int

const (
	levelNone level = iota
	levelRead
	levelOperate
	levelAdmin
)

// need is the level each action requires. An action missing here needs
// more than any level grants, so a new action is denied until placed.
func need(a Action) level {
	switch a {
	case ActRead:
		return levelRead
	case ActStart, ActSteer, ActCancel, ActApprove, ActAnswer:
		return levelOperate
	case ActUsers, ActTokens, ActSettings:
		return levelAdmin
	}
	return levelAdmin + 1
}

// ParseAction returns the action named s.
func ParseAction(s string) (Action, error) {
	a := Action(s)
	if need(a) > levelAdmin {
		return "", fmt.Errorf("action %q: %w", s, ErrBadValue)
	}
	return a, nil
}

// Role is what an account may do.
type Role string

// Roles.
const (
	RoleAdmin    Role = "admin"    // everything, including users and settings
	RoleOperator Role = "operator" // read, start, steer, cancel, approve, answer
	RoleViewer   Role = "viewer"   // read only
)

// Roles lists the roles, most powerful first.
func Roles() []Role { return []Role{RoleAdmin, RoleOperator, RoleViewer} }

func (r Role) level() level {
	switch r {
	case RoleAdmin:
		return levelAdmin
	case RoleOperator:
		return levelOperate
	case RoleViewer:
		return levelRead
	}
	return levelNone
}

// ParseRole returns the role named s (exact, lower case).
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if r.level() == levelNone {
		return "", fmt.Errorf("role %q (want admin, operator or viewer): %w", s, ErrBadValue)
	}
	return r, nil
}

// May reports whether an account with role r may do a. An unknown role may
// do nothing.
func (r Role) May(a Action) bool { return r.level() >= need(a) }

// Scope limits what a personal API token may do. A token never grants
// more than its owner's role: see Allowed.
type Scope string

// Scopes.
const (
	ScopeRead    Scope = "read"
	ScopeOperate Scope = "operate"
	ScopeAdmin   Scope = "admin"
)

// Scopes lists the scopes, narrowest first.
func Scopes() []Scope { return []Scope{ScopeRead, ScopeOperate, ScopeAdmin} }

func (s Scope) level() level {
	switch s {
	case ScopeRead:
		return levelRead
	case ScopeOperate:
		return levelOperate
	case ScopeAdmin:
		return levelAdmin
	}
	return levelNone
}

// ParseScope returns the scope named s (exact, lower case).
func ParseScope(s string) (Scope, error) {
	sc := Scope(s)
	if sc.level() == levelNone {
		return "", fmt.Errorf("scope %q (want read, operate or admin): %w", s, ErrBadValue)
	}
	return sc, nil
}

// May reports whether a token of scope s may do a, before its owner's role
// is taken into account.
func (s Scope) May(a Action) bool { return s.level() >= need(a) }

// Allowed reports whether a request authenticated by a token of scope s,
// owned by an account of role r, may do a: both must permit it, so
// demoting an account narrows its existing tokens at once.
func Allowed(r Role, s Scope, a Action) bool { return r.May(a) && s.May(a) }

// MayGrant reports whether an account of role r may create a token of
// scope s: never one wider than the role.
func MayGrant(r Role, s Scope) bool {
	return r.level() != levelNone && s.level() != levelNone && s.level() <= r.level()
}
