-- +goose Up
-- Usage and cost (issue 16). usage_rollup sums the journal's usage events
-- (one per model call, never a streamed fragment) per run, per 15-minute
-- bucket of UTC time and per what answered (model, provider, profile), so a
-- report over any period and any time zone reads a few rows per run
-- instead of the events: every real UTC offset is a multiple of 15
-- minutes, so a local day is a whole number of buckets. usage_runs keeps
-- what a run's newest run.started says answers it. Triggers keep both in
-- the transaction of the append, whatever path wrote it. Neither follows a
-- session's delete: money spent stays spent.
CREATE TABLE usage_runs (
    run_id     TEXT PRIMARY KEY,
    model      TEXT NOT NULL,
    provider   TEXT NOT NULL,
    profile_id TEXT NOT NULL
);

CREATE TABLE usage_rollup (
    id               INTEGER PRIMARY KEY,
    run_id           TEXT NOT NULL,
    session_id       TEXT NOT NULL,
    bucket_ms        INTEGER NOT NULL,
    model            TEXT NOT NULL,
    provider         TEXT NOT NULL,
    profile_id       TEXT NOT NULL,
    input_tokens     INTEGER NOT NULL,
    output_tokens    INTEGER NOT NULL,
    cached_tokens    INTEGER NOT NULL,
    reasoning_tokens INTEGER NOT NULL,
    cost_usd         REAL NOT NULL,
    calls            INTEGER NOT NULL,
    -- 1 on the run's first row: a run counts once, where it first used tokens.
    first_of_run     INTEGER NOT NULL
);
CREATE UNIQUE INDEX usage_rollup_key ON usage_rollup (run_id, bucket_ms, model, provider, profile_id);
CREATE INDEX usage_rollup_by_bucket ON usage_rollup (bucket_ms);

-- +goose StatementBegin
CREATE TRIGGER events_usage_started AFTER INSERT ON events
WHEN NEW.type = 'run.started'
BEGIN
    INSERT OR REPLACE INTO usage_runs (run_id, model, provider, profile_id) VALUES (NEW.run_id,
        COALESCE(json_extract(NEW.payload, '$.model'), ''),
        COALESCE(json_extract(NEW.payload, '$.provider'), ''),
        COALESCE(json_extract(NEW.payload, '$.profile_id'), ''));
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER events_usage_insert AFTER INSERT ON events
WHEN NEW.type = 'usage'
BEGIN
    INSERT INTO usage_rollup (run_id, session_id, bucket_ms, model, provider, profile_id,
        input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, calls, first_of_run)
    SELECT NEW.run_id, NEW.session_id, NEW.ts_ms - NEW.ts_ms % 900000,
        COALESCE(u.model, (SELECT model FROM runs WHERE id = NEW.run_id), ''),
        COALESCE(u.provider, ''), COALESCE(u.profile_id, ''),
        COALESCE(json_extract(NEW.payload, '$.turn.input_tokens'), 0),
        COALESCE(json_extract(NEW.payload, '$.turn.output_tokens'), 0),
        COALESCE(json_extract(NEW.payload, '$.turn.cached_tokens'), 0),
        COALESCE(json_extract(NEW.payload, '$.turn.reasoning_tokens'), 0),
        COALESCE(json_extract(NEW.payload, '$.turn.cost_usd'), 0.0),
        1,
        NOT EXISTS (SELECT 1 FROM usage_rollup r WHERE r.run_id = NEW.run_id)
    FROM (SELECT 1) LEFT JOIN usage_runs u ON u.run_id = NEW.run_id
    WHERE true
    ON CONFLICT (run_id, bucket_ms, model, provider, profile_id) DO UPDATE SET
        input_tokens = input_tokens + excluded.input_tokens,
        output_tokens = output_tokens + excluded.output_tokens,
        cached_tokens = cached_tokens + excluded.cached_tokens,
        reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
        cost_usd = cost_usd + excluded.cost_usd,
        calls = calls + 1;
END;
-- +goose StatementEnd

-- What the journal already holds: each run's newest run.started, then its
-- usage events, first rows marked oldest bucket first.
INSERT INTO usage_runs (run_id, model, provider, profile_id)
SELECT e.run_id, COALESCE(json_extract(e.payload, '$.model'), ''),
    COALESCE(json_extract(e.payload, '$.provider'), ''),
    COALESCE(json_extract(e.payload, '$.profile_id'), '')
FROM events e
WHERE e.id IN (SELECT max(id) FROM events WHERE type = 'run.started' GROUP BY run_id);

INSERT INTO usage_rollup (run_id, session_id, bucket_ms, model, provider, profile_id,
    input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, calls, first_of_run)
SELECT e.run_id, min(e.session_id), e.ts_ms - e.ts_ms % 900000,
    COALESCE(u.model, r.model, ''), COALESCE(u.provider, ''), COALESCE(u.profile_id, ''),
    sum(COALESCE(json_extract(e.payload, '$.turn.input_tokens'), 0)),
    sum(COALESCE(json_extract(e.payload, '$.turn.output_tokens'), 0)),
    sum(COALESCE(json_extract(e.payload, '$.turn.cached_tokens'), 0)),
    sum(COALESCE(json_extract(e.payload, '$.turn.reasoning_tokens'), 0)),
    sum(COALESCE(json_extract(e.payload, '$.turn.cost_usd'), 0.0)),
    count(*), 0
FROM events e LEFT JOIN usage_runs u ON u.run_id = e.run_id LEFT JOIN runs r ON r.id = e.run_id
WHERE e.type = 'usage'
GROUP BY e.run_id, e.ts_ms - e.ts_ms % 900000, COALESCE(u.model, r.model, ''), COALESCE(u.provider, ''), COALESCE(u.profile_id, '')
ORDER BY 3;
UPDATE usage_rollup SET first_of_run = 1 WHERE id IN (SELECT min(id) FROM usage_rollup GROUP BY run_id);

-- +goose Down
DROP TRIGGER events_usage_insert;
DROP TRIGGER events_usage_started;
DROP TABLE usage_rollup;
DROP TABLE usage_runs;
