-- +goose Up
-- Session lineage (issue 15, branch). A branch references its parent's
-- journal up to an event instead of copying it: branching stays one row
-- whatever the parent's length. '' / 0 for a session that was not branched.
ALTER TABLE sessions ADD COLUMN parent_session_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN branched_from_event_id INTEGER NOT NULL DEFAULT 0;
CREATE INDEX sessions_by_parent ON sessions (parent_session_id) WHERE parent_session_id != '';
