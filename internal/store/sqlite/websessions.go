package sqlite

// Browser sign-in sessions.

import (
	"context"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

const webSessionCols = `id, user_id, csrf_hash, created_at_ms, expires_at_ms, last_seen_ms`

func (r reader) GetWebSession(ctx context.Context, id string) (store.WebSession, error) {
	var v store.WebSession
	var c, e, l int64
	err := r.queryRow(ctx, `SELECT `+webSessionCols+` FROM web_sessions WHERE id = ?`, id).
		Scan(&v.ID, &v.UserID, &v.CSRFHash, &c, &e, &l)
	if err != nil {
		// The id is a secret's stand-in: the error names no session.
		return store.WebSession{}, notFound(err, "web session", "")
	}
	v.CreatedAt, v.ExpiresAt, v.LastSeen = fromMS(c), fromMS(e), fromMS(l)
	return v, nil
}

func (t *txn) InsertWebSession(ctx context.Context, s store.WebSession) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO web_sessions (`+webSessionCols+`) VALUES (?,?,?,?,?,?)`,
		s.ID, s.UserID, s.CSRFHash, ms(s.CreatedAt), ms(s.ExpiresAt), ms(s.LastSeen))
	if err != nil {
		return fmt.Errorf("insert web session of user %q: %w", s.UserID, err)
	}
	return nil
}

func (t *txn) TouchWebSession(ctx context.Context, id string, lastSeen, expiresAt time.Time) error {
	return expectOne(t.tx.ExecContext(ctx, `UPDATE web_sessions SET last_seen_ms = ?, expires_at_ms = ? WHERE id = ?`,
		ms(lastSeen), ms(expiresAt), id))("web session", "", store.ErrNotFound)
}

func (t *txn) DeleteWebSession(ctx context.Context, id string) error {
	return expectOne(t.tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE id = ?`, id))("web session", "", store.ErrNotFound)
}

func (t *txn) DeleteUserWebSessions(ctx context.Context, userID, except string) (int, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE user_id = ? AND id <> ?`, userID, except)
	return affected(res, err, "delete web sessions of user "+userID)
}

func (t *txn) DeleteExpiredWebSessions(ctx context.Context, now time.Time) (int, error) {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires_at_ms <= ?`, ms(now))
	return affected(res, err, "delete expired web sessions")
}

type rowsAffected interface{ RowsAffected() (int64, error) }

func affected(res rowsAffected, err error, what string) (int, error) {
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return int(n), nil
}
