-- +goose Up
-- A session's goal (issue 15): what its runs work towards, with limits
-- and what the runs under it used. One per session; it goes with the
-- session. by_json is the actor who set it.
CREATE TABLE goals (
    session_id      TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    text            TEXT NOT NULL,
    status          TEXT NOT NULL,
    max_runs        INTEGER NOT NULL DEFAULT 0,
    max_tokens      INTEGER NOT NULL DEFAULT 0,
    max_cost_usd    REAL NOT NULL DEFAULT 0,
    max_duration_ms INTEGER NOT NULL DEFAULT 0,
    runs            INTEGER NOT NULL DEFAULT 0,
    tokens          INTEGER NOT NULL DEFAULT 0,
    cost_usd        REAL NOT NULL DEFAULT 0,
    note            TEXT NOT NULL DEFAULT '',
    reason          TEXT NOT NULL DEFAULT '',
    by_json         TEXT NOT NULL DEFAULT '',
    started_at_ms   INTEGER NOT NULL,
    created_at_ms   INTEGER NOT NULL,
    updated_at_ms   INTEGER NOT NULL
);
