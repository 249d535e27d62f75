-- +goose Up
-- Browser sign-in sessions (issue 13). id is the hex SHA-256 of the cookie
-- value and csrf_hash that of the session's CSRF token: the secrets
-- themselves are never stored.
CREATE TABLE web_sessions (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users (id),
    csrf_hash     TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL
);
CREATE INDEX web_sessions_by_user ON web_sessions (user_id);
CREATE INDEX web_sessions_by_expiry ON web_sessions (expires_at_ms);
