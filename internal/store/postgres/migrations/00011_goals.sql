-- +goose Up
-- A session's goal (issue 15), as in SQLite's migration 11.
CREATE TABLE goals (
    session_id      TEXT COLLATE "C" PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    text            TEXT NOT NULL,
    status          TEXT COLLATE "C" NOT NULL,
    max_runs        INTEGER NOT NULL DEFAULT 0,
    max_tokens      BIGINT NOT NULL DEFAULT 0,
    max_cost_usd    DOUBLE PRECISION NOT NULL DEFAULT 0,
    max_duration_ms BIGINT NOT NULL DEFAULT 0,
    runs            INTEGER NOT NULL DEFAULT 0,
    tokens          BIGINT NOT NULL DEFAULT 0,
    cost_usd        DOUBLE PRECISION NOT NULL DEFAULT 0,
    note            TEXT NOT NULL DEFAULT '',
    reason          TEXT NOT NULL DEFAULT '',
    by_json         TEXT NOT NULL DEFAULT '',
    started_at_ms   BIGINT NOT NULL,
    created_at_ms   BIGINT NOT NULL,
    updated_at_ms   BIGINT NOT NULL
);
