package postgres

// MCP servers (issue 18, h18-mcpwire).

import (
	"context"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetMCPServer(ctx context.Context, id string) (store.MCPServer, error) {
	m, err := sqlrow.ScanMCPServer(r.q.QueryRow(ctx, `SELECT `+sqlrow.MCPServerCols+` FROM mcp_servers WHERE id = $1`, id))
	if err != nil {
		return m, notFound(err, "MCP server", id)
	}
	return m, nil
}

func (r reader) ListMCPServers(ctx context.Context) ([]store.MCPServer, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.MCPServerCols+` FROM mcp_servers ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("list MCP servers: %w", err)
	}
	defer rows.Close()
	var out []store.MCPServer
	for rows.Next() {
		m, err := sqlrow.ScanMCPServer(rows)
		if err != nil {
			return nil, fmt.Errorf("list MCP servers: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func (t *txn) InsertMCPServer(ctx context.Context, m store.MCPServer) error {
	_, err := t.c.Exec(ctx, `INSERT INTO mcp_servers (`+sqlrow.MCPServerCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)`,
		m.ID, m.Name, m.Transport, m.Command, stringsJSON(m.Args), m.Dir, m.URL, sqlrow.MapJSON(m.Env), sqlrow.MapJSON(m.Headers),
		m.StartTimeout.Milliseconds(), m.CallTimeout.Milliseconds(), m.Enabled, m.Policy, sqlrow.MapJSON(m.ToolPolicies),
		ms(m.CreatedAt), ms(m.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert MCP server: %w", err)
	}
	return nil
}

func (t *txn) UpdateMCPServer(ctx context.Context, m store.MCPServer) error {
	res, err := t.c.Exec(ctx, `UPDATE mcp_servers SET name = $1, transport = $2, command = $3, args = $4, dir = $5, url = $6,
		env = $7, headers = $8, start_timeout_ms = $9, call_timeout_ms = $10, enabled = $11, policy = $12, tool_policies = $13,
		updated_at_ms = $14 WHERE id = $15`,
		m.Name, m.Transport, m.Command, stringsJSON(m.Args), m.Dir, m.URL, sqlrow.MapJSON(m.Env), sqlrow.MapJSON(m.Headers),
		m.StartTimeout.Milliseconds(), m.CallTimeout.Milliseconds(), m.Enabled, m.Policy, sqlrow.MapJSON(m.ToolPolicies),
		ms(m.UpdatedAt), m.ID)
	return affectedOne(res, err, "MCP server", m.ID)
}

func (t *txn) DeleteMCPServer(ctx context.Context, id string) error {
	if _, err := t.c.Exec(ctx, `DELETE FROM mcp_servers WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete MCP server: %w", err)
	}
	return nil
}
