-- +goose Up
-- Subagents (issue 18, h18-delegate): a session made by the delegate tool
-- names the session, run and tool call that delegated to it, so the
-- session list can tell children, a child's request can name its parent,
-- and a delegate call run again after a handover finds the children it
-- already made instead of making new ones. '' for every other session.
ALTER TABLE sessions ADD COLUMN delegated_session_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN delegated_run_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN delegated_call_id TEXT NOT NULL DEFAULT '';
CREATE INDEX sessions_delegated_run ON sessions (delegated_run_id) WHERE delegated_run_id <> '';

-- +goose Down
DROP INDEX sessions_delegated_run;
ALTER TABLE sessions DROP COLUMN delegated_call_id;
ALTER TABLE sessions DROP COLUMN delegated_run_id;
ALTER TABLE sessions DROP COLUMN delegated_session_id;
