package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"
)

// Defaults for Options' zero values.
const (
	DefaultBackoffBase = 500 * time.Millisecond
	DefaultBackoffMax  = 30 * time.Second
	// DefaultMaxRestarts is how many times in a row a server that keeps
	// dying is restarted on its own before it is left failed until its next
	// use.
	DefaultMaxRestarts = 5
	// DefaultStableAfter is how long a server must have run for its end
	// not to count as one more failure in a row.
	DefaultStableAfter = time.Minute
)

// Options tune a Manager. Zero values mean defaults.
type Options struct {
	// Logger receives the servers' lifecycle (never an environment value or
	// a header); nil discards it.
	Logger *slog.Logger
	// Environ is the environment stdio servers take their base variables
	// from (filtered by tool.CommandEnv); nil means os.Environ().
	Environ []string
	// BackoffBase and BackoffMax bound the wait before the n-th restart in
	// a row: BackoffBase * 2^(n-1), at most BackoffMax.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// MaxRestarts bounds the restarts in a row done without a caller
	// (DefaultMaxRestarts).
	MaxRestarts int
	// StableAfter is how long a server must have run before its end starts
	// the backoff afresh (DefaultStableAfter).
	StableAfter time.Duration
	// ClientName and ClientVersion are what Caduceus calls itself in the
	// initialize handshake (default "caduceus", "dev").
	ClientName, ClientVersion string
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = DefaultBackoffBase
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = DefaultBackoffMax
	}
	o.BackoffMax = max(o.BackoffMax, o.BackoffBase)
	if o.MaxRestarts <= 0 {
		o.MaxRestarts = DefaultMaxRestarts
	}
	if o.StableAfter <= 0 {
		o.StableAfter = DefaultStableAfter
	}
	if o.ClientName == "" {
		o.ClientName = "caduceus"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	return o
}

// Errors a caller may branch on (errors.Is).
var (
	ErrUnknownServer = errors.New("no such MCP server")
	ErrClosed        = errors.New("MCP manager closed")
	// ErrUnavailable: the server could not be started or reached; the
	// error says why and when it is tried again.
	ErrUnavailable = errors.New("MCP server unavailable")
)

// Manager runs the configured MCP servers. It is safe for concurrent use.
type Manager struct {
	opts Options

	mu      sync.Mutex
	servers map[string]*server
	closed  bool
}

// NewManager returns a manager of configs; no server starts until it is
// used. Invalid or duplicate configurations are an error (ErrInvalidConfig)
// and nothing is kept.
func NewManager(opts Options, configs []ServerConfig) (*Manager, error) {
	if err := validateAll(configs); err != nil {
		return nil, err
	}
	m := &Manager{opts: opts.withDefaults(), servers: map[string]*server{}}
	for _, c := range configs {
		m.servers[c.Name] = newServer(c, m.opts)
	}
	return m, nil
}

func validateAll(configs []ServerConfig) error {
	seen := map[string]bool{}
	for _, c := range configs {
		if err := c.Validate(); err != nil {
			return err
		}
		if seen[c.Name] {
			return fmt.Errorf("%w: server %q is configured twice", ErrInvalidConfig, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// Update replaces the configuration: servers no longer configured, and
// those whose configuration changed, are closed (calls in flight on them
// fail); changed and new ones start on their next use; unchanged ones keep
// running. An invalid configuration changes nothing.
func (m *Manager) Update(configs []ServerConfig) error {
	if err := validateAll(configs); err != nil {
		return err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	var stale []*server
	next := make(map[string]*server, len(configs))
	for _, c := range configs {
		if s, ok := m.servers[c.Name]; ok && s.cfg.Equal(c) {
			next[c.Name] = s
			continue
		}
		next[c.Name] = newServer(c, m.opts)
	}
	for name, s := range m.servers {
		if next[name] != s {
			stale = append(stale, s)
		}
	}
	m.servers = next
	m.mu.Unlock()
	for _, s := range stale {
		m.opts.Logger.Info("mcp: closing server after a configuration change", "server", s.cfg.Name)
	}
	closeAll(stale)
	return nil
}

// Restart closes server's connection (its process and what it started
// end; calls in flight fail) and forgets its failures: it starts afresh,
// from the bottom of the backoff, on its next use.
func (m *Manager) Restart(server string) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	old, ok := m.servers[server]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownServer, server)
	}
	m.servers[server] = newServer(old.cfg, m.opts)
	m.mu.Unlock()
	m.opts.Logger.Info("mcp: restarting server on request", "server", server)
	old.close()
	return nil
}

// closeAll closes servers side by side: each may wait a few seconds for
// its process to exit.
func closeAll(servers []*server) {
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.close)
	}
	wg.Wait()
}

// Close stops every server and waits for their processes to exit (a
// process that ignores its closed stdin is sent SIGTERM after 2 s, then
// SIGKILL). Calls afterwards fail with ErrClosed.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.servers = nil
	m.mu.Unlock()
	closeAll(servers)
	return nil
}

func (m *Manager) server(name string) (*server, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	s, ok := m.servers[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownServer, name)
	}
	return s, nil
}

// Servers lists the configured server names, sorted.
func (m *Manager) Servers() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.servers))
	for n := range m.servers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ListTools lists the tools of server, starting it if it is not running.
func (m *Manager) ListTools(ctx context.Context, server string) ([]ToolInfo, error) {
	s, err := m.server(server)
	if err != nil {
		return nil, err
	}
	return s.listTools(ctx)
}

// Call calls tool on server with args (a JSON object; empty means {}),
// starting the server if needed, within the server's CallTimeout and ctx.
// A result the server marks as an error (IsError) is a result, not an
// error; an error means the call did not reach the server, timed out
// (context.DeadlineExceeded) or the server answered with a protocol error.
func (m *Manager) Call(ctx context.Context, server, tool string, args json.RawMessage) (*CallResult, error) {
	s, err := m.server(server)
	if err != nil {
		return nil, err
	}
	return s.call(ctx, tool, args)
}

// States reports every server's state, sorted by name.
func (m *Manager) States() []ServerState {
	m.mu.Lock()
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.mu.Unlock()
	out := make([]ServerState, 0, len(servers))
	for _, s := range servers {
		out = append(out, s.snapshot())
	}
	slices.SortFunc(out, func(a, b ServerState) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}
