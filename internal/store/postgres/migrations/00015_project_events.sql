-- +goose Up
-- Project events (issue 15), as in SQLite's migration 15: a gap-free seq
-- per project for project.created/updated/deleted, which are journaled
-- with run_id '' and the project's id in session_id.
ALTER TABLE projects ADD COLUMN last_seq BIGINT NOT NULL DEFAULT 0;

