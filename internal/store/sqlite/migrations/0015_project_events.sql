-- +goose Up
-- Project events (issue 15): project.created, project.updated and
-- project.deleted belong to no session and no run. They are journaled with
-- run_id '' and the project's id in session_id, with a gap-free seq per
-- project reserved from projects.last_seq, as session events reserve
-- theirs from sessions.last_seq (events_session_seq keeps it unique).
ALTER TABLE projects ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;

