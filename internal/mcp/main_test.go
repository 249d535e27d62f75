package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// helperMode, set in a stdio server's environment, makes the test binary
// an MCP server over stdin/stdout (a real process without node):
// "serve" runs the peer server plus an env tool; "dies" exits shortly
// after its tools were listed, like a server that crashes at once.
const helperMode = "CADUCEUS_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	mode := os.Getenv(helperMode)
	if mode == "" {
		os.Exit(m.Run())
	}
	if path := os.Getenv("HELPER_START_LOG"); path != "" {
		// One line per process started, for the test of concurrent first
		// uses.
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			_, _ = f.WriteString("started\n")
			_ = f.Close()
		}
	}
	s := newPeerServer()
	s.AddTool(&sdk.Tool{Name: "env", Description: "Lists the environment's names.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var names []string
			for _, kv := range os.Environ() {
				k, _, _ := strings.Cut(kv, "=")
				names = append(names, k)
			}
			slices.Sort(names)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(names, " ")}}}, nil
		})
	if mode == "dies" {
		s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				res, err := next(ctx, method, req)
				if method == "tools/list" {
					go func() { time.Sleep(300 * time.Millisecond); os.Exit(1) }()
				}
				return res, err
			}
		})
	}
	_ = s.Run(context.Background(), &sdk.StdioTransport{})
	os.Exit(0)
}

func helperServer(t *testing.T, mode string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{
		Name: "helper", Transport: TransportStdio, Command: exe,
		Env:          []string{helperMode + "=" + mode, "PEER_API_TOKEN=configured-secret-42"},
		StartTimeout: 20 * time.Second, CallTimeout: 20 * time.Second,
	}
}

func TestStdioEnvironmentAndBackgroundRestart(t *testing.T) {
	m, err := NewManager(Options{
		// The runner's own environment: a provider key must not reach the
		// server; the allow-listed and the configured variables must.
		Environ:     []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent", "OPENAI_API_KEY=sk-not-for-servers-123", "RANDOM_VAR=x"},
		BackoffBase: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
	}, []ServerConfig{helperServer(t, "serve")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := t.Context()
	res, err := m.Call(ctx, "helper", "env", nil)
	if err != nil {
		t.Fatalf("env: %v", err)
	}
	names := strings.Fields(res.Content[0].Text)
	for _, want := range []string{"PATH", "HOME", "PEER_API_TOKEN", helperMode} {
		if !slices.Contains(names, want) {
			t.Errorf("%s missing from the server's environment %v", want, names)
		}
	}
	for _, leak := range []string{"OPENAI_API_KEY", "RANDOM_VAR"} {
		if slices.Contains(names, leak) {
			t.Errorf("%s reached the server: %v", leak, names)
		}
	}

	// Killed while nobody calls it: the manager starts it again by itself.
	pid := stateOf(t, m, "helper").PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for st := stateOf(t, m, "helper"); st.State != StateReady || st.PID == pid; st = stateOf(t, m, "helper") {
		if time.Now().After(deadline) {
			t.Fatalf("not restarted on its own: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r, err := (&mcpTool{m: m, server: "helper", info: ToolInfo{Name: "echo"}}).Run(ctx, tool.Env{}, json.RawMessage(`{"text":"back"}`)); err != nil || r.Status != event.ToolOK || r.Output != "echo: back" {
		t.Fatalf("after the restart: %+v %v", r, err)
	}
}

func TestStdioCrashLoopEndsFailed(t *testing.T) {
	m, err := NewManager(Options{
		BackoffBase: 10 * time.Millisecond, BackoffMax: 40 * time.Millisecond, MaxRestarts: 2,
	}, []ServerConfig{helperServer(t, "dies")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if _, err := m.ListTools(t.Context(), "helper"); err != nil {
		t.Fatalf("first start: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	st := stateOf(t, m, "helper")
	for st.State != StateFailed {
		if time.Now().After(deadline) {
			t.Fatalf("a server that keeps dying is still %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
		st = stateOf(t, m, "helper")
	}
	// Two restarts on its own, then left failed with the reason.
	if st.Restarts != 2 || st.LastError == "" || st.RetryAt.IsZero() || strings.Contains(st.LastError, "configured-secret-42") {
		t.Fatalf("state %+v", st)
	}
	time.Sleep(200 * time.Millisecond)
	if again := stateOf(t, m, "helper"); again.Restarts != 2 || again.State != StateFailed {
		t.Fatalf("restarted again without a caller: %+v", again)
	}
}

func TestConcurrentFirstUsesStartOneProcess(t *testing.T) {
	cfg := helperServer(t, "serve")
	log := filepath.Join(t.TempDir(), "starts")
	cfg.Env = append(cfg.Env, "HELPER_START_LOG="+log)
	m, _ := newTestManager(t, cfg)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := m.Call(t.Context(), "helper", "echo", json.RawMessage(`{"text":"x"}`))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("call: %v", err)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "started"); n != 1 {
		t.Fatalf("%d processes started for 8 concurrent first calls, want 1", n)
	}
}

func TestNewToolsWithBuiltinsAndABrokenServer(t *testing.T) {
	p := startPeer(t)
	broken := ServerConfig{Name: "broken", Transport: TransportStdio, Command: "/nonexistent/server"}
	m, _ := newTestManager(t, httpConfig(p), broken)
	tools, err := NewTools(t.Context(), m)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "broken") {
		t.Fatalf("NewTools error %v, want the broken server's", err)
	}
	if len(tools) != 5 {
		t.Fatalf("%d tools, want the working server's 5", len(tools))
	}
	// They sit beside the built-in tools in one registry, under names
	// every provider accepts.
	builtin := tool.Builtin(tool.Config{})
	all := tools
	for _, n := range builtin.Names() {
		tl, _ := builtin.Get(n)
		all = append(all, tl)
	}
	reg := tool.NewRegistry(all...)
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, spec := range reg.Specs() {
		if !valid.MatchString(spec.Name) || !json.Valid(spec.Parameters) {
			t.Errorf("spec %s: %s", spec.Name, spec.Parameters)
		}
	}
	if _, ok := reg.Get("mcp__peer__echo"); !ok {
		t.Error("mcp__peer__echo not in the registry")
	}
}

// alive reports whether pid runs (a zombie waiting for its parent does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

func TestStdioServerChildrenStopWithIt(t *testing.T) {
	cfg := helperServer(t, "serve")
	pidFile := filepath.Join(t.TempDir(), "child")
	// The server is a shell that leaves a child behind and becomes the
	// MCP server, as wrappers (npx, scripts) do.
	cfg.Args = []string{"-c", `sleep 300 & echo $! > "$CHILD_PID_FILE"; exec "$0"`, cfg.Command}
	cfg.Command = "sh"
	cfg.Env = append(cfg.Env, "CHILD_PID_FILE="+pidFile)
	m, _ := newTestManager(t, cfg)
	child := func() int {
		t.Helper()
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	waitDead := func(pid int, why string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: child %d still runs", why, pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if _, err := m.ListTools(t.Context(), "helper"); err != nil {
		t.Fatal(err)
	}
	first := child()
	if !alive(first) {
		t.Fatalf("child %d not running", first)
	}
	// The server crashes: its child goes with it, a new server starts.
	pid := stateOf(t, m, "helper").PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitDead(first, "after the crash")
	if _, err := m.Call(t.Context(), "helper", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatalf("call after the restart: %v", err)
	}
	second := child()
	if second == first || !alive(second) {
		t.Fatalf("second child %d (first %d)", second, first)
	}
	// Close stops the server and its child.
	_ = m.Close()
	waitDead(second, "after Close")
}
