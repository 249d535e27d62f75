-- +goose Up
-- Memory (issue 16, h16-memory), as in SQLite's migration 21: an agent's notes and its profile of the
-- user, per agent profile (profile_id '' is the memory of runs with no
-- profile). One row per target holds its entries as a JSON array of
-- strings, in order; version counts the writes, so a change made from a
-- stale read is refused instead of overwriting another runner's.
CREATE TABLE memory (
    profile_id    TEXT COLLATE "C" NOT NULL,
    target        TEXT COLLATE "C" NOT NULL,
    entries       TEXT NOT NULL DEFAULT '[]',
    version       BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    PRIMARY KEY (profile_id, target)
);

-- +goose Down
DROP TABLE memory;
