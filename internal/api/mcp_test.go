package api_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/mcp"
	"github.com/caduceus-dev/caduceus/internal/mcpconf"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

const mcpToken = "mcp-token-0123456789"

// startMCPPeer serves an MCP server with an echo tool over streamable
// HTTP on loopback, behind a bearer token.
func startMCPPeer(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "peer", Version: "1"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes the text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+mcpToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// lazyMCPStore lets the API's MCP service read the env's store, which
// exists only once the options are applied.
type lazyMCPStore struct{ st store.Store }

func (l *lazyMCPStore) ListMCPServers(ctx context.Context) ([]store.MCPServer, error) {
	return l.st.ListMCPServers(ctx)
}

func withMCP(t *testing.T, lazy *lazyMCPStore) envOpt {
	box, err := secretbox.New([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := mcp.NewManager(mcp.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	svc := mcpconf.New(lazy, m, func(bool) (*secretbox.Box, error) { return box, nil }, nil, nil)
	return func(c *envConfig) {
		c.options = append(c.options, func(o *api.Options) { o.MCP = svc })
	}
}

type mcpServerJSON struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Headers      map[string]string `json:"headers"`
	Env          map[string]string `json:"env"`
	State        string            `json:"state"`
	LastError    string            `json:"last_error"`
	Policy       string            `json:"policy"`
	ToolPolicies map[string]string `json:"tool_policies"`
	Tools        []struct {
		Name, Description, Verdict string
	} `json:"tools"`
}

func TestMCPServerRoutes(t *testing.T) {
	t.Parallel()
	url := startMCPPeer(t)
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		lazy := &lazyMCPStore{}
		e := newEnv(t, withStore(open), withMCP(t, lazy))
		lazy.st = e.st

		for _, c := range []struct{ name, body, code string }{
			{"bad transport", `{"name":"x","transport":"carrier-pigeon"}`, "invalid_input"},
			{"bad name", `{"name":"a__b","transport":"http","url":"` + url + `"}`, "invalid_input"},
			{"stdio without command", `{"name":"x","transport":"stdio"}`, "invalid_input"},
			{"http with command", `{"name":"x","transport":"http","url":"` + url + `","command":"ls"}`, "invalid_input"},
			{"bad policy", `{"name":"x","transport":"http","url":"` + url + `","policy":"maybe"}`, "invalid_input"},
			{"bad tool policy", `{"name":"x","transport":"http","url":"` + url + `","tool_policies":{"echo":"sure"}}`, "invalid_input"},
			{"negative timeout", `{"name":"x","transport":"http","url":"` + url + `","call_timeout_ms":-1}`, "invalid_input"},
		} {
			e.req("POST", "/api/mcp/servers", c.body).want(t, http.StatusBadRequest, c.code)
		}
		var list struct{ Servers []mcpServerJSON }
		e.req("GET", "/api/mcp/servers", "").decode(t, &list)
		if len(list.Servers) != 0 {
			t.Fatalf("bad input stored servers: %+v", list.Servers)
		}

		r := e.req("POST", "/api/mcp/servers", `{"name":"peer","transport":"http","url":"`+url+`","headers":{"Authorization":"Bearer `+mcpToken+`"}}`)
		r.want(t, http.StatusCreated, "")
		if strings.Contains(string(r.body), mcpToken) {
			t.Fatalf("the answer holds the secret: %s", r.body)
		}
		var s mcpServerJSON
		r.decode(t, &s)
		if s.Headers["Authorization"] != "Bea…6789" || s.Policy != "ask" || s.State != "idle" {
			t.Fatalf("created %+v", s)
		}
		row, err := e.st.GetMCPServer(e.ctx, s.ID)
		if err != nil || row.Headers["Authorization"] == "" || strings.Contains(row.Headers["Authorization"], mcpToken) {
			t.Fatalf("stored header %q, %v: want it sealed", row.Headers["Authorization"], err)
		}
		e.req("POST", "/api/mcp/servers", `{"name":"peer","transport":"http","url":"`+url+`"}`).want(t, http.StatusConflict, "mcp_name_taken")

		// Restart starts it: ready, with its tools and their verdicts.
		r = e.req("POST", "/api/mcp/servers/"+s.ID+"/restart", "")
		r.want(t, http.StatusOK, "")
		r.decode(t, &s)
		if s.State != "ready" || len(s.Tools) != 1 || s.Tools[0].Name != "echo" || s.Tools[0].Verdict != "ask" {
			t.Fatalf("after restart: %+v", s)
		}

		// A PATCH sending the masked header back keeps the stored value:
		// the server still answers after a restart.
		r = e.req("PATCH", "/api/mcp/servers/"+s.ID, `{"headers":{"Authorization":"Bea…6789"},"tool_policies":{"echo":"allow"},"call_timeout_ms":5000}`)
		r.want(t, http.StatusOK, "")
		r = e.req("POST", "/api/mcp/servers/"+s.ID+"/restart", "")
		r.decode(t, &s)
		if s.State != "ready" || len(s.Tools) != 1 || s.Tools[0].Verdict != "allow" {
			t.Fatalf("after patch and restart: %+v (%s)", s, r.body)
		}
		// A wrong token: the restart answers the failure in last_error.
		e.req("PATCH", "/api/mcp/servers/"+s.ID, `{"headers":{"Authorization":"Bearer wrong-token-abcdef"}}`).want(t, http.StatusOK, "")
		r = e.req("POST", "/api/mcp/servers/"+s.ID+"/restart", "")
		r.decode(t, &s)
		if s.State != "failed" || s.LastError == "" || strings.Contains(string(r.body), "wrong-token-abcdef") {
			t.Fatalf("with a wrong token: %+v", s)
		}

		e.req("PATCH", "/api/mcp/servers/"+s.ID, `{"enabled":false}`).decode(t, &s)
		if s.State != "disabled" {
			t.Fatalf("disabled: %+v", s)
		}
		e.req("POST", "/api/mcp/servers/"+s.ID+"/restart", "").want(t, http.StatusConflict, "invalid_input")
		e.req("DELETE", "/api/mcp/servers/"+s.ID, "").want(t, http.StatusNoContent, "")
		e.req("GET", "/api/mcp/servers/"+s.ID, "").want(t, http.StatusNotFound, "not_found")
		e.req("GET", "/api/mcp/servers/mcp_nope", "").want(t, http.StatusNotFound, "not_found")
	})
}

func TestMCPRoutesUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.req("GET", "/api/mcp/servers", "").want(t, http.StatusServiceUnavailable, "mcp_unavailable")
}
