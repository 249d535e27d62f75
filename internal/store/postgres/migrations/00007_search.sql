-- +goose Up
-- Search over every message (issue 15), as in SQLite's migration 7: one
-- row per searchable event (titles, the person's messages, complete
-- assistant answers, tool commands; never a streamed fragment), its text
-- as a tsvector under a GIN index. The 'simple' configuration (no
-- stemming, no stop words) finds what SQLite's unicode61 tokenizer finds.
-- Triggers on events keep it in the same transaction as the append and the
-- delete, whatever path wrote them (AppendEach's pipeline included).
CREATE TABLE search_docs (
    event_id   BIGINT PRIMARY KEY,
    session_id TEXT COLLATE "C" NOT NULL,
    kind       TEXT NOT NULL,
    item_id    TEXT COLLATE "C" NOT NULL, -- the transcript item the event makes (message or tool call id)
    ts_ms      BIGINT NOT NULL,
    body       TEXT NOT NULL,
    tsv        tsvector GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED
);
CREATE INDEX search_docs_tsv ON search_docs USING GIN (tsv);
CREATE INDEX search_docs_by_session ON search_docs (session_id);

-- +goose StatementBegin
CREATE FUNCTION search_body(typ TEXT, payload TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE AS $$
    SELECT COALESCE(CASE typ
        WHEN 'message.user' THEN payload::jsonb ->> 'content'
        WHEN 'message.done' THEN payload::jsonb ->> 'text'
        WHEN 'title.updated' THEN payload::jsonb ->> 'title'
        ELSE COALESCE(payload::jsonb -> 'args' ->> 'command', payload::jsonb ->> 'label')
    END, '')
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION search_item(payload TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE AS $$
    SELECT COALESCE(payload::jsonb ->> 'message_id', payload::jsonb ->> 'tool_call_id', payload::jsonb ->> 'id', '')
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION events_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_docs (event_id, session_id, kind, item_id, ts_ms, body)
    VALUES (NEW.id, NEW.session_id, NEW.type, search_item(NEW.payload), NEW.ts_ms, search_body(NEW.type, NEW.payload));
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION events_search_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM search_docs WHERE event_id = OLD.id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER events_search_insert AFTER INSERT ON events FOR EACH ROW
WHEN (NEW.type IN ('message.user', 'message.done', 'tool.started', 'title.updated'))
EXECUTE FUNCTION events_search_insert();
CREATE TRIGGER events_search_delete AFTER DELETE ON events FOR EACH ROW
WHEN (OLD.type IN ('message.user', 'message.done', 'tool.started', 'title.updated'))
EXECUTE FUNCTION events_search_delete();

-- What the journal already holds.
INSERT INTO search_docs (event_id, session_id, kind, item_id, ts_ms, body)
SELECT id, session_id, type, search_item(payload), ts_ms, search_body(type, payload) FROM events
WHERE type IN ('message.user', 'message.done', 'tool.started', 'title.updated');
