-- +goose Up
-- MCP servers (issue 18, h18-mcpwire), as in SQLite's migration 29.
CREATE TABLE mcp_servers (
    id               TEXT COLLATE "C" PRIMARY KEY,
    name             TEXT COLLATE "C" NOT NULL,
    transport        TEXT NOT NULL,
    command          TEXT NOT NULL DEFAULT '',
    args             TEXT NOT NULL DEFAULT '[]',
    dir              TEXT NOT NULL DEFAULT '',
    url              TEXT NOT NULL DEFAULT '',
    env              TEXT NOT NULL DEFAULT '{}',
    headers          TEXT NOT NULL DEFAULT '{}',
    start_timeout_ms BIGINT NOT NULL DEFAULT 0,
    call_timeout_ms  BIGINT NOT NULL DEFAULT 0,
    enabled          BOOLEAN NOT NULL DEFAULT TRUE,
    policy           TEXT NOT NULL DEFAULT '',
    tool_policies    TEXT NOT NULL DEFAULT '{}',
    created_at_ms    BIGINT NOT NULL,
    updated_at_ms    BIGINT NOT NULL
);
CREATE UNIQUE INDEX mcp_servers_name ON mcp_servers (name);

-- +goose Down
DROP TABLE mcp_servers;
