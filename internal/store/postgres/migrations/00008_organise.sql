-- +goose Up
-- Organising sessions (issue 15), as in SQLite's migration 8: pins,
-- archive, projects. name_key = store.NameKey(name) keeps names unique
-- regardless of case.
CREATE TABLE projects (
    id            TEXT COLLATE "C" PRIMARY KEY,
    name          TEXT NOT NULL,
    name_key      TEXT COLLATE "C" NOT NULL UNIQUE,
    workspace     TEXT NOT NULL DEFAULT '',
    model         TEXT NOT NULL DEFAULT '',
    instructions  TEXT NOT NULL DEFAULT '',
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);
ALTER TABLE sessions ADD COLUMN pinned BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE sessions ADD COLUMN archived_at_ms BIGINT;
ALTER TABLE sessions ADD COLUMN project_id TEXT COLLATE "C" REFERENCES projects (id) ON DELETE SET NULL;
CREATE INDEX sessions_list ON sessions (pinned DESC, updated_at_ms DESC, id DESC) WHERE archived_at_ms IS NULL;
CREATE INDEX sessions_list_archived ON sessions (pinned DESC, updated_at_ms DESC, id DESC) WHERE archived_at_ms IS NOT NULL;
CREATE INDEX sessions_by_project ON sessions (project_id, pinned DESC, updated_at_ms DESC, id DESC) WHERE archived_at_ms IS NULL;
