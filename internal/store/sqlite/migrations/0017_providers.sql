-- +goose Up
-- Providers added in the console and the console's settings (issue 16).
-- api_key_sealed is sealed by internal/secretbox under a key kept outside
-- the database; api_key_hint is its masked form, for lists. models_json is
-- a JSON array ('[]': ask the server). Extra HTTP headers may carry
-- credentials too: their values are sealed as one JSON object
-- (headers_sealed), their names kept apart (header_names, a JSON array)
-- for display.
CREATE TABLE providers (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    name_key       TEXT NOT NULL UNIQUE,
    kind           TEXT NOT NULL,
    base_url       TEXT NOT NULL DEFAULT '',
    api_key_sealed TEXT NOT NULL DEFAULT '',
    api_key_hint   TEXT NOT NULL DEFAULT '',
    default_model  TEXT NOT NULL DEFAULT '',
    models_json    TEXT NOT NULL DEFAULT '[]',
    headers_sealed TEXT NOT NULL DEFAULT '',
    header_names   TEXT NOT NULL DEFAULT '[]',
    enabled        INTEGER NOT NULL DEFAULT 1,
    created_at_ms  INTEGER NOT NULL,
    updated_at_ms  INTEGER NOT NULL
);

CREATE TABLE settings (
    key           TEXT PRIMARY KEY,
    value_json    TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL
);
