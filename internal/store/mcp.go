package store

// MCP servers (issue 18, h18-mcpwire): the Model Context Protocol servers
// whose tools runs are offered, configured in Settings.

import "time"

// MCPServer is one configured MCP server. Env and Headers map a name to
// its value sealed with the server's secretbox key (context
// "mcp:<id>:env:<name>" or "mcp:<id>:header:<name>"): the names are shown,
// the values only masked.
type MCPServer struct {
	ID, Name  string
	Transport string // "stdio" or "http"
	// Command, Args and Dir describe a stdio server, URL an HTTP one.
	Command string
	Args    []string
	Dir     string
	URL     string
	Env     map[string]string // name -> sealed value
	Headers map[string]string // name -> sealed value
	// StartTimeout and CallTimeout: 0 is the mcp package's default.
	StartTimeout, CallTimeout time.Duration
	Enabled                   bool
	// Policy is the verdict for the server's tools: "allow", "ask" or
	// "deny" ("" = ask); ToolPolicies overrides it per tool (the server's
	// own tool name).
	Policy       string
	ToolPolicies map[string]string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}
