-- +goose Up
-- Caduceus's schema on PostgreSQL, as of SQLite's schema version 3 (both
-- stores number their migrations alike, so /api/meta's store_schema means
-- the same in both; versions 1 and 2 never existed here). Go sees exactly
-- what the SQLite store gives it: timestamps are BIGINT Unix milliseconds
-- (UTC), payloads TEXT (JSONB would reformat them), and keys compare
-- bytewise (COLLATE "C"), as SQLite compares them, whatever the
-- database's collation.

CREATE TABLE sessions (
    id            TEXT COLLATE "C" PRIMARY KEY,
    title         TEXT NOT NULL DEFAULT '',
    workspace     TEXT NOT NULL,
    model         TEXT NOT NULL DEFAULT '',
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    -- the seq of the session's own lifecycle events (session.*)
    last_seq      BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_activity ON sessions (updated_at_ms DESC, id DESC);

CREATE TABLE runs (
    id               TEXT COLLATE "C" PRIMARY KEY,
    -- the order runs were inserted in (SQLite's rowid): runs queued in the
    -- same millisecond are taken in the order they were accepted
    ord              BIGINT GENERATED ALWAYS AS IDENTITY,
    session_id       TEXT COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    status           TEXT NOT NULL,
    input            TEXT NOT NULL,
    model            TEXT NOT NULL DEFAULT '',
    priority         INTEGER NOT NULL DEFAULT 0,
    attempt          INTEGER NOT NULL DEFAULT 0,
    runner_id        TEXT COLLATE "C" NOT NULL DEFAULT '',
    lease_expires_ms BIGINT NOT NULL DEFAULT 0,
    last_seq         BIGINT NOT NULL DEFAULT 0,
    error_code       TEXT NOT NULL DEFAULT '',
    error_message    TEXT NOT NULL DEFAULT '',
    usage_json       TEXT NOT NULL DEFAULT '{}',
    created_at_ms    BIGINT NOT NULL,
    started_at_ms    BIGINT NOT NULL DEFAULT 0,
    ended_at_ms      BIGINT NOT NULL DEFAULT 0,
    retries          INTEGER NOT NULL DEFAULT 0,
    max_retries      INTEGER NOT NULL DEFAULT 0,
    retry_backoff_ms BIGINT NOT NULL DEFAULT 0,
    retry_at_ms      BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_session ON runs (session_id, created_at_ms, ord);
CREATE INDEX runs_by_status ON runs (status, priority DESC, created_at_ms, ord);
CREATE INDEX runs_by_runner ON runs (runner_id) WHERE runner_id != '';

-- ids are SSE cursors: assigned under the journal's append lock, so in
-- commit order (docs/ARCHITECTURE.md), and never reused.
CREATE TABLE events (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id     TEXT COLLATE "C" NOT NULL,
    session_id TEXT COLLATE "C" NOT NULL,
    seq        BIGINT NOT NULL,
    type       TEXT NOT NULL,
    ts_ms      BIGINT NOT NULL,
    terminal   BOOLEAN NOT NULL DEFAULT false,
    payload    TEXT NOT NULL
);
CREATE UNIQUE INDEX events_run_seq ON events (run_id, seq) WHERE run_id != '';
CREATE UNIQUE INDEX events_session_seq ON events (session_id, seq) WHERE run_id = '';
CREATE INDEX events_by_session ON events (session_id, id);
CREATE INDEX events_by_run ON events (run_id, id);
-- The database itself guarantees exactly one terminal event per run.
CREATE UNIQUE INDEX events_one_terminal ON events (run_id) WHERE terminal;

CREATE TABLE requests (
    id             TEXT COLLATE "C" PRIMARY KEY,
    run_id         TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    session_id     TEXT COLLATE "C" NOT NULL,
    kind           TEXT NOT NULL,
    status         TEXT NOT NULL,
    tool_call_id   TEXT NOT NULL,
    prompt_json    TEXT NOT NULL,
    response       TEXT NOT NULL DEFAULT '',
    created_at_ms  BIGINT NOT NULL,
    expires_at_ms  BIGINT NOT NULL DEFAULT 0,
    resolved_at_ms BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX requests_by_status ON requests (status, created_at_ms);
CREATE INDEX requests_by_run ON requests (run_id);

CREATE TABLE controls (
    id            TEXT COLLATE "C" PRIMARY KEY,
    run_id        TEXT COLLATE "C" NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    kind          TEXT NOT NULL,
    payload_json  TEXT NOT NULL DEFAULT '{}',
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX controls_by_run ON controls (run_id, created_at_ms);

CREATE TABLE approval_rules (
    id            TEXT COLLATE "C" PRIMARY KEY,
    tool          TEXT NOT NULL,
    pattern       TEXT NOT NULL,
    scope         TEXT NOT NULL,
    session_id    TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX approval_rules_lookup ON approval_rules (tool, pattern);

CREATE TABLE runners (
    id              TEXT COLLATE "C" PRIMARY KEY,
    host            TEXT NOT NULL,
    pid             INTEGER NOT NULL,
    version         TEXT NOT NULL,
    started_at_ms   BIGINT NOT NULL,
    heartbeat_at_ms BIGINT NOT NULL
);
