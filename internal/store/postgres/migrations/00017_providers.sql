-- +goose Up
-- Providers added in the console and the console's settings (issue 16),
-- as in SQLite's migration 17.
CREATE TABLE providers (
    id             TEXT COLLATE "C" PRIMARY KEY,
    name           TEXT NOT NULL,
    name_key       TEXT COLLATE "C" NOT NULL UNIQUE,
    kind           TEXT COLLATE "C" NOT NULL,
    base_url       TEXT NOT NULL DEFAULT '',
    api_key_sealed TEXT NOT NULL DEFAULT '',
    api_key_hint   TEXT NOT NULL DEFAULT '',
    default_model  TEXT NOT NULL DEFAULT '',
    models_json    TEXT NOT NULL DEFAULT '[]',
    headers_sealed TEXT NOT NULL DEFAULT '',
    header_names   TEXT NOT NULL DEFAULT '[]',
    enabled        BOOLEAN NOT NULL DEFAULT TRUE,
    created_at_ms  BIGINT NOT NULL,
    updated_at_ms  BIGINT NOT NULL
);

CREATE TABLE settings (
    key           TEXT COLLATE "C" PRIMARY KEY,
    value_json    TEXT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);
