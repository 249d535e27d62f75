-- +goose Up
-- Session lifecycle events (issue 11): session.created, session.updated and
-- session.deleted belong to no run. They are journaled with run_id '' and a
-- gap-free seq per session, reserved from sessions.last_seq the way run
-- events reserve theirs from runs.last_seq (the UPDATE also serialises
-- appenders across processes).
ALTER TABLE sessions ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;

-- (run_id, seq) stays unique for run events; session events are unique per
-- (session_id, seq) instead, or every session's first event would collide on
-- ('', 1). Lookups by run keep using events_by_run.
DROP INDEX events_run_seq;
CREATE UNIQUE INDEX events_run_seq ON events (run_id, seq) WHERE run_id != '';
CREATE UNIQUE INDEX events_session_seq ON events (session_id, seq) WHERE run_id = '';
