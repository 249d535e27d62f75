-- +goose Up
-- Session lineage (issue 15, branch), as in SQLite's migration 10.
ALTER TABLE sessions ADD COLUMN parent_session_id TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN branched_from_event_id BIGINT NOT NULL DEFAULT 0;
CREATE INDEX sessions_by_parent ON sessions (parent_session_id) WHERE parent_session_id != '';
