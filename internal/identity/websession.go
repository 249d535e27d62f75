package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// Sign-in session lifetimes: a session ends after IdleLifetime without a
// request, and at the latest MaxLifetime after sign-in.
const (
	IdleLifetime = 7 * 24 * time.Hour
	MaxLifetime  = 30 * 24 * time.Hour
)

// touchEvery bounds how often a request writes a session's last use (and a
// token's): reads then do not write on every request, and the idle expiry
// is still right to the minute.
const touchEvery = time.Minute

// cookieBytes of randomness in a session cookie: 256 bits.
const cookieBytes = 32

// hashHex is the stored stand-in of a secret: hex SHA-256. The secrets
// carry 256 random bits, so a fast hash is enough.
func hashHex(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// csrfFor derives a session's CSRF token from its cookie value, so the
// server can hand it out again (GET /api/auth/me) without storing it: it
// is as random as the cookie, and knowing it reveals nothing of the cookie.
func csrfFor(cookie string) string {
	sum := sha256.Sum256([]byte("caduceus csrf\x00" + cookie))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// csrfMatches compares a presented CSRF token with the session's stored
// hash in constant time.
func csrfMatches(presented, storedHash string) bool {
	want, err := hex.DecodeString(storedHash)
	if err != nil || presented == "" {
		return false
	}
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(got[:], want) == 1
}

// expiry is when a session last seen at seen ends.
func expiry(created, seen time.Time) time.Time {
	idle, limit := seen.Add(IdleLifetime), created.Add(MaxLifetime)
	if idle.Before(limit) {
		return idle
	}
	return limit
}

// NewSession is a sign-in session just made: Cookie goes to the browser
// once (Set-Cookie) and CSRF in the login answer; the store keeps hashes.
type NewSession struct {
	Cookie    string
	CSRF      string
	ExpiresAt time.Time
}

// StartSession signs userID in: it stores a new session (and removes
// expired ones, so the table does not grow with abandoned sessions).
func (r *Resolver) StartSession(ctx context.Context, userID string) (NewSession, error) {
	b := make([]byte, cookieBytes)
	if _, err := rand.Read(b); err != nil {
		return NewSession{}, fmt.Errorf("session cookie: %w", err)
	}
	cookie := base64.RawURLEncoding.EncodeToString(b)
	csrf := csrfFor(cookie)
	now := r.now()
	s := store.WebSession{ID: hashHex(cookie), UserID: userID, CSRFHash: hashHex(csrf),
		CreatedAt: now, LastSeen: now, ExpiresAt: expiry(now, now)}
	err := r.st.Write(ctx, func(tx store.Tx) error {
		if _, err := tx.DeleteExpiredWebSessions(ctx, now); err != nil {
			return err
		}
		return tx.InsertWebSession(ctx, s)
	})
	if err != nil {
		return NewSession{}, fmt.Errorf("start session: %w", err)
	}
	return NewSession{Cookie: cookie, CSRF: csrf, ExpiresAt: s.ExpiresAt}, nil
}

// EndSession ends the session with stored id; an unknown one is no error
// (signing out twice is signing out).
func (r *Resolver) EndSession(ctx context.Context, id string) error {
	err := r.st.Write(ctx, func(tx store.Tx) error { return tx.DeleteWebSession(ctx, id) })
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}

// EndUserSessions ends the user's sessions but the one with stored id
// except ("" for all).
func (r *Resolver) EndUserSessions(ctx context.Context, userID, except string) error {
	return r.st.Write(ctx, func(tx store.Tx) error {
		_, err := tx.DeleteUserWebSessions(ctx, userID, except)
		return err
	})
}
