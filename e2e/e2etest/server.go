// Package e2etest is the harness the acceptance tests share: a real
// Caduceus server in the test process (StartServer) or as separate
// processes (StartServe, StartWeb, StartRunner), on a real SQLite file,
// driven through real HTTP on loopback, and readers for its JSON answers
// and event streams. It is a normal package so that the test packages
// e2e/api, e2e/processes and e2e/browser can run in parallel; see
// e2e/README.md.
package e2etest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/app"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// Server is a running Caduceus: in this process (StartServer), or the web
// tier of a separate process (WebProc embeds it).
type Server struct {
	t       *testing.T
	URL     string
	DataDir string
	Logs    *LockedBuffer // the server log (in-process servers only)
	stop    func()
}

// ServerOpt changes the configuration StartServer uses.
type ServerOpt func(*config.Config)

// WithApprovalTTL sets how long human requests stay pending.
func WithApprovalTTL(d time.Duration) ServerOpt { return func(c *config.Config) { c.ApprovalTTL = d } }

// WithToken requires the access token tok.
func WithToken(tok string) ServerOpt { return func(c *config.Config) { c.Token = tok } }

// WithApprovalMode sets the approval policy (the harness default is manual).
func WithApprovalMode(m string) ServerOpt { return func(c *config.Config) { c.ApprovalMode = m } }

// WithEnv gives the server an environment (provider keys, OLLAMA_HOST, ...).
func WithEnv(env map[string]string) ServerOpt {
	return func(c *config.Config) { c.Getenv = func(k string) string { return env[k] } }
}

// WithWorkspace makes dir the default workspace of new sessions.
func WithWorkspace(dir string) ServerOpt { return func(c *config.Config) { c.Workspace = dir } }

// WithWorkspaceRoots lets sessions choose their workspace under dirs
// (--workspace-root).
func WithWorkspaceRoots(dirs ...string) ServerOpt {
	return func(c *config.Config) { c.WorkspaceRoots = dirs }
}

// WithDataDir runs the server on data dir instead of a fresh one.
func WithDataDir(dir string) ServerOpt { return func(c *config.Config) { c.DataDir = dir } }

// WithLogFormat writes the server log as text or json.
func WithLogFormat(f string) ServerOpt { return func(c *config.Config) { c.LogFormat = f } }

// WithTracesEndpoint exports the server's traces to url.
func WithTracesEndpoint(url string) ServerOpt {
	return func(c *config.Config) { c.TracesEndpoint = url }
}

// WithRetries sets the automatic retry policy of the runs it queues.
func WithRetries(n int, backoff time.Duration) ServerOpt {
	return func(c *config.Config) { c.MaxRetries, c.RetryBackoff = n, backoff }
}

// LockedBuffer collects the server log for inspection.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// WriteScript stores a demo script where a server can load it.
func WriteScript(tb testing.TB, s demo.Script) string {
	tb.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(tb.TempDir(), "script.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// StartServer runs Caduceus in this process with the demo script s, on a
// fresh data dir and workspace, until the test ends.
func StartServer(t *testing.T, s demo.Script, opts ...ServerOpt) *Server {
	t.Helper()
	cfg := config.Config{
		Addr: "127.0.0.1:0", DataDir: t.TempDir(), Workspace: t.TempDir(),
		DemoScript: WriteScript(t, s), Lease: 5 * time.Second, Version: "test",
		// Manual: every command asks, which is what the approval tests
		// exercise; WithApprovalMode changes it.
		ApprovalMode: "manual",
	}
	for _, o := range opts {
		o(&cfg)
	}
	logs := &LockedBuffer{}
	var sink io.Writer = logs
	if testing.Verbose() {
		sink = io.MultiWriter(logs, os.Stderr)
	}
	log := app.NewLogger(sink, cfg.LogFormat, slog.LevelDebug)
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	srv := &Server{t: t, URL: a.URL(), DataDir: cfg.DataDir, Logs: logs}
	var once bool
	srv.stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server stopped with error: %v", err)
		}
	}
	t.Cleanup(srv.stop)
	return srv
}

// Stop stops an in-process server now rather than when the test ends.
func (s *Server) Stop() { s.stop() }

// Do sends a JSON request and decodes the JSON answer into out (if
// non-nil). It returns the status code.
func Do(t testing.TB, method, url string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, url, raw, err)
		}
	}
	return resp.StatusCode
}

// SessionJSON is a session as the API shows it.
type SessionJSON struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

// RunJSON is a run as the API shows it.
type RunJSON struct {
	ID                string           `json:"id"`
	SessionID         string           `json:"session_id"`
	Status            string           `json:"status"`
	Terminal          bool             `json:"terminal"`
	LastEventID       int64            `json:"last_event_id"`
	PendingRequestIDs []string         `json:"pending_request_ids"`
	Controls          []string         `json:"controls"`
	Error             *event.ErrorInfo `json:"error"`
}

// RequestJSON is a human request as the API shows it.
type RequestJSON struct {
	ID     string          `json:"id"`
	Kind   string          `json:"kind"`
	Status string          `json:"status"`
	RunID  string          `json:"run_id"`
	Prompt json.RawMessage `json:"prompt"`
}

// ErrorJSON is the API's error shape.
type ErrorJSON struct {
	Error struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

// NewSession creates a session and returns its id.
func (s *Server) NewSession(t *testing.T) string {
	t.Helper()
	var out SessionJSON
	if c := Do(t, "POST", s.URL+"/api/sessions", map[string]any{}, &out); c != http.StatusCreated {
		t.Fatalf("create session: %d", c)
	}
	return out.ID
}

// Send posts a message to the session and returns the run it queued.
func (s *Server) Send(t *testing.T, sessionID, content string) RunJSON {
	t.Helper()
	var out RunJSON
	if c := Do(t, "POST", s.URL+"/api/sessions/"+sessionID+"/messages", map[string]any{"content": content}, &out); c != http.StatusAccepted {
		t.Fatalf("send: %d", c)
	}
	return out
}

// Run reads a run.
func (s *Server) Run(t *testing.T, runID string) RunJSON {
	t.Helper()
	var out RunJSON
	if c := Do(t, "GET", s.URL+"/api/runs/"+runID, nil, &out); c != http.StatusOK {
		t.Fatalf("get run: %d", c)
	}
	return out
}

// WaitStatus polls the run until it has status want.
func (s *Server) WaitStatus(t *testing.T, runID, want string) RunJSON {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := s.Run(t, runID)
		if r.Status == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: status %s, want %s", runID, r.Status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WaitRun polls the run until ok holds for it, for at most d.
func (s *Server) WaitRun(t *testing.T, runID string, d time.Duration, what string, ok func(RunJSON) bool) RunJSON {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := s.Run(t, runID)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: still %s after %s, waiting for %s", runID, r.Status, d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pending lists the pending human requests.
func (s *Server) Pending(t *testing.T) []RequestJSON {
	t.Helper()
	var out struct {
		Requests []RequestJSON `json:"requests"`
	}
	Do(t, "GET", s.URL+"/api/requests?status=pending", nil, &out)
	return out.Requests
}

// Runs lists a session's runs.
func (s *Server) Runs(t *testing.T, sessionID string) []RunJSON {
	t.Helper()
	var out struct {
		Runs []RunJSON `json:"runs"`
	}
	if c := Do(t, "GET", s.URL+"/api/sessions/"+sessionID+"/runs", nil, &out); c != 200 {
		t.Fatalf("list runs: %d", c)
	}
	return out.Runs
}

// Sessions lists up to 200 sessions, newest first.
func (s *Server) Sessions(t *testing.T) []SessionJSON {
	t.Helper()
	var out struct {
		Sessions []SessionJSON `json:"sessions"`
	}
	if c := Do(t, "GET", s.URL+"/api/sessions?limit=200", nil, &out); c != 200 {
		t.Fatalf("list sessions: %d", c)
	}
	return out.Sessions
}

// Journal reads a run's events from the run stream (which replays and
// ends at the terminal event).
func (s *Server) Journal(t *testing.T, runID string) []event.Event {
	t.Helper()
	return OpenStream(t, s.URL+"/api/runs/"+runID+"/events", nil).Drain(t)
}

// RunnerJSON is a live runner in /api/health.
type RunnerJSON struct {
	ID          string `json:"id"`
	Host        string `json:"host"`
	PID         int    `json:"pid"`
	Version     string `json:"version"`
	StartedAt   string `json:"started_at"`
	HeartbeatAt string `json:"heartbeat_at"`
	RunsHeld    *int   `json:"runs_held"`
}

// HealthJSON is /api/health.
type HealthJSON struct {
	Status     string       `json:"status"`
	Store      string       `json:"store"`
	RunnerMode string       `json:"runner_mode"`
	Runners    []RunnerJSON `json:"runners"`
	QueueDepth int          `json:"queue_depth"`
	Recovering int          `json:"recovering"`
	Reason     string       `json:"reason"`
}

// Health reads /api/health, keeping the raw body to check "runners": [].
func (s *Server) Health(t *testing.T) (HealthJSON, map[string]json.RawMessage) {
	t.Helper()
	var raw map[string]json.RawMessage
	if c := Do(t, "GET", s.URL+"/api/health", nil, &raw); c != http.StatusOK {
		t.Fatalf("health: %d", c)
	}
	b, _ := json.Marshal(raw)
	var h HealthJSON
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("health %s: %v", b, err)
	}
	return h, raw
}

// WaitFile waits until path exists and is not empty.
func WaitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was not written", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// trimServing reads the URL from a "... serving <url>" line.
func trimServing(line string) string {
	_, u, _ := strings.Cut(line, " serving ")
	return strings.TrimSpace(u)
}
