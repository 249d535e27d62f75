-- +goose Up
-- Organising sessions (issue 15): pins, archive, projects. A project's
-- name is unique regardless of case (name_key = store.NameKey(name)).
-- archived_at_ms and project_id are NULL when unset.
CREATE TABLE projects (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    name_key      TEXT NOT NULL UNIQUE,
    workspace     TEXT NOT NULL DEFAULT '',
    model         TEXT NOT NULL DEFAULT '',
    instructions  TEXT NOT NULL DEFAULT '',
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);
ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN archived_at_ms INTEGER;
ALTER TABLE sessions ADD COLUMN project_id TEXT REFERENCES projects (id) ON DELETE SET NULL;
-- The sidebar's first page reads the head of one of these, however many
-- sessions there are: unarchived (the default list), archived, and per
-- project.
CREATE INDEX sessions_list ON sessions (pinned DESC, updated_at_ms DESC, id DESC) WHERE archived_at_ms IS NULL;
CREATE INDEX sessions_list_archived ON sessions (pinned DESC, updated_at_ms DESC, id DESC) WHERE archived_at_ms IS NOT NULL;
CREATE INDEX sessions_by_project ON sessions (project_id, pinned DESC, updated_at_ms DESC, id DESC) WHERE archived_at_ms IS NULL;
