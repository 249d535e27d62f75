-- +goose Up
-- The approval decisions log (issue 16, h16-policy), as in SQLite's
-- migration 23: an index of the approval.decided events only.
CREATE INDEX events_approval_decided ON events (id) WHERE type = 'approval.decided';

-- Where a rule came from: the person who answered "session" or "always"
-- or who created it (an event.Actor as JSON, '' when not recorded) and
-- the request it answered ('' for one created through the API).
ALTER TABLE approval_rules ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE approval_rules ADD COLUMN request_id TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE approval_rules DROP COLUMN request_id;
ALTER TABLE approval_rules DROP COLUMN created_by;
DROP INDEX events_approval_decided;
