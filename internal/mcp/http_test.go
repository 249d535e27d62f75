package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

const testToken = "s3cret-bearer-token-4711"

// A 1x1 PNG.
var testPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

type sumIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

// newPeerServer is a small MCP server written with the Go SDK: echo, an
// image, a structured result, a failing tool and one that never answers.
func newPeerServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "peer", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes the text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "image", Description: "Returns a tiny PNG."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a pixel"},
				&sdk.ImageContent{MIMEType: "image/png", Data: testPNG},
			}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "sum", Description: "Adds two numbers."},
		func(_ context.Context, _ *sdk.CallToolRequest, in sumIn) (*sdk.CallToolResult, sumOut, error) {
			return nil, sumOut{Sum: in.A + in.B}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Always fails."},
		func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("the disk is on fire")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Answers when cancelled."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	return s
}

// peer serves newPeerServer over streamable HTTP on a fixed loopback
// address, so that it can be stopped and started again where the client
// expects it. Requests without the bearer token are refused.
type peer struct {
	tb   testing.TB
	addr string
	mu   sync.Mutex
	srv  *http.Server
}

func startPeer(t *testing.T) *peer {
	t.Helper()
	p := &peer{tb: t, addr: "127.0.0.1:0"}
	p.start()
	t.Cleanup(p.stop)
	return p
}

func (p *peer) url() string { return "http://" + p.addr + "/mcp" }

func (p *peer) start() {
	p.tb.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.tb.Fatalf("listen: %v", err)
	}
	p.addr = ln.Addr().String()
	server := newPeerServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	p.mu.Lock()
	p.srv = srv
	p.mu.Unlock()
}

func (p *peer) stop() {
	p.mu.Lock()
	srv := p.srv
	p.srv = nil
	p.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func httpConfig(p *peer) ServerConfig {
	return ServerConfig{
		Name: "peer", Transport: TransportHTTP, URL: p.url(),
		Headers:     map[string]string{"Authorization": "Bearer " + testToken},
		CallTimeout: 10 * time.Second, StartTimeout: 10 * time.Second,
	}
}

// syncBuffer is a log destination tests read while servers write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func newTestManager(t *testing.T, configs ...ServerConfig) (*Manager, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	m, err := NewManager(Options{
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		BackoffBase: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
	}, configs)
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m, logs
}

func stateOf(t *testing.T, m *Manager, name string) ServerState {
	t.Helper()
	for _, s := range m.States() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no state for %q in %+v", name, m.States())
	return ServerState{}
}

func toolsByName(t *testing.T, tools []tool.Tool) map[string]tool.Tool {
	t.Helper()
	out := map[string]tool.Tool{}
	for _, tl := range tools {
		out[tl.Spec().Name] = tl
	}
	return out
}

func TestHTTPServerToolsAndResults(t *testing.T) {
	p := startPeer(t)
	cfg := httpConfig(p)
	cfg.CallTimeout = 300 * time.Millisecond
	m, logs := newTestManager(t, cfg)
	ctx := t.Context()

	if st := stateOf(t, m, "peer"); st.State != StateIdle || len(st.Tools) != 0 {
		t.Fatalf("before first use: %+v, want idle with no tools (servers start lazily)", st)
	}
	tools, err := NewTools(ctx, m)
	if err != nil {
		t.Fatalf("NewTools: %v", err)
	}
	byName := toolsByName(t, tools)
	for _, want := range []string{"mcp__peer__echo", "mcp__peer__image", "mcp__peer__sum", "mcp__peer__fail", "mcp__peer__slow"} {
		if _, ok := byName[want]; !ok {
			t.Fatalf("tool %s missing from %v", want, byName)
		}
	}
	echo := byName["mcp__peer__echo"]
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(echo.Spec().Parameters, &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil {
		t.Fatalf("echo schema %s (%v): want an object with a text property", echo.Spec().Parameters, err)
	}
	if d := echo.Spec().Description; !strings.Contains(d, "Echoes the text.") || !strings.Contains(d, "peer") {
		t.Errorf("description %q", d)
	}
	st := stateOf(t, m, "peer")
	if st.State != StateReady || len(st.Tools) != 5 || st.LastError != "" {
		t.Fatalf("after listing: %+v", st)
	}

	cases := []struct {
		tool       string
		args       string
		status     string
		output     string // a substring of what the model reads
		parts      []string
		structured string
	}{
		{"mcp__peer__echo", `{"text":"hello"}`, event.ToolOK, "echo: hello", []string{PartText}, ""},
		{"mcp__peer__image", `{}`, event.ToolOK, "[image image/png, ", []string{PartText, PartImage}, ""},
		{"mcp__peer__sum", `{"a":2,"b":40}`, event.ToolOK, `"sum":42`, []string{PartText}, `{"sum":42}`},
		{"mcp__peer__fail", ``, event.ToolError, "the disk is on fire", []string{PartText}, ""},
		{"mcp__peer__slow", `{}`, event.ToolTimeout, "deadline exceeded", nil, ""},
		{"mcp__peer__echo", `[1,2]`, event.ToolError, "arguments must be a JSON object", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.tool+c.args, func(t *testing.T) {
			res, err := byName[c.tool].Run(ctx, tool.Env{}, json.RawMessage(c.args))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Status != c.status || !strings.Contains(res.Output, c.output) {
				t.Fatalf("got %s %q, want %s containing %q", res.Status, res.Output, c.status, c.output)
			}
			if c.parts == nil {
				return
			}
			data, ok := res.Data.(ResultData)
			if !ok {
				t.Fatalf("Data is %T", res.Data)
			}
			var types []string
			for _, part := range data.Content {
				types = append(types, part.Type)
				if part.Type == PartImage {
					raw, err := base64.StdEncoding.DecodeString(part.Data)
					if err != nil || !bytes.Equal(raw, testPNG) || part.MIME != "image/png" || part.Size != len(testPNG) || part.SHA256 == "" {
						t.Errorf("image part %+v: want the PNG the server sent", part)
					}
				}
			}
			if fmt.Sprint(types) != fmt.Sprint(c.parts) || data.Server != "peer" || data.IsError != (c.status == event.ToolError) {
				t.Errorf("data %+v, want parts %v", data, c.parts)
			}
			if string(data.Structured) != c.structured {
				t.Errorf("structured %s, want %s", data.Structured, c.structured)
			}
		})
	}
	// The peer offers no resources or prompts: empty lists, not errors.
	if r, err := m.ListResources(ctx, "peer"); err != nil || len(r) != 0 {
		t.Errorf("ListResources: %+v %v", r, err)
	}
	if p, err := m.ListPrompts(ctx, "peer"); err != nil || len(p) != 0 {
		t.Errorf("ListPrompts: %+v %v", p, err)
	}
	// A timed-out call leaves the connection usable.
	res, err := byName["mcp__peer__echo"].Run(ctx, tool.Env{}, json.RawMessage(`{"text":"still there"}`))
	if err != nil || res.Status != event.ToolOK {
		t.Fatalf("after a timeout: %+v %v", res, err)
	}
	if st := stateOf(t, m, "peer"); st.State != StateReady || st.Restarts != 0 {
		t.Errorf("after a timeout: %+v, want the same session", st)
	}
	// A cancelled context is a cancelled call.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if res, _ := byName["mcp__peer__slow"].Run(cctx, tool.Env{}, json.RawMessage(`{}`)); res.Status != event.ToolCancelled {
		t.Errorf("cancelled: %+v", res)
	}
	// The approval policy asks about an MCP tool in every mode.
	in := echo.Intent(json.RawMessage(`{"text": "hi"}`))
	for _, mode := range policy.Modes() {
		if d := policy.Decide(policy.Input{Mode: mode, Tool: echo.Spec().Name, Intent: in}); d.Verdict != policy.Ask {
			t.Errorf("%s: policy %+v, want ask", mode, d)
		}
	}
	if in.Action != `MCP peer · echo {"text":"hi"}` {
		t.Errorf("action %q", in.Action)
	}
	if strings.Contains(logs.String(), testToken) {
		t.Errorf("the bearer token is in the log:\n%s", logs)
	}
}

func TestHTTPServerGoneThenBack(t *testing.T) {
	p := startPeer(t)
	m, logs := newTestManager(t, httpConfig(p))
	ctx := t.Context()
	call := func() (*CallResult, error) {
		return m.Call(ctx, "peer", "echo", json.RawMessage(`{"text":"x"}`))
	}
	if _, err := call(); err != nil {
		t.Fatalf("first call: %v", err)
	}
	p.stop()
	if _, err := call(); err == nil {
		t.Fatal("a call to a stopped server succeeded")
	} else {
		t.Logf("call to a stopped server: %v (%T)", err, errors.Unwrap(err))
	}
	if st := stateOf(t, m, "peer"); st.State == StateReady || st.LastError == "" {
		t.Fatalf("after the server went away: %+v, want not ready with an error", st)
	}
	// It is tried again on its own, DefaultMaxRestarts times, then left
	// failed until the next use.
	deadline := time.Now().Add(30 * time.Second)
	st := stateOf(t, m, "peer")
	for st.State != StateFailed {
		if time.Now().After(deadline) {
			t.Fatalf("still %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
		st = stateOf(t, m, "peer")
	}
	if st.Restarts != DefaultMaxRestarts {
		t.Fatalf("failed after %d restarts, want %d: %+v", st.Restarts, DefaultMaxRestarts, st)
	}
	p.start()
	res, err := call()
	if err != nil {
		t.Fatalf("call after the server came back: %v (state %+v)", err, stateOf(t, m, "peer"))
	}
	if res.Content[0].Text != "echo: x" {
		t.Fatalf("result %+v", res)
	}
	if st := stateOf(t, m, "peer"); st.State != StateReady || st.Restarts == 0 {
		t.Errorf("after recovery: %+v, want ready after a restart", st)
	}
	if strings.Contains(logs.String(), testToken) {
		t.Errorf("the bearer token is in the log:\n%s", logs)
	}
}

func TestHTTPServerRefusesWrongToken(t *testing.T) {
	p := startPeer(t)
	cfg := httpConfig(p)
	cfg.Headers = map[string]string{"Authorization": "Bearer wrong-token-12345"}
	m, logs := newTestManager(t, cfg)
	if _, err := m.ListTools(t.Context(), "peer"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("ListTools with a wrong token: %v, want ErrUnavailable", err)
	}
	st := stateOf(t, m, "peer")
	if st.State != StateFailed || st.LastError == "" || st.RetryAt.IsZero() {
		t.Fatalf("state %+v, want failed with an error and a retry time", st)
	}
	if strings.Contains(st.LastError+logs.String(), "wrong-token-12345") {
		t.Errorf("the token leaked: %q\n%s", st.LastError, logs)
	}
	// The configuration is fixed: Update replaces the server, which works.
	if err := m.Update([]ServerConfig{httpConfig(p)}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if st := stateOf(t, m, "peer"); st.State != StateIdle {
		t.Fatalf("after Update: %+v, want idle", st)
	}
	if _, err := m.Call(t.Context(), "peer", "echo", json.RawMessage(`{"text":"ok"}`)); err != nil {
		t.Fatalf("call after the fix: %v", err)
	}
}

func TestUpdate(t *testing.T) {
	p := startPeer(t)
	a, b := httpConfig(p), httpConfig(p)
	b.Name = "other"
	m, _ := newTestManager(t, a, b)
	ctx := t.Context()
	for _, name := range []string{"peer", "other"} {
		if _, err := m.ListTools(ctx, name); err != nil {
			t.Fatalf("ListTools %s: %v", name, err)
		}
	}
	// Unchanged a keeps its session; changed b is closed and restarts on
	// next use; c is new; a config that does not validate changes nothing.
	bad := a
	bad.URL = "ftp://x"
	if err := m.Update([]ServerConfig{bad}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("invalid update: %v", err)
	}
	if err := m.Update([]ServerConfig{a, a}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("duplicate names: %v", err)
	}
	if got := m.Servers(); fmt.Sprint(got) != "[other peer]" {
		t.Fatalf("after invalid updates: %v", got)
	}
	b.CallTimeout = 5 * time.Second
	c := httpConfig(p)
	c.Name = "third"
	if err := m.Update([]ServerConfig{a, c}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got := m.Servers(); fmt.Sprint(got) != "[peer third]" {
		t.Fatalf("servers %v", got)
	}
	if st := stateOf(t, m, "peer"); st.State != StateReady {
		t.Errorf("unchanged server: %+v, want still ready", st)
	}
	if st := stateOf(t, m, "third"); st.State != StateIdle {
		t.Errorf("new server: %+v, want idle", st)
	}
	if _, err := m.Call(ctx, "other", "echo", nil); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("removed server: %v", err)
	}
	if err := m.Update([]ServerConfig{a, b}); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if st := stateOf(t, m, "other"); st.State != StateIdle {
		t.Errorf("re-added server: %+v", st)
	}
	if _, err := m.Call(ctx, "other", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Errorf("call on the re-added server: %v", err)
	}
	_ = m.Close()
	if _, err := m.Call(ctx, "peer", "echo", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}
