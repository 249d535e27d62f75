package mcpconf_test

import (
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/mcp"
	"github.com/caduceus-dev/caduceus/internal/mcpconf"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// BenchmarkRunTools is what a run pays to get its tools: the built-in
// registry alone (baseline) against the same plus a ready MCP server's
// three tools (Service.Tools and Registry.With). The server is started
// before the timer: a run after the first finds it running.
func BenchmarkRunTools(b *testing.B) {
	ctx := b.Context()
	url := startPeer(b)
	st, _ := storetest.SQLite(b)
	box, err := secretbox.New([]byte(strings.Repeat("k", 32)))
	if err != nil {
		b.Fatal(err)
	}
	m, err := mcp.NewManager(mcp.Options{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Close() })
	svc := mcpconf.New(st, m, func(bool) (*secretbox.Box, error) { return box, nil }, nil, nil)
	sealed, err := svc.Seal("mcp-a", "header", map[string]string{"Authorization": token})
	if err != nil {
		b.Fatal(err)
	}
	row := store.MCPServer{ID: "mcp-a", Name: "peer", Transport: "http", URL: url, Headers: sealed, Enabled: true,
		CreatedAt: time.UnixMilli(1), UpdatedAt: time.UnixMilli(1)}
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.InsertMCPServer(ctx, row) }); err != nil {
		b.Fatal(err)
	}
	if err := svc.Reload(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Tools(ctx); err != nil {
		b.Fatal(err)
	}
	builtin := tool.Builtin(tool.Config{})
	b.Run("builtin", func(b *testing.B) {
		for b.Loop() {
			_ = builtin.Without(tool.NameUpdateGoal)
		}
	})
	b.Run("builtin+mcp", func(b *testing.B) {
		for b.Loop() {
			extra, err := svc.Tools(ctx)
			if err != nil || len(extra) != 3 {
				b.Fatalf("%d tools, %v", len(extra), err)
			}
			_ = builtin.Without(tool.NameUpdateGoal).With(extra...)
		}
	})
}
