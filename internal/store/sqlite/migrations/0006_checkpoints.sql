-- +goose Up
-- Checkpoints of a session's workspace (issue 14). The files live in a
-- shadow git repository (internal/checkpoint); a row says whose checkpoint
-- it is and what changed since the workspace's previous one. by_json is
-- the actor of a person's edit or a rollback, '' for the agent.
CREATE TABLE checkpoints (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    run_id        TEXT NOT NULL DEFAULT '',
    tool_call_id  TEXT NOT NULL DEFAULT '',
    workspace     TEXT NOT NULL,
    commit_sha    TEXT NOT NULL,
    parent_id     TEXT NOT NULL DEFAULT '',
    reason        TEXT NOT NULL DEFAULT '',
    files_changed INTEGER NOT NULL DEFAULT 0,
    lines_added   INTEGER NOT NULL DEFAULT 0,
    lines_removed INTEGER NOT NULL DEFAULT 0,
    by_json       TEXT NOT NULL DEFAULT '',
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX checkpoints_by_session ON checkpoints (session_id, created_at_ms, id);
CREATE INDEX checkpoints_by_run ON checkpoints (run_id, created_at_ms, id);
CREATE INDEX checkpoints_by_parent ON checkpoints (parent_id);
