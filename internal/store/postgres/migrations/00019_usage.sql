-- +goose Up
-- Usage and cost (issue 16), as in SQLite's migration 19: usage_rollup sums
-- the journal's usage events (one per model call, never a streamed
-- fragment) per 15-minute bucket of UTC time, session and what answered
-- (model, provider, profile), so a report over any period and any time
-- zone reads a few rows per session and quarter hour instead of the
-- events. usage_runs keeps, per run, what its newest run.started says
-- answers it and whether the run was counted yet (a run counts once, in
-- the row of its first model call). Triggers keep both in the transaction
-- of the append, whatever path wrote it (AppendEach's pipeline included).
-- Neither follows a session's delete: money spent stays spent.
CREATE TABLE usage_runs (
    run_id     TEXT COLLATE "C" PRIMARY KEY,
    model      TEXT NOT NULL,
    provider   TEXT NOT NULL,
    profile_id TEXT NOT NULL,
    counted    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE usage_rollup (
    bucket_ms        BIGINT NOT NULL,
    session_id       TEXT COLLATE "C" NOT NULL,
    model            TEXT NOT NULL,
    provider         TEXT NOT NULL,
    profile_id       TEXT NOT NULL,
    input_tokens     BIGINT NOT NULL,
    output_tokens    BIGINT NOT NULL,
    cached_tokens    BIGINT NOT NULL,
    reasoning_tokens BIGINT NOT NULL,
    cost_usd         DOUBLE PRECISION NOT NULL,
    calls            BIGINT NOT NULL,
    runs             BIGINT NOT NULL,
    PRIMARY KEY (bucket_ms, session_id, model, provider, profile_id)
);

-- +goose StatementBegin
CREATE FUNCTION events_usage_started() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE p jsonb := NEW.payload::jsonb;
BEGIN
    INSERT INTO usage_runs (run_id, model, provider, profile_id)
    VALUES (NEW.run_id, COALESCE(p ->> 'model', ''), COALESCE(p ->> 'provider', ''), COALESCE(p ->> 'profile_id', ''))
    ON CONFLICT (run_id) DO UPDATE SET model = excluded.model, provider = excluded.provider, profile_id = excluded.profile_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION events_usage_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    t jsonb := NEW.payload::jsonb -> 'turn';
    u usage_runs%ROWTYPE;
BEGIN
    -- A run whose start was never journaled: the model it was queued with.
    INSERT INTO usage_runs (run_id, model, provider, profile_id)
    VALUES (NEW.run_id, COALESCE((SELECT model FROM runs WHERE id = NEW.run_id), ''), '', '')
    ON CONFLICT (run_id) DO NOTHING;
    SELECT * INTO u FROM usage_runs WHERE run_id = NEW.run_id;
    INSERT INTO usage_rollup (bucket_ms, session_id, model, provider, profile_id,
        input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, calls, runs)
    VALUES (NEW.ts_ms - NEW.ts_ms % 900000, NEW.session_id, u.model, u.provider, u.profile_id,
        COALESCE((t ->> 'input_tokens')::bigint, 0),
        COALESCE((t ->> 'output_tokens')::bigint, 0),
        COALESCE((t ->> 'cached_tokens')::bigint, 0),
        COALESCE((t ->> 'reasoning_tokens')::bigint, 0),
        COALESCE((t ->> 'cost_usd')::double precision, 0),
        1, 1 - u.counted)
    ON CONFLICT (bucket_ms, session_id, model, provider, profile_id) DO UPDATE SET
        input_tokens = usage_rollup.input_tokens + excluded.input_tokens,
        output_tokens = usage_rollup.output_tokens + excluded.output_tokens,
        cached_tokens = usage_rollup.cached_tokens + excluded.cached_tokens,
        reasoning_tokens = usage_rollup.reasoning_tokens + excluded.reasoning_tokens,
        cost_usd = usage_rollup.cost_usd + excluded.cost_usd,
        calls = usage_rollup.calls + 1,
        runs = usage_rollup.runs + excluded.runs;
    IF u.counted = 0 THEN
        UPDATE usage_runs SET counted = 1 WHERE run_id = NEW.run_id;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER events_usage_started AFTER INSERT ON events FOR EACH ROW
WHEN (NEW.type = 'run.started')
EXECUTE FUNCTION events_usage_started();
CREATE TRIGGER events_usage_insert AFTER INSERT ON events FOR EACH ROW
WHEN (NEW.type = 'usage')
EXECUTE FUNCTION events_usage_insert();

-- What the journal already holds: each run's newest run.started, then its
-- usage events, each run counted in the bucket of its first.
INSERT INTO usage_runs (run_id, model, provider, profile_id, counted)
SELECT e.run_id, COALESCE(e.payload::jsonb ->> 'model', ''), COALESCE(e.payload::jsonb ->> 'provider', ''),
    COALESCE(e.payload::jsonb ->> 'profile_id', ''), 0
FROM events e
WHERE e.id IN (SELECT max(id) FROM events WHERE type = 'run.started' GROUP BY run_id);
INSERT INTO usage_runs (run_id, model, provider, profile_id, counted)
SELECT DISTINCT e.run_id, COALESCE(r.model, ''), '', '', 0
FROM events e LEFT JOIN runs r ON r.id = e.run_id WHERE e.type = 'usage'
ON CONFLICT (run_id) DO NOTHING;

INSERT INTO usage_rollup (bucket_ms, session_id, model, provider, profile_id,
    input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, calls, runs)
SELECT e.ts_ms - e.ts_ms % 900000, e.session_id, u.model, u.provider, u.profile_id,
    sum(COALESCE((e.payload::jsonb -> 'turn' ->> 'input_tokens')::bigint, 0)),
    sum(COALESCE((e.payload::jsonb -> 'turn' ->> 'output_tokens')::bigint, 0)),
    sum(COALESCE((e.payload::jsonb -> 'turn' ->> 'cached_tokens')::bigint, 0)),
    sum(COALESCE((e.payload::jsonb -> 'turn' ->> 'reasoning_tokens')::bigint, 0)),
    sum(COALESCE((e.payload::jsonb -> 'turn' ->> 'cost_usd')::double precision, 0)),
    count(*),
    count(*) FILTER (WHERE e.id IN (SELECT min(id) FROM events WHERE type = 'usage' GROUP BY run_id))
FROM events e JOIN usage_runs u ON u.run_id = e.run_id
WHERE e.type = 'usage'
GROUP BY 1, 2, 3, 4, 5;
UPDATE usage_runs SET counted = 1 WHERE run_id IN (SELECT run_id FROM events WHERE type = 'usage');

-- +goose Down
DROP TRIGGER events_usage_insert ON events;
DROP TRIGGER events_usage_started ON events;
DROP FUNCTION events_usage_insert();
DROP FUNCTION events_usage_started();
DROP TABLE usage_rollup;
DROP TABLE usage_runs;
