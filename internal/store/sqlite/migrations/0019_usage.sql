-- +goose Up
-- Usage and cost (issue 16). usage_rollup sums the journal's usage events
-- (one per model call, never a streamed fragment) per 15-minute bucket of
-- UTC time, session and what answered (model, provider, profile), so a
-- report over any period and any time zone reads a few rows per session
-- and quarter hour instead of the events: every real UTC offset is a
-- multiple of 15 minutes, so a local day is a whole number of buckets.
-- usage_runs keeps, per run, what its newest run.started says answers it
-- and whether the run was counted yet (a run counts once, in the row of
-- its first model call). Triggers keep both in the transaction of the
-- append, whatever path wrote it. Neither follows a session's delete:
-- money spent stays spent.
CREATE TABLE usage_runs (
    run_id     TEXT PRIMARY KEY,
    model      TEXT NOT NULL,
    provider   TEXT NOT NULL,
    profile_id TEXT NOT NULL,
    counted    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE usage_rollup (
    bucket_ms        INTEGER NOT NULL,
    session_id       TEXT NOT NULL,
    model            TEXT NOT NULL,
    provider         TEXT NOT NULL,
    profile_id       TEXT NOT NULL,
    input_tokens     INTEGER NOT NULL,
    output_tokens    INTEGER NOT NULL,
    cached_tokens    INTEGER NOT NULL,
    reasoning_tokens INTEGER NOT NULL,
    cost_usd         REAL NOT NULL,
    calls            INTEGER NOT NULL,
    runs             INTEGER NOT NULL,
    PRIMARY KEY (bucket_ms, session_id, model, provider, profile_id)
) WITHOUT ROWID;

-- +goose StatementBegin
CREATE TRIGGER events_usage_started AFTER INSERT ON events
WHEN NEW.type = 'run.started'
BEGIN
    INSERT INTO usage_runs (run_id, model, provider, profile_id) VALUES (NEW.run_id,
        COALESCE(json_extract(NEW.payload, '$.model'), ''),
        COALESCE(json_extract(NEW.payload, '$.provider'), ''),
        COALESCE(json_extract(NEW.payload, '$.profile_id'), ''))
    ON CONFLICT (run_id) DO UPDATE SET model = excluded.model, provider = excluded.provider, profile_id = excluded.profile_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER events_usage_insert AFTER INSERT ON events
WHEN NEW.type = 'usage'
BEGIN
    -- A run whose start was never journaled: the model it was queued with.
    INSERT OR IGNORE INTO usage_runs (run_id, model, provider, profile_id)
    VALUES (NEW.run_id, COALESCE((SELECT model FROM runs WHERE id = NEW.run_id), ''), '', '');
    INSERT INTO usage_rollup (bucket_ms, session_id, model, provider, profile_id,
        input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, calls, runs)
    SELECT NEW.ts_ms - NEW.ts_ms % 900000, NEW.session_id, u.model, u.provider, u.profile_id,
        COALESCE(json_extract(NEW.payload, '$.turn.input_tokens'), 0),
        COALESCE(json_extract(NEW.payload, '$.turn.output_tokens'), 0),
        COALESCE(json_extract(NEW.payload, '$.turn.cached_tokens'), 0),
        COALESCE(json_extract(NEW.payload, '$.turn.reasoning_tokens'), 0),
        COALESCE(json_extract(NEW.payload, '$.turn.cost_usd'), 0.0),
        1, 1 - u.counted
    FROM usage_runs u WHERE u.run_id = NEW.run_id
    ON CONFLICT (bucket_ms, session_id, model, provider, profile_id) DO UPDATE SET
        input_tokens = input_tokens + excluded.input_tokens,
        output_tokens = output_tokens + excluded.output_tokens,
        cached_tokens = cached_tokens + excluded.cached_tokens,
        reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
        cost_usd = cost_usd + excluded.cost_usd,
        calls = calls + 1,
        runs = runs + excluded.runs;
    UPDATE usage_runs SET counted = 1 WHERE run_id = NEW.run_id AND counted = 0;
END;
-- +goose StatementEnd

-- What the journal already holds: each run's newest run.started, then its
-- usage events, each run counted in the bucket of its first.
INSERT INTO usage_runs (run_id, model, provider, profile_id, counted)
SELECT e.run_id, COALESCE(json_extract(e.payload, '$.model'), ''),
    COALESCE(json_extract(e.payload, '$.provider'), ''),
    COALESCE(json_extract(e.payload, '$.profile_id'), ''), 0
FROM events e
WHERE e.id IN (SELECT max(id) FROM events WHERE type = 'run.started' GROUP BY run_id);
INSERT OR IGNORE INTO usage_runs (run_id, model, provider, profile_id, counted)
SELECT DISTINCT e.run_id, COALESCE(r.model, ''), '', '', 0
FROM events e LEFT JOIN runs r ON r.id = e.run_id WHERE e.type = 'usage';

INSERT INTO usage_rollup (bucket_ms, session_id, model, provider, profile_id,
    input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, calls, runs)
SELECT e.ts_ms - e.ts_ms % 900000, e.session_id, u.model, u.provider, u.profile_id,
    sum(COALESCE(json_extract(e.payload, '$.turn.input_tokens'), 0)),
    sum(COALESCE(json_extract(e.payload, '$.turn.output_tokens'), 0)),
    sum(COALESCE(json_extract(e.payload, '$.turn.cached_tokens'), 0)),
    sum(COALESCE(json_extract(e.payload, '$.turn.reasoning_tokens'), 0)),
    sum(COALESCE(json_extract(e.payload, '$.turn.cost_usd'), 0.0)),
    count(*),
    sum(e.id IN (SELECT min(id) FROM events WHERE type = 'usage' GROUP BY run_id))
FROM events e JOIN usage_runs u ON u.run_id = e.run_id
WHERE e.type = 'usage'
GROUP BY 1, 2, 3, 4, 5;
UPDATE usage_runs SET counted = 1 WHERE run_id IN (SELECT run_id FROM events WHERE type = 'usage');

-- +goose Down
DROP TRIGGER events_usage_insert;
DROP TRIGGER events_usage_started;
DROP TABLE usage_rollup;
DROP TABLE usage_runs;
