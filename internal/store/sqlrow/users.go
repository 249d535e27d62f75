package sqlrow

// Accounts and their API tokens.

import (
	"github.com/caduceus-dev/caduceus/internal/store"
)

// UserCols are the columns ScanUser reads, in its order.
const UserCols = `id, name, role, password_hash, disabled, created_at_ms, updated_at_ms`

// ScanUser reads one row of UserCols.
func ScanUser(s Scanner) (store.User, error) {
	var v store.User
	var c, u int64
	err := s.Scan(&v.ID, &v.Name, &v.Role, &v.PasswordHash, &v.Disabled, &c, &u)
	v.CreatedAt, v.UpdatedAt = fromMS(c), fromMS(u)
	return v, err
}

// TokenCols are the columns ScanToken reads, in its order.
const TokenCols = `id, user_id, name, scope, hash, prefix, created_at_ms, last_used_ms, revoked_at_ms`

// ScanToken reads one row of TokenCols.
func ScanToken(s Scanner) (store.APIToken, error) {
	var v store.APIToken
	var c, u, rv int64
	err := s.Scan(&v.ID, &v.UserID, &v.Name, &v.Scope, &v.Hash, &v.Prefix, &c, &u, &rv)
	v.CreatedAt, v.LastUsed, v.RevokedAt = fromMS(c), fromMS(u), fromMS(rv)
	return v, err
}
