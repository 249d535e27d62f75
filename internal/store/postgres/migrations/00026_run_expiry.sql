-- +goose Up
-- Run expiry (issue 17, h17-expiry), as in SQLite's migration 26.
ALTER TABLE runs ADD COLUMN expires_at_ms BIGINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN expires_at_ms;
