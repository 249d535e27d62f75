-- +goose Up
-- Usage and cost (issue 16), as in SQLite's migration 19: usage_rollup sums
-- the journal's usage events (one per model call, never a streamed
-- fragment) per run, per 15-minute bucket of UTC time and per what
-- answered (model, provider, profile), so a report over any period and any
-- time zone reads a few rows per run instead of the events. usage_runs
-- keeps what a run's newest run.started says answers it. Triggers keep
-- both in the transaction of the append, whatever path wrote it
-- (AppendEach's pipeline included). Neither follows a session's delete:
-- money spent stays spent.
CREATE TABLE usage_runs (
    run_id     TEXT COLLATE "C" PRIMARY KEY,
    model      TEXT NOT NULL,
    provider   TEXT NOT NULL,
    profile_id TEXT NOT NULL
);

CREATE TABLE usage_rollup (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id           TEXT COLLATE "C" NOT NULL,
    session_id       TEXT COLLATE "C" NOT NULL,
    bucket_ms        BIGINT NOT NULL,
    model            TEXT NOT NULL,
    provider         TEXT NOT NULL,
    profile_id       TEXT NOT NULL,
    input_tokens     BIGINT NOT NULL,
    output_tokens    BIGINT NOT NULL,
    cached_tokens    BIGINT NOT NULL,
    reasoning_tokens BIGINT NOT NULL,
    cost_usd         DOUBLE PRECISION NOT NULL,
    calls            BIGINT NOT NULL,
    -- 1 on the run's first row: a run counts once, where it first used tokens.
    first_of_run     INTEGER NOT NULL
);
CREATE UNIQUE INDEX usage_rollup_key ON usage_rollup (run_id, bucket_ms, model, provider, profile_id);
CREATE INDEX usage_rollup_by_bucket ON usage_rollup (bucket_ms);

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
    m TEXT; pv TEXT; pf TEXT;
BEGIN
    SELECT u.model, u.provider, u.profile_id INTO m, pv, pf FROM usage_runs u WHERE u.run_id = NEW.run_id;
    IF m IS NULL THEN
        SELECT r.model INTO m FROM runs r WHERE r.id = NEW.run_id;
    END IF;
    INSERT INTO usage_rollup (run_id, session_id, bucket_ms, model, provider, profile_id,
        input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, calls, first_of_run)
    VALUES (NEW.run_id, NEW.session_id, NEW.ts_ms - NEW.ts_ms % 900000,
        COALESCE(m, ''), COALESCE(pv, ''), COALESCE(pf, ''),
        COALESCE((t ->> 'input_tokens')::bigint, 0),
        COALESCE((t ->> 'output_tokens')::bigint, 0),
        COALESCE((t ->> 'cached_tokens')::bigint, 0),
        COALESCE((t ->> 'reasoning_tokens')::bigint, 0),
        COALESCE((t ->> 'cost_usd')::double precision, 0),
        1,
        CASE WHEN EXISTS (SELECT 1 FROM usage_rollup r WHERE r.run_id = NEW.run_id) THEN 0 ELSE 1 END)
    ON CONFLICT (run_id, bucket_ms, model, provider, profile_id) DO UPDATE SET
        input_tokens = usage_rollup.input_tokens + excluded.input_tokens,
        output_tokens = usage_rollup.output_tokens + excluded.output_tokens,
        cached_tokens = usage_rollup.cached_tokens + excluded.cached_tokens,
        reasoning_tokens = usage_rollup.reasoning_tokens + excluded.reasoning_tokens,
        cost_usd = usage_rollup.cost_usd + excluded.cost_usd,
        calls = usage_rollup.calls + 1;
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
-- usage events, first rows marked oldest bucket first.
INSERT INTO usage_runs (run_id, model, provider, profile_id)
SELECT e.run_id, COALESCE(e.payload::jsonb ->> 'model', ''), COALESCE(e.payload::jsonb ->> 'provider', ''),
    COALESCE(e.payload::jsonb ->> 'profile_id', '')
FROM events e
WHERE e.id IN (SELECT max(id) FROM events WHERE type = 'run.started' GROUP BY run_id);

INSERT INTO usage_rollup (run_id, session_id, bucket_ms, model, provider, profile_id,
    input_tokens, output_tokens, cached_tokens, reasoning_tokens, cost_usd, calls, first_of_run)
SELECT e.run_id, min(e.session_id), e.ts_ms - e.ts_ms % 900000,
    COALESCE(u.model, r.model, ''), COALESCE(u.provider, ''), COALESCE(u.profile_id, ''),
    sum(COALESCE((e.payload::jsonb -> 'turn' ->> 'input_tokens')::bigint, 0)),
    sum(COALESCE((e.payload::jsonb -> 'turn' ->> 'output_tokens')::bigint, 0)),
    sum(COALESCE((e.payload::jsonb -> 'turn' ->> 'cached_tokens')::bigint, 0)),
    sum(COALESCE((e.payload::jsonb -> 'turn' ->> 'reasoning_tokens')::bigint, 0)),
    sum(COALESCE((e.payload::jsonb -> 'turn' ->> 'cost_usd')::double precision, 0)),
    count(*), 0
FROM events e LEFT JOIN usage_runs u ON u.run_id = e.run_id LEFT JOIN runs r ON r.id = e.run_id
WHERE e.type = 'usage'
GROUP BY e.run_id, e.ts_ms - e.ts_ms % 900000, COALESCE(u.model, r.model, ''), COALESCE(u.provider, ''), COALESCE(u.profile_id, '')
ORDER BY 3;
UPDATE usage_rollup SET first_of_run = 1 WHERE id IN (SELECT min(id) FROM usage_rollup GROUP BY run_id);

-- +goose Down
DROP TRIGGER events_usage_insert ON events;
DROP TRIGGER events_usage_started ON events;
DROP FUNCTION events_usage_insert();
DROP FUNCTION events_usage_started();
DROP TABLE usage_rollup;
DROP TABLE usage_runs;
