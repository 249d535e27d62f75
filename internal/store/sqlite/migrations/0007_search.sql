-- +goose Up
-- Search over every message (issue 15). search_fts holds the text of the
-- events a person searches (titles, the person's messages, complete
-- assistant answers, tool commands; never a streamed fragment), one row
-- per event with the event's id as rowid; search_docs says whose it is, so
-- that filters and a session's delete need no scan of the full-text table.
-- Triggers on events keep both in the same transaction as the append and
-- the delete, whatever path wrote them.
CREATE VIRTUAL TABLE search_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
CREATE TABLE search_docs (
    event_id   INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    kind       TEXT NOT NULL,
    item_id    TEXT NOT NULL, -- the transcript item the event makes (message or tool call id)
    ts_ms      INTEGER NOT NULL
);
CREATE INDEX search_docs_by_session ON search_docs (session_id);

-- +goose StatementBegin
CREATE TRIGGER events_search_insert AFTER INSERT ON events
WHEN NEW.type IN ('message.user', 'message.done', 'tool.started', 'title.updated')
BEGIN
    INSERT INTO search_fts (rowid, body) VALUES (NEW.id, CASE NEW.type
        WHEN 'message.user' THEN COALESCE(json_extract(NEW.payload, '$.content'), '')
        WHEN 'message.done' THEN COALESCE(json_extract(NEW.payload, '$.text'), '')
        WHEN 'title.updated' THEN COALESCE(json_extract(NEW.payload, '$.title'), '')
        ELSE COALESCE(json_extract(NEW.payload, '$.args.command'), json_extract(NEW.payload, '$.label'), '')
    END);
    INSERT INTO search_docs (event_id, session_id, kind, item_id, ts_ms) VALUES (NEW.id, NEW.session_id, NEW.type,
        COALESCE(json_extract(NEW.payload, '$.message_id'), json_extract(NEW.payload, '$.tool_call_id'), json_extract(NEW.payload, '$.id'), ''),
        NEW.ts_ms);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER events_search_delete AFTER DELETE ON events
WHEN OLD.type IN ('message.user', 'message.done', 'tool.started', 'title.updated')
BEGIN
    DELETE FROM search_fts WHERE rowid = OLD.id;
    DELETE FROM search_docs WHERE event_id = OLD.id;
END;
-- +goose StatementEnd

-- What the journal already holds.
INSERT INTO search_fts (rowid, body)
SELECT id, CASE type
        WHEN 'message.user' THEN COALESCE(json_extract(payload, '$.content'), '')
        WHEN 'message.done' THEN COALESCE(json_extract(payload, '$.text'), '')
        WHEN 'title.updated' THEN COALESCE(json_extract(payload, '$.title'), '')
        ELSE COALESCE(json_extract(payload, '$.args.command'), json_extract(payload, '$.label'), '')
    END
FROM events WHERE type IN ('message.user', 'message.done', 'tool.started', 'title.updated');
INSERT INTO search_docs (event_id, session_id, kind, item_id, ts_ms)
SELECT id, session_id, type,
    COALESCE(json_extract(payload, '$.message_id'), json_extract(payload, '$.tool_call_id'), json_extract(payload, '$.id'), ''),
    ts_ms FROM events
WHERE type IN ('message.user', 'message.done', 'tool.started', 'title.updated');

-- +goose Down
DROP TRIGGER events_search_delete;
DROP TRIGGER events_search_insert;
DROP TABLE search_docs;
DROP TABLE search_fts;
