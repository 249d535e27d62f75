-- +goose Up
-- Scheduled jobs (issue 17, h17-jobs). next_fire_at_ms is claimed with a
-- conditional update (ClaimDueJobs) so that each due time fires once
-- whichever process claims it; 0 means no further fire.
CREATE TABLE jobs (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    prompt          TEXT NOT NULL,
    profile_id      TEXT NOT NULL DEFAULT '',
    workspace       TEXT NOT NULL DEFAULT '',
    schedule_kind   TEXT NOT NULL,
    schedule_expr   TEXT NOT NULL,
    tz              TEXT NOT NULL DEFAULT '',
    enabled         INTEGER NOT NULL DEFAULT 1,
    repeat_limit    INTEGER NOT NULL DEFAULT 0,
    fire_count      INTEGER NOT NULL DEFAULT 0,
    overlap         TEXT NOT NULL,
    missed          TEXT NOT NULL,
    session_policy  TEXT NOT NULL,
    session_id      TEXT NOT NULL DEFAULT '',
    run_expiry_ms   INTEGER NOT NULL DEFAULT 0,
    next_fire_at_ms INTEGER NOT NULL DEFAULT 0,
    last_run_id     TEXT NOT NULL DEFAULT '',
    created_at_ms   INTEGER NOT NULL,
    updated_at_ms   INTEGER NOT NULL
);
CREATE INDEX jobs_due ON jobs (next_fire_at_ms) WHERE enabled = 1 AND next_fire_at_ms > 0;
CREATE TABLE job_runs (
    run_id     TEXT PRIMARY KEY,
    job_id     TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    fire_at_ms INTEGER NOT NULL,
    manual     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX job_runs_job ON job_runs (job_id, fire_at_ms);

-- +goose Down
DROP TABLE job_runs;
DROP TABLE jobs;
