-- +goose Up
-- Reserved for issue 15's search (branch h-search), which owns migration 7;
-- this placeholder keeps the versions gap-free on the organise branch
-- (h-organise, migration 8) and is dropped when the two are merged.
SELECT 1;
