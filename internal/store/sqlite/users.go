package sqlite

// Accounts and personal API tokens.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetUser(ctx context.Context, id string) (store.User, error) {
	v, err := sqlrow.ScanUser(r.queryRow(ctx, `SELECT `+sqlrow.UserCols+` FROM users WHERE id = ?`, id))
	if err != nil {
		return v, notFound(err, "user", id)
	}
	return v, nil
}

func (r reader) GetUserByName(ctx context.Context, name string) (store.User, error) {
	v, err := sqlrow.ScanUser(r.queryRow(ctx, `SELECT `+sqlrow.UserCols+` FROM users WHERE name_key = ?`, store.NameKey(name)))
	if err != nil {
		return v, notFound(err, "user", name)
	}
	return v, nil
}

func (r reader) ListUsers(ctx context.Context) ([]store.User, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.UserCols+` FROM users ORDER BY created_at_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanUser)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

func (r reader) GetTokenByHash(ctx context.Context, hash string) (store.APIToken, error) {
	v, err := sqlrow.ScanToken(r.queryRow(ctx, `SELECT `+sqlrow.TokenCols+` FROM api_tokens WHERE hash = ? AND revoked_at_ms = 0`, hash))
	if err != nil {
		// The hash is a secret's stand-in: the error names no token.
		return v, notFound(err, "token", "")
	}
	return v, nil
}

func (r reader) ListTokens(ctx context.Context, userID string) ([]store.APIToken, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.TokenCols+` FROM api_tokens WHERE user_id = ? ORDER BY created_at_ms, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanToken)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// InsertUser and UpdateUser look for a taken name before writing rather
// than rely on the unique index failing: a caller can then carry on in the
// same transaction after ErrConflict (PostgreSQL aborts a transaction on a
// failed statement, and both stores behave alike). The index still guards.

func (t *txn) InsertUser(ctx context.Context, u store.User) error {
	res, err := t.tx.ExecContext(ctx, `INSERT INTO users (id, name, name_key, role, password_hash, disabled, created_at_ms, updated_at_ms)
		VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (name_key) DO NOTHING`,
		u.ID, u.Name, store.NameKey(u.Name), u.Role, u.PasswordHash, u.Disabled, ms(u.CreatedAt), ms(u.UpdatedAt))
	return expectOne(res, err)("user name", u.Name, store.ErrConflict)
}

func (t *txn) UpdateUser(ctx context.Context, u store.User) error {
	var owner string
	err := t.tx.QueryRowContext(ctx, `SELECT id FROM users WHERE name_key = ?`, store.NameKey(u.Name)).Scan(&owner)
	switch {
	case err == nil && owner != u.ID:
		return fmt.Errorf("user name %q: %w", u.Name, store.ErrConflict)
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("update user %q: %w", u.ID, err)
	}
	return expectOne(t.tx.ExecContext(ctx, `UPDATE users SET name = ?, name_key = ?, role = ?, password_hash = ?, disabled = ?, updated_at_ms = ?
		WHERE id = ?`, u.Name, store.NameKey(u.Name), u.Role, u.PasswordHash, u.Disabled, ms(u.UpdatedAt), u.ID))("user", u.ID, store.ErrNotFound)
}

func (t *txn) InsertToken(ctx context.Context, k store.APIToken) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO api_tokens (`+sqlrow.TokenCols+`) VALUES (?,?,?,?,?,?,?,?,?)`,
		k.ID, k.UserID, k.Name, k.Scope, k.Hash, k.Prefix, ms(k.CreatedAt), ms(k.LastUsed), ms(k.RevokedAt))
	if err != nil {
		return fmt.Errorf("insert token %q: %w", k.ID, err)
	}
	return nil
}

func (t *txn) RevokeToken(ctx context.Context, id string, at time.Time) error {
	if at.IsZero() { // a zero time is stored as "live"
		return fmt.Errorf("revoke token %q: no time given", id)
	}
	return expectOne(t.tx.ExecContext(ctx, `UPDATE api_tokens SET revoked_at_ms = ? WHERE id = ? AND revoked_at_ms = 0`,
		ms(at), id))("token", id, store.ErrNotFound)
}

func (t *txn) TouchToken(ctx context.Context, id string, at time.Time) error {
	return expectOne(t.tx.ExecContext(ctx, `UPDATE api_tokens SET last_used_ms = ? WHERE id = ?`,
		ms(at), id))("token", id, store.ErrNotFound)
}
