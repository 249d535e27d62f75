-- +goose Up
-- Checkpoints of a session's workspace (issue 14), as in SQLite's
-- migration 6. by_json is the actor of a person's edit or a rollback, ''
-- for the agent.
CREATE TABLE checkpoints (
    id            TEXT COLLATE "C" PRIMARY KEY,
    session_id    TEXT COLLATE "C" NOT NULL REFERENCES sessions (id),
    run_id        TEXT COLLATE "C" NOT NULL DEFAULT '',
    tool_call_id  TEXT COLLATE "C" NOT NULL DEFAULT '',
    workspace     TEXT COLLATE "C" NOT NULL,
    commit_sha    TEXT COLLATE "C" NOT NULL,
    parent_id     TEXT COLLATE "C" NOT NULL DEFAULT '',
    reason        TEXT NOT NULL DEFAULT '',
    files_changed INTEGER NOT NULL DEFAULT 0,
    lines_added   INTEGER NOT NULL DEFAULT 0,
    lines_removed INTEGER NOT NULL DEFAULT 0,
    by_json       TEXT NOT NULL DEFAULT '',
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX checkpoints_by_session ON checkpoints (session_id, created_at_ms, id);
CREATE INDEX checkpoints_by_run ON checkpoints (run_id, created_at_ms, id);
CREATE INDEX checkpoints_by_parent ON checkpoints (parent_id);
