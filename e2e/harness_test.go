// Package e2e holds the acceptance tests: a real Caduceus server (in this
// process, or as a separate process for restart tests) on a real SQLite
// file, driven through real HTTP on loopback.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// server is a running in-process Caduceus.
type server struct {
	t       *testing.T
	URL     string
	DataDir string
	Logs    *lockedBuffer
	stop    func()
}

type serverOpt func(*config.Config)

func withApprovalTTL(d time.Duration) serverOpt { return func(c *config.Config) { c.ApprovalTTL = d } }

func withToken(tok string) serverOpt { return func(c *config.Config) { c.Token = tok } }

func withApprovalMode(m string) serverOpt { return func(c *config.Config) { c.ApprovalMode = m } }

// withEnv gives the server an environment (provider keys, OLLAMA_HOST, ...).
func withEnv(env map[string]string) serverOpt {
	return func(c *config.Config) { c.Getenv = func(k string) string { return env[k] } }
}

// lockedBuffer collects the server log for inspection.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// writeScript stores a demo script where the server can load it.
func writeScript(t *testing.T, s demo.Script) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func startServer(t *testing.T, s demo.Script, opts ...serverOpt) *server {
	t.Helper()
	cfg := config.Config{
		Addr: "127.0.0.1:0", DataDir: t.TempDir(), Workspace: t.TempDir(),
		DemoScript: writeScript(t, s), Lease: 5 * time.Second, Version: "test",
		// Manual: every command asks, which is what the approval tests
		// exercise; withApprovalMode changes it.
		ApprovalMode: "manual",
	}
	for _, o := range opts {
		o(&cfg)
	}
	logs := &lockedBuffer{}
	var sink io.Writer = logs
	if testing.Verbose() {
		sink = io.MultiWriter(logs, os.Stderr)
	}
	log := slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	srv := &server{t: t, URL: a.URL(), DataDir: cfg.DataDir, Logs: logs}
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

// do sends a JSON request and decodes the JSON answer into out (if non-nil).
func do(t *testing.T, method, url string, body any, out any) int {
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

type sessionJSON struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
}

type runJSON struct {
	ID                string           `json:"id"`
	SessionID         string           `json:"session_id"`
	Status            string           `json:"status"`
	Terminal          bool             `json:"terminal"`
	LastEventID       int64            `json:"last_event_id"`
	PendingRequestIDs []string         `json:"pending_request_ids"`
	Controls          []string         `json:"controls"`
	Error             *event.ErrorInfo `json:"error"`
}

type requestJSON struct {
	ID     string          `json:"id"`
	Kind   string          `json:"kind"`
	Status string          `json:"status"`
	RunID  string          `json:"run_id"`
	Prompt json.RawMessage `json:"prompt"`
}

type errorJSON struct {
	Error struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func (s *server) newSession(t *testing.T) string {
	t.Helper()
	var out sessionJSON
	if c := do(t, "POST", s.URL+"/api/sessions", map[string]any{}, &out); c != http.StatusCreated {
		t.Fatalf("create session: %d", c)
	}
	return out.ID
}

func (s *server) send(t *testing.T, sessionID, content string) runJSON {
	t.Helper()
	var out runJSON
	if c := do(t, "POST", s.URL+"/api/sessions/"+sessionID+"/messages", map[string]any{"content": content}, &out); c != http.StatusAccepted {
		t.Fatalf("send: %d", c)
	}
	return out
}

func (s *server) run(t *testing.T, runID string) runJSON {
	t.Helper()
	var out runJSON
	if c := do(t, "GET", s.URL+"/api/runs/"+runID, nil, &out); c != http.StatusOK {
		t.Fatalf("get run: %d", c)
	}
	return out
}

// waitStatus polls the run until it has status want.
func (s *server) waitStatus(t *testing.T, runID, want string) runJSON {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := s.run(t, runID)
		if r.Status == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s: status %s, want %s", runID, r.Status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *server) pending(t *testing.T) []requestJSON {
	t.Helper()
	var out struct {
		Requests []requestJSON `json:"requests"`
	}
	do(t, "GET", s.URL+"/api/requests?status=pending", nil, &out)
	return out.Requests
}

// stream is a live SSE connection.
type stream struct {
	resp   *http.Response
	events chan event.Event
	errc   chan error
	cancel context.CancelFunc
}

// openStream connects to an SSE endpoint; header may set Last-Event-ID.
func openStream(t *testing.T, url string, header map[string]string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("stream %s: status %d", url, resp.StatusCode)
	}
	st := &stream{resp: resp, events: make(chan event.Event, 100000), errc: make(chan error, 1), cancel: cancel}
	go st.read()
	t.Cleanup(st.Close)
	return st
}

func (st *stream) read() {
	defer close(st.events)
	sc := bufio.NewScanner(st.resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var data, id string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != "" {
				var e event.Event
				if err := json.Unmarshal([]byte(data), &e); err != nil {
					st.errc <- fmt.Errorf("bad event %q: %w", data, err)
					return
				}
				if id != "" && fmt.Sprint(e.ID) != id {
					st.errc <- fmt.Errorf("sse id %s != event id %d", id, e.ID)
					return
				}
				st.events <- e
			}
			data, id = "", ""
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		}
	}
}

func (st *stream) Close() {
	st.cancel()
	st.resp.Body.Close()
}

// until reads events until pred holds for one (returned) or the timeout.
func (st *stream) until(t *testing.T, what string, pred func(event.Event) bool) (seen []event.Event) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-st.events:
			if !ok {
				select {
				case err := <-st.errc:
					t.Fatalf("waiting for %s: %v", what, err)
				default:
				}
				t.Fatalf("stream ended while waiting for %s (saw %d events)", what, len(seen))
			}
			seen = append(seen, e)
			if pred(e) {
				return seen
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %s (saw %d events)", what, len(seen))
		}
	}
}

// drain reads until the stream closes.
func (st *stream) drain(t *testing.T) (seen []event.Event) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-st.events:
			if !ok {
				return seen
			}
			seen = append(seen, e)
		case <-timeout:
			t.Fatalf("stream did not end (saw %d events)", len(seen))
		}
	}
}

func isType(typ event.Type) func(event.Event) bool {
	return func(e event.Event) bool { return e.Type == typ }
}

func isDone(runID string) func(event.Event) bool {
	return func(e event.Event) bool { return e.Type == event.RunDone && e.RunID == runID }
}

func payload[T any](t *testing.T, e event.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(e.Payload, &v); err != nil {
		t.Fatalf("payload of %s: %v", e.Type, err)
	}
	return v
}

// journal reads a run's events from the run stream (which replays and ends
// at the terminal event).
func (s *server) journal(t *testing.T, runID string) []event.Event {
	t.Helper()
	return openStream(t, s.URL+"/api/runs/"+runID+"/events", nil).drain(t)
}

// checkJournal asserts seq is 1..n without gaps per run (and per session for
// the session lifecycle events, which belong to no run) and ids strictly
// increase.
func checkJournal(t *testing.T, evs []event.Event) {
	t.Helper()
	last := map[[2]string]int64{}
	for i, e := range evs {
		k := [2]string{e.RunID, ""}
		if e.RunID == "" {
			k[1] = e.SessionID
		}
		if e.Seq != last[k]+1 {
			t.Fatalf("event %d (%s): seq %d, want %d", i, e.Type, e.Seq, last[k]+1)
		}
		last[k] = e.Seq
		if i > 0 && e.ID <= evs[i-1].ID {
			t.Fatalf("event %d: id %d not after %d", i, e.ID, evs[i-1].ID)
		}
	}
}

// ofRuns drops the session lifecycle events (no run) a session stream
// carries, leaving what a run's journal can be compared with.
func ofRuns(evs []event.Event) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.RunID != "" {
			out = append(out, e)
		}
	}
	return out
}

func countType(evs []event.Event, typ event.Type) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// Script building helpers.
func text(s string) demo.Step      { return demo.Step{Kind: demo.KindText, Text: s} }
func reasoning(s string) demo.Step { return demo.Step{Kind: demo.KindReasoning, Text: s} }
func delay(ms int) demo.Step       { return demo.Step{Kind: demo.KindDelay, DelayMS: ms} }
func call(name, args string) demo.Step {
	return demo.Step{Kind: demo.KindToolCall, Name: name, Args: json.RawMessage(args)}
}
func turn(steps ...demo.Step) demo.Turn { return demo.Turn{Steps: steps} }
func script(turns ...demo.Turn) demo.Script {
	return demo.Script{Scenarios: []demo.Scenario{{Turns: turns}}}
}

// slowText streams n fragments with a pause between them.
func slowText(n, pauseMS int) demo.Step {
	return demo.Step{Kind: demo.KindText, Text: strings.Repeat("tok ", n), ChunkSize: 4, ChunkDelayMS: pauseMS}
}
