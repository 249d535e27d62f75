package sqlite

// MCP servers (issue 18, h18-mcpwire).

import (
	"context"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetMCPServer(ctx context.Context, id string) (store.MCPServer, error) {
	m, err := sqlrow.ScanMCPServer(r.queryRow(ctx, `SELECT `+sqlrow.MCPServerCols+` FROM mcp_servers WHERE id = ?`, id))
	if err != nil {
		return m, notFound(err, "MCP server", id)
	}
	return m, nil
}

func (r reader) ListMCPServers(ctx context.Context) ([]store.MCPServer, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.MCPServerCols+` FROM mcp_servers ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("list MCP servers: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanMCPServer)
	if err != nil {
		return nil, fmt.Errorf("list MCP servers: %w", err)
	}
	return out, nil
}

func (t *txn) InsertMCPServer(ctx context.Context, m store.MCPServer) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO mcp_servers (`+sqlrow.MCPServerCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		m.ID, m.Name, m.Transport, m.Command, stringsJSON(m.Args), m.Dir, m.URL, sqlrow.MapJSON(m.Env), sqlrow.MapJSON(m.Headers),
		m.StartTimeout.Milliseconds(), m.CallTimeout.Milliseconds(), m.Enabled, m.Policy, sqlrow.MapJSON(m.ToolPolicies),
		ms(m.CreatedAt), ms(m.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert MCP server: %w", err)
	}
	return nil
}

func (t *txn) UpdateMCPServer(ctx context.Context, m store.MCPServer) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE mcp_servers SET name = ?, transport = ?, command = ?, args = ?, dir = ?, url = ?,
		env = ?, headers = ?, start_timeout_ms = ?, call_timeout_ms = ?, enabled = ?, policy = ?, tool_policies = ?, updated_at_ms = ?
		WHERE id = ?`,
		m.Name, m.Transport, m.Command, stringsJSON(m.Args), m.Dir, m.URL, sqlrow.MapJSON(m.Env), sqlrow.MapJSON(m.Headers),
		m.StartTimeout.Milliseconds(), m.CallTimeout.Milliseconds(), m.Enabled, m.Policy, sqlrow.MapJSON(m.ToolPolicies),
		ms(m.UpdatedAt), m.ID)
	return affectedOne(res, err, "MCP server", m.ID)
}

func (t *txn) DeleteMCPServer(ctx context.Context, id string) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM mcp_servers WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete MCP server: %w", err)
	}
	return nil
}
