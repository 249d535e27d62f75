-- +goose Up
-- Profiles (issue 16, h16-profiles), as in SQLite's migration 18. A
-- deleted profile keeps its row (deleted_at_ms set); names are unique
-- among live profiles regardless of case, and at most one live profile is
-- the default. fallbacks and tools are JSON arrays of strings.
CREATE TABLE profiles (
    id            TEXT COLLATE "C" PRIMARY KEY,
    name          TEXT NOT NULL,
    name_key      TEXT COLLATE "C" NOT NULL,
    color         TEXT NOT NULL DEFAULT '',
    instructions  TEXT NOT NULL DEFAULT '',
    model         TEXT NOT NULL DEFAULT '',
    fallbacks     TEXT NOT NULL DEFAULT '[]',
    tools         TEXT NOT NULL DEFAULT '[]',
    approval_mode TEXT NOT NULL DEFAULT '',
    workspace     TEXT NOT NULL DEFAULT '',
    is_default    BOOLEAN NOT NULL DEFAULT false,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    deleted_at_ms BIGINT
);
CREATE UNIQUE INDEX profiles_live_name ON profiles (name_key) WHERE deleted_at_ms IS NULL;
CREATE UNIQUE INDEX profiles_default ON profiles (is_default) WHERE is_default AND deleted_at_ms IS NULL;
ALTER TABLE sessions ADD COLUMN profile_id TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN profile_id TEXT COLLATE "C" NOT NULL DEFAULT '';
