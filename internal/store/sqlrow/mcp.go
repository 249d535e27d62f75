package sqlrow

// MCP servers (issue 18, h18-mcpwire).

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// MCPServerCols are the columns ScanMCPServer reads, in its order.
const MCPServerCols = `id, name, transport, command, args, dir, url, env, headers, start_timeout_ms, call_timeout_ms,
	enabled, policy, tool_policies, created_at_ms, updated_at_ms`

// ScanMCPServer reads one row of MCPServerCols.
func ScanMCPServer(s Scanner) (store.MCPServer, error) {
	var m store.MCPServer
	var args, env, headers, tools string
	var start, call, c, u int64
	if err := s.Scan(&m.ID, &m.Name, &m.Transport, &m.Command, &args, &m.Dir, &m.URL, &env, &headers, &start, &call,
		&m.Enabled, &m.Policy, &tools, &c, &u); err != nil {
		return m, err
	}
	var err error
	if m.Args, err = StringList(args); err != nil {
		return m, fmt.Errorf("MCP server %q args: %w", m.ID, err)
	}
	for _, f := range []struct {
		what string
		raw  string
		into *map[string]string
	}{{"env", env, &m.Env}, {"headers", headers, &m.Headers}, {"tool_policies", tools, &m.ToolPolicies}} {
		if *f.into, err = StringMap(f.raw); err != nil {
			return m, fmt.Errorf("MCP server %q %s: %w", m.ID, f.what, err)
		}
	}
	m.StartTimeout, m.CallTimeout = time.Duration(start)*time.Millisecond, time.Duration(call)*time.Millisecond
	m.CreatedAt, m.UpdatedAt = fromMS(c), fromMS(u)
	return m, nil
}

// StringMap reads a JSON object of strings; an empty one is nil, so that
// a row read back equals the value written with a nil map.
func StringMap(s string) (map[string]string, error) {
	var out map[string]string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// MapJSON is m as a JSON object ("{}" for none).
func MapJSON(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(m) // a map of strings always marshals
	return string(b)
}
