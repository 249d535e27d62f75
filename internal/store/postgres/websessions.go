package postgres

// Browser sign-in sessions, as in the SQLite store.

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
	err := r.q.QueryRow(ctx, `SELECT `+webSessionCols+` FROM web_sessions WHERE id = $1`, id).
		Scan(&v.ID, &v.UserID, &v.CSRFHash, &c, &e, &l)
	if err != nil {
		// The id is a secret's stand-in: the error names no session.
		return store.WebSession{}, notFound(err, "web session", "")
	}
	v.CreatedAt, v.ExpiresAt, v.LastSeen = fromMS(c), fromMS(e), fromMS(l)
	return v, nil
}

func (t *txn) InsertWebSession(ctx context.Context, s store.WebSession) error {
	_, err := t.conn.Exec(ctx, `INSERT INTO web_sessions (`+webSessionCols+`) VALUES ($1,$2,$3,$4,$5,$6)`,
		s.ID, s.UserID, s.CSRFHash, ms(s.CreatedAt), ms(s.ExpiresAt), ms(s.LastSeen))
	if err != nil {
		return fmt.Errorf("insert web session of user %q: %w", s.UserID, err)
	}
	return nil
}

func (t *txn) TouchWebSession(ctx context.Context, id string, lastSeen, expiresAt time.Time) error {
	return t.exec(ctx, "web session", "", store.ErrNotFound,
		`UPDATE web_sessions SET last_seen_ms = $1, expires_at_ms = $2 WHERE id = $3`, ms(lastSeen), ms(expiresAt), id)
}

func (t *txn) DeleteWebSession(ctx context.Context, id string) error {
	return t.exec(ctx, "web session", "", store.ErrNotFound, `DELETE FROM web_sessions WHERE id = $1`, id)
}

func (t *txn) DeleteUserWebSessions(ctx context.Context, userID, except string) (int, error) {
	tag, err := t.conn.Exec(ctx, `DELETE FROM web_sessions WHERE user_id = $1 AND id <> $2`, userID, except)
	if err != nil {
		return 0, fmt.Errorf("delete web sessions of user %q: %w", userID, err)
	}
	return int(tag.RowsAffected()), nil
}

func (t *txn) DeleteExpiredWebSessions(ctx context.Context, now time.Time) (int, error) {
	tag, err := t.conn.Exec(ctx, `DELETE FROM web_sessions WHERE expires_at_ms <= $1`, ms(now))
	if err != nil {
		return 0, fmt.Errorf("delete expired web sessions: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
