package mcpconf_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caduceus-dev/caduceus/internal/mcp"
	"github.com/caduceus-dev/caduceus/internal/mcpconf"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

const token = "Bearer tok-0123456789abcdef"

func startPeer(t testing.TB) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "peer", Version: "1"}, nil)
	for _, name := range []string{"echo", "wipe", "read"} {
		sdk.AddTool(s, &sdk.Tool{Name: name, Description: "The " + name + " tool."},
			func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name}}}, nil, nil
			})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// TestReloadToolsVerdicts: servers stored with sealed headers reach the
// manager; a run's tools carry each tool's verdict (the tool's own, else
// the server's, else ask) and leave the denied out; a disabled server and
// one whose secret cannot be opened offer nothing; a change another
// process makes is seen by Watch.
func TestReloadToolsVerdicts(t *testing.T) {
	ctx := t.Context()
	url := startPeer(t)
	st, another := storetest.SQLite(t)
	box, err := secretbox.New([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	keys := func(bool) (*secretbox.Box, error) { return box, nil }
	m, err := mcp.NewManager(mcp.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	red := secret.NewRedactor()
	svc := mcpconf.New(st, m, keys, red, nil)

	sealed, err := svc.Seal("mcp-a", "header", map[string]string{"Authorization": token})
	if err != nil {
		t.Fatal(err)
	}
	rows := []store.MCPServer{
		{ID: "mcp-a", Name: "peer", Transport: "http", URL: url, Headers: sealed, Enabled: true, Policy: "allow",
			ToolPolicies: map[string]string{"wipe": "deny", "read": "ask"}},
		{ID: "mcp-b", Name: "off", Transport: "http", URL: url, Headers: sealed, Enabled: false},
		// Sealed for another id: cannot be opened under this one.
		{ID: "mcp-c", Name: "broken", Transport: "http", URL: url, Headers: sealed, Enabled: true},
	}
	if err := st.Write(ctx, func(tx store.Tx) error {
		for _, r := range rows {
			r.CreatedAt, r.UpdatedAt = time.UnixMilli(1), time.UnixMilli(1)
			if err := tx.InsertMCPServer(ctx, r); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if got := m.Servers(); !slices.Equal(got, []string{"peer"}) {
		t.Fatalf("manager servers %v, want only the enabled one that opens", got)
	}
	if e := svc.ConfigError("broken"); e == "" || strings.Contains(e, "tok-0123") {
		t.Fatalf("ConfigError(broken) = %q", e)
	}
	if got := red.String("x " + token); strings.Contains(got, "tok-0123456789abcdef") {
		t.Fatalf("the opened header is not redacted: %q", got)
	}
	tools, err := svc.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	for _, tl := range tools {
		verdicts[tl.Spec().Name] = tl.Intent(json.RawMessage(`{}`)).Rule
	}
	want := map[string]string{"mcp__peer__echo": "allow", "mcp__peer__read": "ask"}
	if len(verdicts) != len(want) || verdicts["mcp__peer__echo"] != "allow" || verdicts["mcp__peer__read"] != "ask" {
		t.Fatalf("tools and verdicts %v, want %v (wipe denied, not offered)", verdicts, want)
	}

	// Another process disables the server; Watch notices within a poll.
	other := another()
	r := rows[0]
	r.Enabled, r.UpdatedAt = false, time.UnixMilli(2)
	if err := other.Write(ctx, func(tx store.Tx) error { return tx.UpdateMCPServer(ctx, r) }); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); svc.Watch(wctx, 20*time.Millisecond) }()
	defer func() { stop(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for len(m.Servers()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Watch did not apply the change: %v", m.Servers())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if tools, err := svc.Tools(ctx); err != nil || len(tools) != 0 {
		t.Fatalf("tools after disabling: %d, %v", len(tools), err)
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{"": "…", "short": "…", "sk-abcdef0123456789": "sk-…6789", "ключ-очень-длинный": "клю…нный"} {
		if got := mcpconf.Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}
