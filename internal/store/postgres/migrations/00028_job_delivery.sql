-- +goose Up
-- Job delivery and reliable delivery (issue 17, h17-deliver), as in
-- SQLite's migration 28.
ALTER TABLE jobs ADD COLUMN delivery_notify BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE jobs ADD COLUMN delivery_webhooks TEXT NOT NULL DEFAULT '[]';

CREATE TABLE delivery_cursor (
    name     TEXT COLLATE "C" PRIMARY KEY,
    event_id BIGINT NOT NULL
);

-- +goose Down
DROP TABLE delivery_cursor;
ALTER TABLE jobs DROP COLUMN delivery_webhooks;
ALTER TABLE jobs DROP COLUMN delivery_notify;
