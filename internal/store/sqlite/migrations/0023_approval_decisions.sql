-- +goose Up
-- The approval decisions log (issue 16, h16-policy) reads approval.decided
-- events newest first across every session; this index holds only them.
CREATE INDEX events_approval_decided ON events (id) WHERE type = 'approval.decided';

