package api

import "github.com/caduceus-dev/caduceus/internal/auth"

// perm is what a route needs of the principal.
type perm string

// Permissions of routes.
const (
	permPublic  perm = "public"  // nobody needs to be signed in
	permRead    perm = "read"    // every GET and event stream
	permOperate perm = "operate" // start, steer, cancel, approve, rules
	permAdmin   perm = "admin"   // accounts, other people's tokens
)

// permAction is the auth action whose level a permission needs.
func permAction(p perm) auth.Action {
	switch p {
	case permRead, permPublic:
		return auth.ActRead
	case permOperate:
		return auth.ActStart
	}
	return auth.ActUsers
}
