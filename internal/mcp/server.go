package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// State is where a server is in its lifecycle.
type State string

const (
	StateIdle       State = "idle"       // configured, not started yet (servers start on first use)
	StateStarting   State = "starting"   // first start under way
	StateReady      State = "ready"      // connected; its tools are known
	StateRestarting State = "restarting" // lost (process exited, connection broken); started again after a backoff
	StateFailed     State = "failed"     // could not be started; tried again on next use after a backoff
	StateClosed     State = "closed"     // removed by Update or Close
)

// ToolInfo describes one tool of a server, as the server lists it.
type ToolInfo struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// ServerState is a server's state for people (the Settings page).
type ServerState struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	State     State  `json:"state"`
	// LastError is the last failure (start, crash, lost connection), kept
	// after a recovery; secrets of the configuration are masked.
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since"`
	// RetryAt is when a failed or restarting server is tried again.
	RetryAt time.Time `json:"retry_at,omitzero"`
	// Restarts counts starts after the first one.
	Restarts int `json:"restarts"`
	// PID is the process of a running stdio server.
	PID   int        `json:"pid,omitempty"`
	Tools []ToolInfo `json:"tools"`
}

// server is one configured server and its connection, if any.
type server struct {
	cfg    ServerConfig
	opts   Options
	log    *slog.Logger
	redact *secret.Redactor
	// life ends when the server is closed: it bounds starts and background
	// restarts.
	life   context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	state   State
	lastErr string
	since   time.Time
	sess    *sdk.ClientSession
	pid     int
	started time.Time // when sess connected
	tools   []ToolInfo
	fails   int // failures in a row: backoff exponent
	// auto: a lost server is being restarted without a caller; a failed
	// start then tries again on its own, within Options.MaxRestarts.
	auto     bool
	restarts int
	retryAt  time.Time
	starting chan struct{} // closed when the start under way ends
}

func newServer(cfg ServerConfig, opts Options) *server {
	// The caller keeps its slices and map: later changes to them must not
	// change a running server's configuration behind Update's back.
	cfg.Args, cfg.Env, cfg.Headers = slices.Clone(cfg.Args), slices.Clone(cfg.Env), maps.Clone(cfg.Headers)
	var secrets []string
	for _, e := range cfg.Env {
		_, v, _ := strings.Cut(e, "=")
		secrets = append(secrets, v)
	}
	for _, v := range cfg.Headers {
		secrets = append(secrets, v)
		// "Bearer <token>": the token alone may appear in messages too.
		if _, tok, ok := strings.Cut(v, " "); ok {
			secrets = append(secrets, tok)
		}
	}
	life, cancel := context.WithCancel(context.Background())
	return &server{
		cfg: cfg, opts: opts, redact: secret.NewRedactor(secrets...),
		log:  opts.Logger.With("server", cfg.Name, "transport", cfg.Transport),
		life: life, cancel: cancel,
		state: StateIdle, since: time.Now(),
	}
}

func (s *server) snapshot() ServerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerState{
		Name: s.cfg.Name, Transport: s.cfg.Transport, State: s.state,
		LastError: s.lastErr, Since: s.since, Restarts: s.restarts,
		Tools: append([]ToolInfo(nil), s.tools...),
	}
	if s.state == StateReady {
		st.PID = s.pid
	}
	if s.state == StateFailed || s.state == StateRestarting {
		st.RetryAt = s.retryAt
	}
	return st
}

func (s *server) setState(st State) {
	if s.state != st {
		s.state, s.since = st, time.Now()
	}
}

func (s *server) backoff() time.Duration {
	d := s.opts.BackoffBase
	for i := 1; i < s.fails && d < s.opts.BackoffMax; i++ {
		d *= 2
	}
	return min(d, s.opts.BackoffMax)
}

// session returns the server's live session, starting the server if it is
// not running. A start under way is waited for; a server in backoff is
// waited for when the wait fits in ctx, and otherwise fails at once with
// the last error, so that a broken server does not hold calls for long.
func (s *server) session(ctx context.Context) (*sdk.ClientSession, error) {
	for {
		s.mu.Lock()
		switch {
		case s.state == StateClosed:
			s.mu.Unlock()
			return nil, fmt.Errorf("%w: %s was removed or reconfigured", ErrUnavailable, s.cfg.Name)
		case s.state == StateReady && s.sess != nil:
			sess := s.sess
			s.mu.Unlock()
			return sess, nil
		case s.starting != nil:
			ch := s.starting
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if wait := time.Until(s.retryAt); wait > 0 {
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
				err := fmt.Errorf("%w: %s: %s (next attempt in %s)", ErrUnavailable, s.cfg.Name, s.lastErr, wait.Round(time.Millisecond))
				s.mu.Unlock()
				return nil, err
			}
			s.mu.Unlock()
			t := time.NewTimer(wait)
			select {
			case <-t.C:
				continue
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		s.starting = ch
		if s.state == StateIdle {
			s.setState(StateStarting)
		} else {
			s.restarts++
			s.setState(StateRestarting)
		}
		s.mu.Unlock()

		sess, pid, tools, err := s.connect()

		s.mu.Lock()
		s.starting = nil
		close(ch)
		if s.state == StateClosed {
			s.mu.Unlock()
			if sess != nil {
				closeSession(sess, pid)
			}
			continue
		}
		if err != nil {
			s.fails++
			s.lastErr = s.redact.String(err.Error())
			s.retryAt = time.Now().Add(s.backoff())
			s.auto = s.auto && s.fails <= s.opts.MaxRestarts
			if s.auto {
				s.setState(StateRestarting)
				go func() { _, _ = s.session(s.life) }()
			} else {
				s.setState(StateFailed)
			}
			s.log.Warn("mcp: server failed to start", "error", s.lastErr, "retry_in", time.Until(s.retryAt).Round(time.Millisecond), "restart", s.auto)
			out := fmt.Errorf("%w: %s: %s", ErrUnavailable, s.cfg.Name, s.lastErr)
			s.mu.Unlock()
			return nil, out
		}
		s.auto = false
		s.sess, s.pid, s.tools, s.started = sess, pid, tools, time.Now()
		s.retryAt = time.Time{}
		s.setState(StateReady)
		s.log.Info("mcp: server ready", "pid", pid, "tools", len(tools))
		s.mu.Unlock()
		go s.watch(sess)
		if pid > 0 {
			go s.watchProcess(sess, pid)
		}
		return sess, nil
	}
}

// connect starts the server and lists its tools, within StartTimeout.
func (s *server) connect() (*sdk.ClientSession, int, []ToolInfo, error) {
	ctx, cancel := context.WithTimeout(s.life, s.cfg.startTimeout())
	defer cancel()
	var self *sdk.ClientSession // set once connected; read by the handler below
	var selfMu sync.Mutex
	client := sdk.NewClient(
		&sdk.Implementation{Name: s.opts.ClientName, Version: s.opts.ClientVersion},
		&sdk.ClientOptions{
			// No roots, sampling or elicitation: Caduceus offers none yet.
			Capabilities: &sdk.ClientCapabilities{},
			ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
				selfMu.Lock()
				sess := self
				selfMu.Unlock()
				if sess != nil {
					go s.refreshTools(sess)
				}
			},
		})

	var transport sdk.Transport
	var cmd *exec.Cmd
	var stderr *tailBuffer
	switch s.cfg.Transport {
	case TransportStdio:
		cmd = exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Dir = s.cfg.Dir
		cmd.Env = append(tool.CommandEnv(s.opts.Environ, nil), s.cfg.Env...)
		stderr = newTailBuffer(2048)
		cmd.Stderr = stderr
		// Its own process group, so that closing it also stops what it
		// started (npx runs node, a shell script its commands).
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		// A child that inherited stderr must not hold up reaping the
		// server once it has exited.
		cmd.WaitDelay = time.Second
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	case TransportHTTP:
		transport = &sdk.StreamableClientTransport{
			Endpoint:   s.cfg.URL,
			HTTPClient: &http.Client{Transport: headerTransport{headers: s.cfg.Headers, base: http.DefaultTransport}},
		}
	}
	fail := func(err error) (*sdk.ClientSession, int, []ToolInfo, error) {
		if stderr != nil {
			if tail := stderr.lastLine(); tail != "" {
				err = fmt.Errorf("%w (stderr: %s)", err, tail)
			}
		}
		return nil, 0, nil, err
	}
	sess, err := client.Connect(ctx, transport, nil)
	if err != nil {
		// A failed handshake closed the session: the SDK closed the
		// process's stdin, waited for it and signalled it if it lingered.
		// What it started in its group goes too.
		if cmd != nil && cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		return fail(fmt.Errorf("connecting to %s: %w", s.cfg, err))
	}
	pid := 0
	if cmd != nil && cmd.Process != nil {
		pid = cmd.Process.Pid
	}
	tools, err := listTools(ctx, sess)
	if err != nil {
		closeSession(sess, pid)
		return fail(fmt.Errorf("listing the tools of %s: %w", s.cfg, err))
	}
	selfMu.Lock()
	self = sess
	selfMu.Unlock()
	return sess, pid, tools, nil
}

func listTools(ctx context.Context, sess *sdk.ClientSession) ([]ToolInfo, error) {
	var tools []ToolInfo
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		in, err := json.Marshal(t.InputSchema)
		if err != nil || string(in) == "null" {
			in = json.RawMessage(`{"type":"object"}`)
		}
		info := ToolInfo{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in}
		if t.OutputSchema != nil {
			if out, err := json.Marshal(t.OutputSchema); err == nil {
				info.OutputSchema = out
			}
		}
		tools = append(tools, info)
	}
	return tools, nil
}

// refreshTools follows a server's notifications/tools/list_changed.
func (s *server) refreshTools(sess *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(s.life, s.cfg.startTimeout())
	defer cancel()
	tools, err := listTools(ctx, sess)
	if err != nil {
		s.log.Warn("mcp: listing changed tools", "error", s.redact.String(err.Error()))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == sess {
		s.tools = tools
	}
}

// watch waits for a session to end on its own (the process exited, the
// connection closed) and schedules the restart.
func (s *server) watch(sess *sdk.ClientSession) {
	err := sess.Wait()
	msg := "the server closed the connection"
	if err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
		msg = err.Error()
	}
	s.lost(sess, msg)
}

// watchProcess notices a stdio server's exit even when a process it
// started still holds its stdout open, so the session sees no end of input.
// It waits without reaping (WNOWAIT): the SDK reaps the process when the
// session is closed.
func (s *server) watchProcess(sess *sdk.ClientSession, pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	s.lost(sess, "the server's process exited")
}

// lost forgets a session that no longer works and schedules a restart
// after a backoff, unless the server keeps dying (Options.MaxRestarts in a
// row): then it is left failed until its next use.
func (s *server) lost(sess *sdk.ClientSession, why string) {
	s.mu.Lock()
	if s.sess != sess || s.state == StateClosed {
		s.mu.Unlock()
		return
	}
	if time.Since(s.started) >= s.opts.StableAfter {
		// It ran for a good while: this is not a crash loop.
		s.fails = 0
	}
	s.fails++
	pid := s.pid
	s.sess, s.pid = nil, 0
	s.lastErr = s.redact.String(why)
	s.retryAt = time.Now().Add(s.backoff())
	background := s.fails <= s.opts.MaxRestarts
	s.auto = background
	if background {
		s.setState(StateRestarting)
	} else {
		s.setState(StateFailed)
	}
	s.log.Warn("mcp: server lost", "error", s.lastErr, "retry_in", time.Until(s.retryAt).Round(time.Millisecond), "restart", background)
	s.mu.Unlock()
	// The server is dead or no longer trusted: stop its process group
	// first, then reap the process (or end the HTTP session).
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	_ = sess.Close()
	if background {
		go func() { _, _ = s.session(s.life) }()
	}
}

// call calls one tool within the server's CallTimeout.
func (s *server) call(ctx context.Context, name string, args json.RawMessage) (*CallResult, error) {
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage(`{}`)
	}
	var res *sdk.CallToolResult
	err := s.do(ctx, fmt.Sprintf("calling %q", name), func(ctx context.Context, sess *sdk.ClientSession) (err error) {
		res, err = sess.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		return err
	})
	if err != nil {
		return nil, err
	}
	return convertResult(res), nil
}

// do runs one request on the server's session, starting the server if
// needed, within the server's CallTimeout. A failure that shows the
// connection broken loses the session (restart with backoff); a timeout,
// a cancellation or an error the server sent leaves it.
func (s *server) do(ctx context.Context, what string, fn func(context.Context, *sdk.ClientSession) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout())
	defer cancel()
	sess, err := s.session(ctx)
	if err != nil {
		return err
	}
	if err = fn(ctx, sess); err != nil {
		switch {
		case ctx.Err() != nil:
			// A timeout or a cancelled run: the server may just be slow,
			// and the SDK told it to give up on the request.
			err = ctx.Err()
		case answered(err):
			// The server answered (unknown tool, bad arguments): it works.
		default:
			s.lost(sess, s.redact.String(err.Error()))
		}
		return fmt.Errorf("mcp %s: %s: %w", s.cfg.Name, what, s.redactErr(err))
	}
	s.mu.Lock()
	if s.sess == sess {
		s.fails = 0
	}
	s.mu.Unlock()
	return nil
}

// Codes the SDK gives errors of its own side of the connection: the
// request never reached the server (HTTP failures are "rejected by
// transport"), or the connection is closing.
const (
	codeClientClosing = -32003
	codeServerClosing = -32004
	codeRejected      = -32005
)

// answered reports whether err is a JSON-RPC error the server sent, which
// proves the connection works.
func answered(err error) bool {
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) {
		return false
	}
	switch wire.Code {
	case codeClientClosing, codeServerClosing, codeRejected:
		return false
	}
	return true
}

func (s *server) listTools(ctx context.Context) ([]ToolInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.startTimeout())
	defer cancel()
	if _, err := s.session(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ToolInfo(nil), s.tools...), nil
}

// redactErr keeps err's identity (errors.Is) while masking secrets in its
// text.
func (s *server) redactErr(err error) error {
	if msg := s.redact.String(err.Error()); msg != err.Error() {
		return redactedError{msg: msg, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

func (s *server) close() {
	s.mu.Lock()
	sess, pid := s.sess, s.pid
	s.sess, s.pid = nil, 0
	s.setState(StateClosed)
	s.mu.Unlock()
	s.cancel()
	if sess != nil {
		closeSession(sess, pid)
	}
}

// closeSession ends a session: the SDK closes a stdio server's stdin and
// waits for it (SIGTERM, then SIGKILL, if it lingers); then whatever the
// server started in its process group is killed too.
func closeSession(sess *sdk.ClientSession, pid int) {
	_ = sess.Close()
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// tailBuffer keeps the end of a server's stderr, for the error of a start
// that failed ("node: not found", a stack trace's last line).
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
}

func newTailBuffer(limit int) *tailBuffer { return &tailBuffer{limit: limit} }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) lastLine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(b.buf)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
