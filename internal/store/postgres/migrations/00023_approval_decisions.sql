-- +goose Up
-- The approval decisions log (issue 16, h16-policy), as in SQLite's
-- migration 23: an index of the approval.decided events only.
CREATE INDEX events_approval_decided ON events (id) WHERE type = 'approval.decided';

