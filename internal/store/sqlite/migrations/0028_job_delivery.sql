-- +goose Up
-- Job delivery and reliable delivery (issue 17, h17-deliver).
--
-- jobs.delivery_notify: the job's runs notify the browser when they end.
-- jobs.delivery_webhooks: a JSON array of webhook ids the job's ended runs
-- are posted to besides the webhooks that match them by their own filter;
-- deleting a webhook removes its id from every job (DeleteWebhook).
ALTER TABLE jobs ADD COLUMN delivery_notify INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN delivery_webhooks TEXT NOT NULL DEFAULT '[]';

-- delivery_cursor: the journal id up to which ended runs have been turned
-- into webhook deliveries. A watcher resumes from it, so a run that ended
-- while no process watched is still delivered; delivery ids derive from
-- webhook and run, so reading an event twice queues nothing twice. One
-- row, name 'webhooks'.
CREATE TABLE delivery_cursor (
    name     TEXT PRIMARY KEY,
    event_id INTEGER NOT NULL
);

-- +goose Down
DROP TABLE delivery_cursor;
ALTER TABLE jobs DROP COLUMN delivery_webhooks;
ALTER TABLE jobs DROP COLUMN delivery_notify;
