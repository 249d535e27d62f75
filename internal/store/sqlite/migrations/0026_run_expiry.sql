-- +goose Up
-- Run expiry (issue 17, h17-expiry): the deadline by which a run must have
-- ended (0: none). A run past it is never claimed and ends expired.
ALTER TABLE runs ADD COLUMN expires_at_ms INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE runs DROP COLUMN expires_at_ms;
