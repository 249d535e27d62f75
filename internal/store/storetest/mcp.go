package storetest

// MCP servers (issue 18, h18-mcpwire).

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testMCPServers(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if _, err := db.GetMCPServer(ctx, "mcp-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetMCPServer before any: %v, want not found", err)
	}
	if all, err := db.ListMCPServers(ctx); err != nil || len(all) != 0 {
		t.Fatalf("ListMCPServers before any = %+v, %v", all, err)
	}
	b := store.MCPServer{ID: "mcp-b", Name: "everything", Transport: "stdio", Command: "npx", Args: []string{"-y", "server-everything"},
		Dir: "/tmp", Env: map[string]string{"API_KEY": "sealed-1"}, StartTimeout: 5 * time.Second, CallTimeout: 90 * time.Second,
		Enabled: true, Policy: "ask", ToolPolicies: map[string]string{"echo": "allow", "get-env": "deny"},
		CreatedAt: at(1), UpdatedAt: at(1)}
	a := store.MCPServer{ID: "mcp-a", Name: "docs", Transport: "http", URL: "https://mcp.example.test/mcp",
		Headers: map[string]string{"Authorization": "sealed-2"}, CreatedAt: at(2), UpdatedAt: at(2)}
	for _, m := range []store.MCPServer{b, a} {
		write(t, db, func(tx store.Tx) error { return tx.InsertMCPServer(ctx, m) })
	}
	if got, err := db.GetMCPServer(ctx, "mcp-b"); err != nil || !reflect.DeepEqual(got, b) {
		t.Fatalf("GetMCPServer = %+v, %v; want %+v", got, err, b)
	}
	all, err := db.ListMCPServers(ctx)
	if err != nil || len(all) != 2 || !reflect.DeepEqual(all[0], a) || all[1].ID != "mcp-b" {
		t.Fatalf("ListMCPServers = %+v, %v; want docs, everything", all, err)
	}
	dup := a
	dup.ID = "mcp-c"
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.InsertMCPServer(ctx, dup) }); err == nil {
		t.Fatal("a second server named docs was inserted")
	}

	b2 := b
	b2.Name, b2.Args, b2.Env, b2.ToolPolicies, b2.Enabled, b2.Policy = "every", nil, nil, nil, false, "deny"
	b2.UpdatedAt, b2.CreatedAt = at(5), at(99) // CreatedAt is kept
	write(t, db, func(tx store.Tx) error { return tx.UpdateMCPServer(ctx, b2) })
	b2.CreatedAt = b.CreatedAt
	if got, err := db.GetMCPServer(ctx, "mcp-b"); err != nil || !reflect.DeepEqual(got, b2) {
		t.Fatalf("GetMCPServer after update = %+v, %v; want %+v", got, err, b2)
	}
	ghost := b2
	ghost.ID = "mcp-none"
	if err := db.Write(ctx, func(tx store.Tx) error { return tx.UpdateMCPServer(ctx, ghost) }); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateMCPServer of an unknown id: %v, want not found", err)
	}

	write(t, db, func(tx store.Tx) error { return tx.DeleteMCPServer(ctx, "mcp-b") })
	write(t, db, func(tx store.Tx) error { return tx.DeleteMCPServer(ctx, "mcp-b") }) // again: no error
	if _, err := db.GetMCPServer(ctx, "mcp-b"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetMCPServer after delete: %v, want not found", err)
	}
	if all, err := db.ListMCPServers(ctx); err != nil || len(all) != 1 || all[0].ID != "mcp-a" {
		t.Fatalf("ListMCPServers after delete = %+v, %v", all, err)
	}
}
