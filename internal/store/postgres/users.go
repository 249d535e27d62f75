package postgres

// Accounts and personal API tokens, as in the SQLite store.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetUser(ctx context.Context, id string) (store.User, error) {
	v, err := sqlrow.ScanUser(r.q.QueryRow(ctx, `SELECT `+sqlrow.UserCols+` FROM users WHERE id = $1`, id))
	if err != nil {
		return v, notFound(err, "user", id)
	}
	return v, nil
}

func (r reader) GetUserByName(ctx context.Context, name string) (store.User, error) {
	v, err := sqlrow.ScanUser(r.q.QueryRow(ctx, `SELECT `+sqlrow.UserCols+` FROM users WHERE name_key = $1`, store.NameKey(name)))
	if err != nil {
		return v, notFound(err, "user", name)
	}
	return v, nil
}

func (r reader) ListUsers(ctx context.Context) ([]store.User, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.UserCols+` FROM users ORDER BY created_at_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanUser)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

func (r reader) GetTokenByHash(ctx context.Context, hash string) (store.APIToken, error) {
	v, err := sqlrow.ScanToken(r.q.QueryRow(ctx, `SELECT `+sqlrow.TokenCols+` FROM api_tokens WHERE hash = $1 AND revoked_at_ms = 0`, hash))
	if err != nil {
		// The hash is a secret's stand-in: the error names no token.
		return v, notFound(err, "token", "")
	}
	return v, nil
}

func (r reader) ListTokens(ctx context.Context, userID string) ([]store.APIToken, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.TokenCols+` FROM api_tokens WHERE user_id = $1 ORDER BY created_at_ms, id`, userID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanToken)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// InsertUser and UpdateUser look for a taken name before writing rather
// than let the unique index fail: PostgreSQL aborts a transaction on a
// failed statement, and a caller must be able to carry on after
// ErrConflict. The index still guards against a concurrent writer.

func (t *txn) InsertUser(ctx context.Context, u store.User) error {
	return t.exec(ctx, "user name", u.Name, store.ErrConflict,
		`INSERT INTO users (id, name, name_key, role, password_hash, disabled, created_at_ms, updated_at_ms)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT (name_key) DO NOTHING`,
		u.ID, u.Name, store.NameKey(u.Name), u.Role, u.PasswordHash, u.Disabled, ms(u.CreatedAt), ms(u.UpdatedAt))
}

func (t *txn) UpdateUser(ctx context.Context, u store.User) error {
	var owner string
	err := t.c.QueryRow(ctx, `SELECT id FROM users WHERE name_key = $1`, store.NameKey(u.Name)).Scan(&owner)
	switch {
	case err == nil && owner != u.ID:
		return fmt.Errorf("user name %q: %w", u.Name, store.ErrConflict)
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("update user %q: %w", u.ID, err)
	}
	return t.exec(ctx, "user", u.ID, store.ErrNotFound,
		`UPDATE users SET name = $1, name_key = $2, role = $3, password_hash = $4, disabled = $5, updated_at_ms = $6
		WHERE id = $7`, u.Name, store.NameKey(u.Name), u.Role, u.PasswordHash, u.Disabled, ms(u.UpdatedAt), u.ID)
}

func (t *txn) InsertToken(ctx context.Context, k store.APIToken) error {
	_, err := t.c.Exec(ctx, `INSERT INTO api_tokens (`+sqlrow.TokenCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
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
	return t.exec(ctx, "token", id, store.ErrNotFound,
		`UPDATE api_tokens SET revoked_at_ms = $1 WHERE id = $2 AND revoked_at_ms = 0`, ms(at), id)
}

func (t *txn) TouchToken(ctx context.Context, id string, at time.Time) error {
	return t.exec(ctx, "token", id, store.ErrNotFound,
		`UPDATE api_tokens SET last_used_ms = $1 WHERE id = $2`, ms(at), id)
}
