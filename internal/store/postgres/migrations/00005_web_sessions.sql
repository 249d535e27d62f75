-- +goose Up
-- Browser sign-in sessions (issue 13), as in SQLite's migration 5. id is
-- the hex SHA-256 of the cookie value and csrf_hash that of the session's
-- CSRF token: the secrets themselves are never stored.
CREATE TABLE web_sessions (
    id            TEXT COLLATE "C" PRIMARY KEY,
    user_id       TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    csrf_hash     TEXT COLLATE "C" NOT NULL,
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT NOT NULL,
    last_seen_ms  BIGINT NOT NULL
);
CREATE INDEX web_sessions_by_user ON web_sessions (user_id);
CREATE INDEX web_sessions_by_expiry ON web_sessions (expires_at_ms);
