-- +goose Up
-- Caduceus schema v1. All timestamps are INTEGER Unix milliseconds, UTC.

CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    title         TEXT NOT NULL DEFAULT '',
    workspace     TEXT NOT NULL,
    model         TEXT NOT NULL DEFAULT '',
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);
CREATE INDEX sessions_by_activity ON sessions (updated_at_ms DESC, id DESC);

CREATE TABLE runs (
    id               TEXT PRIMARY KEY,
    session_id       TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    status           TEXT NOT NULL,
    input            TEXT NOT NULL,
    model            TEXT NOT NULL DEFAULT '',
    priority         INTEGER NOT NULL DEFAULT 0,
    attempt          INTEGER NOT NULL DEFAULT 0,
    runner_id        TEXT NOT NULL DEFAULT '',
    lease_expires_ms INTEGER NOT NULL DEFAULT 0,
    last_seq         INTEGER NOT NULL DEFAULT 0,
    error_code       TEXT NOT NULL DEFAULT '',
    error_message    TEXT NOT NULL DEFAULT '',
    usage_json       TEXT NOT NULL DEFAULT '{}',
    created_at_ms    INTEGER NOT NULL,
    started_at_ms    INTEGER NOT NULL DEFAULT 0,
    ended_at_ms      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_session ON runs (session_id, created_at_ms);
CREATE INDEX runs_by_status ON runs (status, priority DESC, created_at_ms);

-- AUTOINCREMENT: ids are SSE cursors, so an id is never reused, even after
-- the newest events are deleted with their session.
CREATE TABLE events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id     TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    type       TEXT NOT NULL,
    ts_ms      INTEGER NOT NULL,
    terminal   INTEGER NOT NULL DEFAULT 0,
    payload    TEXT NOT NULL
);
CREATE UNIQUE INDEX events_run_seq ON events (run_id, seq);
CREATE INDEX events_by_session ON events (session_id, id);
CREATE INDEX events_by_run ON events (run_id, id);
-- The database itself guarantees exactly one terminal event per run.
CREATE UNIQUE INDEX events_one_terminal ON events (run_id) WHERE terminal = 1;

CREATE TABLE requests (
    id             TEXT PRIMARY KEY,
    run_id         TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    session_id     TEXT NOT NULL,
    kind           TEXT NOT NULL,            -- approval | clarify
    status         TEXT NOT NULL,            -- pending | resolved | expired | cancelled
    tool_call_id   TEXT NOT NULL,
    prompt_json    TEXT NOT NULL,            -- the *.requested payload
    response       TEXT NOT NULL DEFAULT '', -- choice or answer
    created_at_ms  INTEGER NOT NULL,
    expires_at_ms  INTEGER NOT NULL DEFAULT 0,
    resolved_at_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX requests_by_status ON requests (status, created_at_ms);
CREATE INDEX requests_by_run ON requests (run_id);

CREATE TABLE controls (
    id            TEXT PRIMARY KEY,
    run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    kind          TEXT NOT NULL,             -- cancel | ...
    payload_json  TEXT NOT NULL DEFAULT '{}',
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX controls_by_run ON controls (run_id, created_at_ms);

CREATE TABLE approval_rules (
    id            TEXT PRIMARY KEY,
    tool          TEXT NOT NULL,
    pattern       TEXT NOT NULL,             -- the exact action approved
    scope         TEXT NOT NULL,             -- session | always
    session_id    TEXT NOT NULL DEFAULT '',
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX approval_rules_lookup ON approval_rules (tool, pattern);

CREATE TABLE runners (
    id              TEXT PRIMARY KEY,
    host            TEXT NOT NULL,
    pid             INTEGER NOT NULL,
    version         TEXT NOT NULL,
    started_at_ms   INTEGER NOT NULL,
    heartbeat_at_ms INTEGER NOT NULL
);
