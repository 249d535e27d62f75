-- +goose Up
-- Accounts and personal API tokens (issue 13), as in SQLite's migration 4.
-- name_key is the name as store.NameKey folds it, so names are unique
-- regardless of case the same way on every store. Only hashes are kept:
-- an argon2id PHC string for a password, hex SHA-256 for a token.
CREATE TABLE users (
    id            TEXT COLLATE "C" PRIMARY KEY,
    name          TEXT NOT NULL,
    name_key      TEXT COLLATE "C" NOT NULL UNIQUE,
    role          TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    disabled      BOOLEAN NOT NULL DEFAULT FALSE,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);

CREATE TABLE api_tokens (
    id            TEXT COLLATE "C" PRIMARY KEY,
    user_id       TEXT COLLATE "C" NOT NULL REFERENCES users (id),
    name          TEXT NOT NULL,
    scope         TEXT NOT NULL,
    hash          TEXT COLLATE "C" NOT NULL UNIQUE,
    prefix        TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    last_used_ms  BIGINT NOT NULL DEFAULT 0,
    revoked_at_ms BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX api_tokens_by_user ON api_tokens (user_id, created_at_ms, id);
