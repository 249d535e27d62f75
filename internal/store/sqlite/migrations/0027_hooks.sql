-- +goose Up
-- Outgoing webhooks and inbound triggers (issue 17, h17-hooks).
--
-- webhooks: where a run's end is posted. secret_sealed is the signing
-- secret sealed with the server's secretbox key (empty for kind 'slack',
-- which is unsigned); events is a JSON array of run statuses
-- (completed, failed, expired); session_id and profile_id narrow it to
-- one session's or one profile's runs ('' = every run).
CREATE TABLE webhooks (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    url           TEXT NOT NULL,
    kind          TEXT NOT NULL,
    secret_sealed TEXT NOT NULL DEFAULT '',
    events        TEXT NOT NULL DEFAULT '[]',
    session_id    TEXT NOT NULL DEFAULT '',
    profile_id    TEXT NOT NULL DEFAULT '',
    enabled       INTEGER NOT NULL DEFAULT 1,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

-- webhook_deliveries: one row per attempt, so the log shows each try.
-- state: pending (due at next_at_ms), sending (claimed until next_at_ms),
-- ok, retried (a later attempt row follows), failed (final). webhook_id
-- is '' for a per-run webhook_url, whose url is kept on the row.
CREATE TABLE webhook_deliveries (
    id            TEXT PRIMARY KEY,
    webhook_id    TEXT NOT NULL,
    run_id        TEXT NOT NULL,
    url           TEXT NOT NULL DEFAULT '',
    event         TEXT NOT NULL,
    payload       TEXT NOT NULL,
    attempt       INTEGER NOT NULL,
    state         TEXT NOT NULL,
    status_code   INTEGER NOT NULL DEFAULT 0,
    error         TEXT NOT NULL DEFAULT '',
    duration_ms   INTEGER NOT NULL DEFAULT 0,
    next_at_ms    INTEGER NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_at_ms);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (webhook_id, created_at_ms);

-- triggers: inbound POST /hooks/{id}. session_policy is 'new' (a session
-- per call) or 'accumulate' (session_id, set by the first call, takes
-- every later one).
CREATE TABLE triggers (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    secret_sealed  TEXT NOT NULL,
    template       TEXT NOT NULL,
    profile_id     TEXT NOT NULL DEFAULT '',
    workspace      TEXT NOT NULL DEFAULT '',
    session_policy TEXT NOT NULL,
    session_id     TEXT NOT NULL DEFAULT '',
    enabled        INTEGER NOT NULL DEFAULT 1,
    created_at_ms  INTEGER NOT NULL,
    updated_at_ms  INTEGER NOT NULL
);

-- trigger_signatures: the signatures a trigger accepted within the
-- replay window; a second call with one of them is a replay.
CREATE TABLE trigger_signatures (
    trigger_id TEXT NOT NULL,
    signature  TEXT NOT NULL,
    seen_at_ms INTEGER NOT NULL,
    PRIMARY KEY (trigger_id, signature)
);

-- run_webhooks: the webhook_url a message gave its run, told of the
-- run's end like a configured webhook, signed with the server's run key.
CREATE TABLE run_webhooks (
    run_id TEXT PRIMARY KEY,
    url    TEXT NOT NULL
);

-- +goose Down
DROP TABLE run_webhooks;
DROP TABLE trigger_signatures;
DROP TABLE triggers;
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
