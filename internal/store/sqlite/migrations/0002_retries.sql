-- +goose Up
-- Automatic retries (issue 5): each run carries its own retry policy, set
-- when it is queued, so every runner and web process applies the same one.
ALTER TABLE runs ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN max_retries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN retry_backoff_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN retry_at_ms INTEGER NOT NULL DEFAULT 0;
