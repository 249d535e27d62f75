package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/account"
	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/gitrepo"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/jobs"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/journal/journaltest"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
	"github.com/caduceus-dev/caduceus/internal/terminal"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// env is the API over a real SQLite file in t.TempDir(), with the journal
// writer and hub running, behind the same guard the server uses, served by
// httptest. It has a runner (the demo model) only when asked for: without
// one, sent messages stay queued, which most status and error checks want.
type env struct {
	t   *testing.T
	ctx context.Context
	st  store.Store
	w   *journal.Writer
	hub *journal.Hub
	svc *control.Service
	srv *httptest.Server
	ws  string
	// ident resolves who asks; accounts adds people directly.
	ident    *identity.Resolver
	accounts *account.Manager
}

type envConfig struct {
	jobs      bool         // a scheduler answers the jobs routes (h17-jobs)
	script    *demo.Script // a runner executes runs with this script
	heartbeat time.Duration
	lease     time.Duration
	models    bool // GET /api/models lists the registry
	retry     control.RetryPolicy
	// Each write of a stream and the streams one address may hold.
	streamWrite time.Duration
	maxStreams  int
	// Sign-in: the server token, and where the API logs (discarded when
	// nil).
	token  string
	secure bool
	log    *slog.Logger
	// The Git panel's git options and author email domain.
	git       gitrepo.Options
	gitDomain string
	// Attachments: upload bounds, and which models take images (nil: the
	// registry's word).
	uploads api.UploadLimits
	images  api.ImageInput
	// options changes the API's Options last.
	options []func(*api.Options)
	// Terminal: the manager (nil: off), extra origins, the redactor.
	terms   *terminal.Manager
	origins []string
	red     *secret.Redactor
	// open makes the store (nil: SQLite).
	open storetest.Open
}

type envOpt func(*envConfig)

// withRunner runs an in-process runner that answers with script, asking a
// person before every command (approval mode manual).
func withRunner(s demo.Script) envOpt { return func(c *envConfig) { c.script = &s } }

// withHeartbeat sets the SSE keep-alive interval.
func withHeartbeat(d time.Duration) envOpt { return func(c *envConfig) { c.heartbeat = d } }

// withLeaseWindow sets how recent a runner's heartbeat must be for health.
func withLeaseWindow(d time.Duration) envOpt { return func(c *envConfig) { c.lease = d } }

// withRetries sets the automatic retry policy of queued runs.
func withRetries(n int, backoff time.Duration) envOpt {
	return func(c *envConfig) { c.retry = control.RetryPolicy{Max: n, Backoff: backoff} }
}

// withStreamWriteTimeout bounds each write of an event stream.
func withStreamWriteTimeout(d time.Duration) envOpt { return func(c *envConfig) { c.streamWrite = d } }

// withMaxStreams bounds the event streams of one client address.
func withMaxStreams(n int) envOpt { return func(c *envConfig) { c.maxStreams = n } }

// withServerToken sets CADUCEUS_TOKEN.
func withServerToken(tok string) envOpt { return func(c *envConfig) { c.token = tok } }

// withSecureCookies sets --secure-cookies.
func withSecureCookies() envOpt { return func(c *envConfig) { c.secure = true } }

// withLog sends the API's log to l.
func withLog(l *slog.Logger) envOpt { return func(c *envConfig) { c.log = l } }

// testParams hash passwords cheaply; the format and checks are as with
// the defaults.
var testParams = auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

// withStore runs the API over the store open makes.
func withStore(open storetest.Open) envOpt { return func(c *envConfig) { c.open = open } }

// withModels serves the demo registry on GET /api/models.
func withModels() envOpt { return func(c *envConfig) { c.models = true } }

func newEnv(t *testing.T, opts ...envOpt) *env {
	t.Helper()
	var cfg envConfig
	for _, o := range opts {
		o(&cfg)
	}
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	if cfg.log != nil {
		log = cfg.log
	}
	open := storetest.SQLite
	if cfg.open != nil {
		open = cfg.open
	}
	j := journaltest.Start(t, open)
	st, w, hub := j.Store, j.Writer, j.Hub

	ws := t.TempDir()
	svc := control.NewService(st, w, ws, cfg.retry)
	script := demo.Script{Scenarios: []demo.Scenario{{Turns: []demo.Turn{{Steps: []demo.Step{{Kind: demo.KindText, Text: "hi"}}}}}}}
	if cfg.script != nil {
		script = *cfg.script
	}
	reg := models.New(models.File{}, func(string) string { return "" }, nil, demo.New(script))
	ident := identity.New(st, identity.Config{Token: cfg.token, Loopback: true, Log: log})
	params := testParams
	aopt := api.Options{Heartbeat: cfg.heartbeat, LeaseWindow: cfg.lease, StreamWriteTimeout: cfg.streamWrite, MaxStreamsPerAddr: cfg.maxStreams,
		Identity: ident, PasswordParams: &params, SecureCookies: cfg.secure, Uploads: cfg.uploads, Images: reg, Git: cfg.git, GitEmailDomain: cfg.gitDomain,
		Terminals: cfg.terms, Origins: cfg.origins, Redactor: cfg.red}
	if cfg.images != nil {
		aopt.Images = cfg.images
	}
	if cfg.models {
		aopt.Models = reg
	}
	for _, o := range cfg.options {
		o(&aopt)
	}
	if cfg.jobs {
		aopt.Jobs = jobs.NewScheduler(st, w, svc, jobs.Config{}, log)
	}
	a := api.New(st, svc, hub, api.Info{Version: "test", SchemaVersion: sqlite.SchemaVersion, DefaultModel: reg.Default(),
		Demo: reg.DemoOnly(), RunnerMode: "inprocess"}, aopt, log)
	guard, err := httpguard.New(httpguard.Config{Addr: "127.0.0.1:0", BodyLimit: api.BodyLimit(cfg.uploads)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", a.Handler())
	mux.Handle("POST /hooks/{id}", a.Handler()) // inbound triggers (h17-hooks)
	srv := httptest.NewServer(guard.Wrap(mux))

	stopRunner := func() {}
	if cfg.script != nil {
		tools := tool.NewRegistry(tool.NewRunCommand(tool.Config{}), tool.NewClarify())
		r := runner.New(runner.Config{Lease: 5 * time.Second, ApprovalMode: "manual", Version: "test"}, st, w, hub, tools, reg, log)
		rctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = r.Run(rctx) }()
		stopRunner = func() { cancel(); <-done }
	}
	t.Cleanup(func() {
		stopRunner()
		// Streams end when the hub closes; then the server can wait for
		// its handlers (journaltest closes the writer and store after).
		j.StopHub()
		srv.CloseClientConnections()
		srv.Close()
	})
	return &env{t: t, ctx: ctx, st: st, w: w, hub: hub, svc: svc, srv: srv, ws: ws, ident: ident,
		accounts: account.New(st, testParams, nil)}
}

// resp is an answer read whole.
type resp struct {
	code int
	hdr  http.Header
	body []byte
}

// req sends method path with body ("" sends none) as JSON, plus header
// pairs ("Content-Type", "text/plain", ...) that override the defaults.
func (e *env) req(method, path, body string, header ...string) resp {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r, err := http.NewRequestWithContext(e.ctx, method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	res, err := e.srv.Client().Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp{code: res.StatusCode, hdr: res.Header, body: b}
}

// decode reads the JSON body into v.
func (r resp) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// errCode is the stable code of an error answer ("" if it is none).
func (r resp) errCode() string {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.body, &e)
	return e.Error.Code
}

// want fails unless the answer has status code and, when code is not "",
// that error code, with a JSON body either way.
func (r resp) want(t *testing.T, status int, code string) {
	t.Helper()
	if r.code != status || r.errCode() != code {
		t.Fatalf("status %d code %q, want %d %q; body %s", r.code, r.errCode(), status, code, r.body)
	}
	if status != http.StatusNoContent && !strings.HasPrefix(r.hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("Content-Type %q, want JSON; body %s", r.hdr.Get("Content-Type"), r.body)
	}
}

// errCase is one request expected to fail with a status and a stable code.
type errCase struct {
	name, method, path, body string
	header                   []string
	status                   int
	code                     string
}

// runErrCases sends each case and checks its answer; then it checks that
// nothing changed in the journal, as bad input must not.
func (e *env) runErrCases(t *testing.T, cases []errCase) {
	t.Helper()
	before := e.lastID()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e.req(c.method, c.path, c.body, c.header...).want(t, c.status, c.code)
		})
	}
	if after := e.lastID(); after != before {
		t.Errorf("bad requests appended events: last id %d -> %d", before, after)
	}
}

// Views as the API sends them, decoded loosely so tests read the wire.
type sessionJSON struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Workspace   string `json:"workspace"`
	Model       string `json:"model"`
	Status      string `json:"status"`
	ActiveRunID string `json:"active_run_id"`
	QueuedRuns  int    `json:"queued_runs"`
}

type runJSON struct {
	ID                string   `json:"id"`
	SessionID         string   `json:"session_id"`
	Status            string   `json:"status"`
	Terminal          bool     `json:"terminal"`
	Input             string   `json:"input"`
	LastEventID       int64    `json:"last_event_id"`
	Controls          []string `json:"controls"`
	PendingRequestIDs []string `json:"pending_request_ids"`
	Error             *struct {
		Code string `json:"code"`
	} `json:"error"`
}

type requestJSON struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Status   string `json:"status"`
	RunID    string `json:"run_id"`
	Response string `json:"response"`
}

// session creates a session through the API.
func (e *env) session(t *testing.T) sessionJSON {
	t.Helper()
	r := e.req("POST", "/api/sessions", "{}")
	r.want(t, http.StatusCreated, "")
	var s sessionJSON
	r.decode(t, &s)
	return s
}

// send posts a message and returns the queued run.
func (e *env) send(t *testing.T, sessionID, content string) runJSON {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"content": content})
	r := e.req("POST", "/api/sessions/"+sessionID+"/messages", string(b))
	r.want(t, http.StatusAccepted, "")
	var out runJSON
	r.decode(t, &out)
	return out
}

// run reads a run through the API.
func (e *env) run(t *testing.T, runID string) runJSON {
	t.Helper()
	r := e.req("GET", "/api/runs/"+runID, "")
	r.want(t, http.StatusOK, "")
	var out runJSON
	r.decode(t, &out)
	return out
}

// waitRun polls the run until ok holds, for at most 10s.
func (e *env) waitRun(t *testing.T, runID string, what string, ok func(runJSON) bool) runJSON {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.run(t, runID)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s; timed out waiting for %s", runID, r.Status, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runsOf lists a session's runs.
func (e *env) runsOf(t *testing.T, sessionID string) []runJSON {
	t.Helper()
	var out struct {
		Runs []runJSON `json:"runs"`
	}
	r := e.req("GET", "/api/sessions/"+sessionID+"/runs", "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &out)
	return out.Runs
}

func status(s string) func(runJSON) bool { return func(r runJSON) bool { return r.Status == s } }

func (e *env) lastID() int64 {
	e.t.Helper()
	n, err := e.st.LastEventID(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// hold gives the run to runnerID as running with a live lease, as a claim
// would, without a runner.
func (e *env) hold(t *testing.T, runID, runnerID string) {
	t.Helper()
	err := e.w.Do(e.ctx, func(tx store.Tx) error {
		r, err := tx.GetRun(e.ctx, runID)
		if err != nil {
			return err
		}
		now := time.Now()
		r.Status, r.RunnerID, r.LeaseExpiresAt, r.StartedAt, r.Attempt = run.Running, runnerID, now.Add(time.Minute), now, r.Attempt+1
		return tx.UpdateRun(e.ctx, r)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ask files a pending request of kind for a held run, as its runner would.
func (e *env) ask(t *testing.T, runID, runnerID, kind string) string {
	t.Helper()
	ru, err := e.st.GetRun(e.ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	q := store.Request{ID: id.New("req"), RunID: ru.ID, SessionID: ru.SessionID, Kind: kind, ToolCallID: "call_1", CreatedAt: time.Now().UTC()}
	var payload any = event.ApprovalRequestedPayload{RequestID: q.ID, ToolCallID: "call_1", Tool: "run_command",
		Action: "$ make test", Reason: "Runs a shell command", Choices: control.ApprovalChoices()}
	if kind == store.KindClarify {
		payload = event.ClarifyRequestedPayload{RequestID: q.ID, ToolCallID: "call_1", Question: "Which?", Choices: []string{"a", "b"}}
	}
	if err := e.w.Do(e.ctx, func(tx store.Tx) error { return control.Ask(e.ctx, tx, runnerID, q, payload) }); err != nil {
		t.Fatal(err)
	}
	return q.ID
}

// recover stops a held run on a transient failure, as its runner does:
// recovering while it has retries left, interrupted after.
func (e *env) recover(t *testing.T, runID, runnerID string) {
	t.Helper()
	err := e.w.Do(e.ctx, func(tx store.Tx) error {
		return control.Recover(e.ctx, tx, runID, runnerID, event.ErrorInfo{Code: "rate_limited", Message: "slow down"})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// interrupt marks a held run interrupted, as the watchdog does when its
// runner dies.
func (e *env) interrupt(t *testing.T, runID string) {
	t.Helper()
	if err := e.w.Do(e.ctx, func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, runID, "runner died") }); err != nil {
		t.Fatal(err)
	}
}

// sse is an open event stream.
type sse struct {
	res    *http.Response
	cancel context.CancelFunc
	frames chan frame
	err    error // why reading stopped early; read after frames closes
}

// frame is one SSE message: its id line ("" if none) and its event.
type frame struct {
	id string
	ev event.Event
}

// openSSE connects to path; header pairs may set Last-Event-ID. It
// returns the answer itself when it is not a stream.
func (e *env) openSSE(t *testing.T, path string, header ...string) (*sse, resp) {
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	r, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	res, err := e.srv.Client().Do(r)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		cancel()
		return nil, resp{code: res.StatusCode, hdr: res.Header, body: b}
	}
	s := &sse{res: res, cancel: cancel, frames: make(chan frame, 1024)}
	go s.read()
	t.Cleanup(func() { cancel(); res.Body.Close() })
	return s, resp{code: res.StatusCode, hdr: res.Header}
}

func (s *sse) read() {
	defer close(s.frames)
	sc := bufio.NewScanner(s.res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var f frame
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if data != nil {
				if err := json.Unmarshal(data, &f.ev); err != nil {
					s.err = fmt.Errorf("bad SSE data %q: %w", data, err)
					return
				}
				s.frames <- f
			}
			f, data = frame{}, nil
		case bytes.HasPrefix(line, []byte("id: ")):
			f.id = string(line[4:])
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append([]byte(nil), line[6:]...)
		}
	}
}

// next returns the next frame, failing after 10s or when the stream ends.
func (s *sse) next(t *testing.T) frame {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			t.Fatalf("the stream ended (%v)", s.err)
		}
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return frame{}
}

// until reads frames until one matches, returning all read.
func (s *sse) until(t *testing.T, match func(event.Event) bool) []frame {
	t.Helper()
	var out []frame
	for {
		f := s.next(t)
		out = append(out, f)
		if match(f.ev) {
			return out
		}
	}
}

// rest reads frames until the server ends the stream.
func (s *sse) rest(t *testing.T) []frame {
	t.Helper()
	var out []frame
	timeout := time.After(10 * time.Second)
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				if s.err != nil {
					t.Fatal(s.err)
				}
				return out
			}
			out = append(out, f)
		case <-timeout:
			t.Fatalf("the stream did not end (read %d events)", len(out))
		}
	}
}

// quiet asserts no event arrives within d.
func (s *sse) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		if ok {
			t.Fatalf("unexpected event %s (id %d)", f.ev.Type, f.ev.ID)
		}
	case <-time.After(d):
	}
}

func types(fs []frame) []event.Type {
	out := make([]event.Type, len(fs))
	for i, f := range fs {
		out[i] = f.ev.Type
	}
	return out
}

func isType(typ event.Type) func(event.Event) bool {
	return func(e event.Event) bool { return e.Type == typ }
}

// script is a demo script of one scenario.
func script(turns ...demo.Turn) demo.Script {
	return demo.Script{Scenarios: []demo.Scenario{{Turns: turns}}}
}

func turn(steps ...demo.Step) demo.Turn { return demo.Turn{Steps: steps} }

func text(s string) demo.Step { return demo.Step{Kind: demo.KindText, Text: s} }

func call(name, args string) demo.Step {
	return demo.Step{Kind: demo.KindToolCall, Name: name, Args: json.RawMessage(args)}
}
