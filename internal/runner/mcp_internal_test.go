package runner

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// fakeMCPTool stands for an MCP server's tool: only its name matters here.
type fakeMCPTool struct{ name string }

func (f fakeMCPTool) Spec() provider.ToolSpec      { return provider.ToolSpec{Name: f.name} }
func (f fakeMCPTool) Label(json.RawMessage) string { return f.name }
func (f fakeMCPTool) Intent(json.RawMessage) tool.Intent {
	return tool.Intent{Effect: tool.EffectExternal}
}
func (f fakeMCPTool) Run(context.Context, tool.Env, json.RawMessage) (tool.Result, error) {
	return tool.Result{}, nil
}

type fakeMCP struct {
	tools []tool.Tool
	err   error
}

func (f fakeMCP) Tools(context.Context) ([]tool.Tool, error) { return f.tools, f.err }

// A run's tools gain the MCP servers' (a server that failed is left out,
// the others stay; a name a built-in has cannot shadow it); a profile
// narrows them by tool name or by server (mcp__<server>).
func TestMCPToolsAndProfiles(t *testing.T) {
	builtin := tool.NewRegistry(tool.NewGrep(tool.Config{}), tool.NewUpdateGoal())
	mcpTools := []tool.Tool{fakeMCPTool{"mcp__git__status"}, fakeMCPTool{"mcp__git__log"}, fakeMCPTool{"mcp__docs__search"}, fakeMCPTool{"grep"}}
	r := &Runner{cfg: Config{MCP: fakeMCP{tools: mcpTools, err: errors.New("server x: down")}}, log: slog.New(slog.DiscardHandler)}
	all := r.withMCP(t.Context(), builtin)
	if got := all.Names(); !slices.Equal(got, []string{"grep", "mcp__docs__search", "mcp__git__log", "mcp__git__status", tool.NameUpdateGoal}) {
		t.Fatalf("tools = %v", got)
	}
	if tl, _ := all.Get("grep"); tl.Spec().Description == "" {
		t.Error("an MCP tool named grep shadowed the built-in")
	}
	for _, tc := range []struct {
		list []string
		want []string
	}{
		{nil, all.Names()},
		{[]string{"grep", "mcp__git"}, []string{"grep", "mcp__git__log", "mcp__git__status", tool.NameUpdateGoal}},
		{[]string{"mcp__docs__search"}, []string{"mcp__docs__search", tool.NameUpdateGoal}},
		{[]string{"grep"}, []string{"grep", tool.NameUpdateGoal}},
	} {
		if got := profileTools(all, store.Profile{Tools: tc.list}, true).Names(); !slices.Equal(got, tc.want) {
			t.Errorf("profile tools %v: %v, want %v", tc.list, got, tc.want)
		}
	}
	if got := (&Runner{log: slog.New(slog.DiscardHandler)}).withMCP(t.Context(), builtin); got != builtin {
		t.Error("without MCP the registry changed")
	}
}
