-- +goose Up
-- MCP servers (issue 18, h18-mcpwire): the Model Context Protocol servers
-- whose tools runs are offered. args is a JSON array; env and headers are
-- JSON objects of name -> value sealed with the server's secretbox key;
-- policy is allow, ask or deny ('' = ask) and tool_policies a JSON object
-- of tool name -> verdict overriding it.
CREATE TABLE mcp_servers (
    id               TEXT PRIMARY KEY,
    name             TEXT NOT NULL,
    transport        TEXT NOT NULL,
    command          TEXT NOT NULL DEFAULT '',
    args             TEXT NOT NULL DEFAULT '[]',
    dir              TEXT NOT NULL DEFAULT '',
    url              TEXT NOT NULL DEFAULT '',
    env              TEXT NOT NULL DEFAULT '{}',
    headers          TEXT NOT NULL DEFAULT '{}',
    start_timeout_ms INTEGER NOT NULL DEFAULT 0,
    call_timeout_ms  INTEGER NOT NULL DEFAULT 0,
    enabled          INTEGER NOT NULL DEFAULT 1,
    policy           TEXT NOT NULL DEFAULT '',
    tool_policies    TEXT NOT NULL DEFAULT '{}',
    created_at_ms    INTEGER NOT NULL,
    updated_at_ms    INTEGER NOT NULL
);
CREATE UNIQUE INDEX mcp_servers_name ON mcp_servers (name);

-- +goose Down
DROP TABLE mcp_servers;
