-- +goose Up
-- The approval decisions log (issue 16, h16-policy) reads approval.decided
-- events newest first across every session; this index holds only them.
CREATE INDEX events_approval_decided ON events (id) WHERE type = 'approval.decided';

-- Where a rule came from: the person who answered "session" or "always"
-- or who created it (an event.Actor as JSON, '' when not recorded) and
-- the request it answered ('' for one created through the API).
ALTER TABLE approval_rules ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE approval_rules ADD COLUMN request_id TEXT NOT NULL DEFAULT '';
