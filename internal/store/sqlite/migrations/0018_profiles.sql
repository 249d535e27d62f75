-- +goose Up
-- Profiles (issue 16, h16-profiles): several agents. A deleted profile
-- keeps its row (deleted_at_ms set) so the sessions and projects naming it
-- can still show it; names are unique among live profiles regardless of
-- case (name_key = store.NameKey(name)), and at most one live profile is
-- the default. fallbacks and tools are JSON arrays of strings.
CREATE TABLE profiles (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    color         TEXT NOT NULL DEFAULT '',
    instructions  TEXT NOT NULL DEFAULT '',
    model         TEXT NOT NULL DEFAULT '',
    fallbacks     TEXT NOT NULL DEFAULT '[]',
    tools         TEXT NOT NULL DEFAULT '[]',
    approval_mode TEXT NOT NULL DEFAULT '',
    workspace     TEXT NOT NULL DEFAULT '',
    is_default    INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    deleted_at_ms INTEGER
);
CREATE UNIQUE INDEX profiles_live_name ON profiles (name_key) WHERE deleted_at_ms IS NULL;
CREATE UNIQUE INDEX profiles_default ON profiles (is_default) WHERE is_default = 1 AND deleted_at_ms IS NULL;
-- No foreign key: a profile is never removed, only marked deleted.
ALTER TABLE sessions ADD COLUMN profile_id TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN profile_id TEXT NOT NULL DEFAULT '';
