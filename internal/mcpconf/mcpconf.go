// Package mcpconf feeds the MCP servers configured in the store (Settings,
// /api/mcp/servers) to the process's one mcp.Manager, and gives a run the
// tools of the enabled servers with each tool's configured verdict
// (allow, ask or deny; default ask) for the approval policy.
//
// A change made through this process's API takes effect at once (Reload
// after the write); one made by another process sharing the database
// within the poll interval of Watch, as the providers and settings do
// (internal/settings): a few ids and update times are compared, and the
// configuration is rebuilt only when they moved.
package mcpconf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/mcp"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// PollEvery is how often Watch looks for changes other processes made.
const PollEvery = 2 * time.Second

// Verdicts a server or tool may be configured with.
const (
	Allow = "allow"
	Ask   = "ask"
	Deny  = "deny"
)

// Keys gives the box sealing env and header values (settings.Keys).
type Keys func(create bool) (*secretbox.Box, error)

// Redactor learns every value opened, so none reaches a log or an output.
type Redactor interface{ Add(secrets ...string) }

// Reader is what the service reads of the store.
type Reader interface {
	ListMCPServers(ctx context.Context) ([]store.MCPServer, error)
}

// Service keeps a Manager in step with the stored configuration.
type Service struct {
	st  Reader
	m   *mcp.Manager
	key Keys
	red Redactor
	log *slog.Logger

	mu    sync.Mutex
	stamp string                     // of the rows last applied
	names []string                   // enabled servers, by name
	rules map[string]store.MCPServer // name -> its row (policy)
	errs  map[string]string          // name -> why it is left out
}

// New returns a service over m; nothing is loaded until Reload.
func New(st Reader, m *mcp.Manager, keys Keys, red Redactor, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{st: st, m: m, key: keys, red: red, log: log}
}

// Manager is the manager the service feeds.
func (s *Service) Manager() *mcp.Manager { return s.m }

// SecretContext is the secretbox context of a server's env or header value.
func SecretContext(serverID, kind, name string) string {
	return "mcp:" + serverID + ":" + kind + ":" + name
}

// Reload reads the stored servers and updates the manager (servers whose
// configuration did not change keep running). A server whose secrets
// cannot be opened or whose configuration is invalid is left out
// (ConfigError says why); the others run.
func (s *Service) Reload(ctx context.Context) error { return s.reload(ctx, true) }

func (s *Service) reload(ctx context.Context, always bool) error {
	rows, err := s.st.ListMCPServers(ctx)
	if err != nil {
		return fmt.Errorf("load MCP servers: %w", err)
	}
	stamp := stampOf(rows)
	s.mu.Lock()
	same := stamp == s.stamp
	s.mu.Unlock()
	if same && !always {
		return nil
	}
	var configs []mcp.ServerConfig
	var names []string
	rules := map[string]store.MCPServer{}
	errs := map[string]string{}
	for _, r := range rows {
		if !r.Enabled {
			continue
		}
		c, err := s.config(r)
		if err == nil {
			err = c.Validate()
		}
		if err != nil {
			errs[r.Name] = err.Error()
			s.log.Warn("MCP server left out", "server", r.Name, "err", err)
			continue
		}
		configs = append(configs, c)
		names = append(names, r.Name)
		rules[r.Name] = r
	}
	if err := s.m.Update(configs); err != nil {
		return fmt.Errorf("update MCP servers: %w", err)
	}
	s.mu.Lock()
	s.stamp, s.names, s.rules, s.errs = stamp, names, rules, errs
	s.mu.Unlock()
	return nil
}

// config opens r's secrets into an mcp.ServerConfig.
func (s *Service) config(r store.MCPServer) (mcp.ServerConfig, error) {
	c := mcp.ServerConfig{Name: r.Name, Transport: r.Transport, Command: r.Command, Args: r.Args, Dir: r.Dir, URL: r.URL,
		StartTimeout: r.StartTimeout, CallTimeout: r.CallTimeout}
	env, err := s.open(r.ID, "env", r.Env)
	if err != nil {
		return c, err
	}
	for _, k := range sortedKeys(env) {
		c.Env = append(c.Env, k+"="+env[k])
	}
	if c.Headers, err = s.open(r.ID, "header", r.Headers); err != nil {
		return c, err
	}
	if len(c.Headers) == 0 {
		c.Headers = nil
	}
	return c, nil
}

// Open opens the sealed values of one of r's maps ("env" or "header").
func (s *Service) Open(r store.MCPServer, kind string) (map[string]string, error) {
	m := r.Env
	if kind == "header" {
		m = r.Headers
	}
	return s.open(r.ID, kind, m)
}

func (s *Service) open(id, kind string, sealed map[string]string) (map[string]string, error) {
	if len(sealed) == 0 {
		return nil, nil
	}
	if s.key == nil {
		return nil, errors.New("no secret key to open the server's secrets with")
	}
	box, err := s.key(false)
	if err != nil {
		return nil, fmt.Errorf("the server's secrets cannot be opened: %w", err)
	}
	out := make(map[string]string, len(sealed))
	for k, v := range sealed {
		clear, err := box.Open(v, SecretContext(id, kind, k))
		if err != nil {
			return nil, fmt.Errorf("%s %s cannot be opened: %w", kind, k, err)
		}
		if s.red != nil && len(clear) >= 4 {
			s.red.Add(clear)
		}
		out[k] = clear
	}
	return out, nil
}

// Seal seals the values of one of a server's maps for the store.
func (s *Service) Seal(id, kind string, clear map[string]string) (map[string]string, error) {
	if len(clear) == 0 {
		return nil, nil
	}
	if s.key == nil {
		return nil, errors.New("no secret key to seal with")
	}
	box, err := s.key(true)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(clear))
	for k, v := range clear {
		if out[k], err = box.Seal(v, SecretContext(id, kind, k)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ConfigError is why an enabled server was left out of the manager ("" if
// it was not).
func (s *Service) ConfigError(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs[name]
}

// Verdict is the configured verdict of server's tool: the tool's own, else
// the server's, else ask.
func (s *Service) Verdict(server, toolName string) string {
	s.mu.Lock()
	r := s.rules[server]
	s.mu.Unlock()
	return verdictOf(r, toolName)
}

func verdictOf(r store.MCPServer, toolName string) string {
	if v := r.ToolPolicies[toolName]; v != "" {
		return v
	}
	if r.Policy != "" {
		return r.Policy
	}
	return Ask
}

// Tools are the tools of every enabled server for a run, denied ones left
// out. A server that cannot start contributes none; the error says why,
// and the run goes on with the others.
func (s *Service) Tools(ctx context.Context) ([]tool.Tool, error) {
	s.mu.Lock()
	names := slices.Clone(s.names)
	s.mu.Unlock()
	if len(names) == 0 {
		return nil, nil
	}
	return mcp.NewServerTools(ctx, s.m, names, s.Verdict)
}

// Watch reloads every interval until ctx ends, so that changes other
// processes make take effect here.
func (s *Service) Watch(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = PollEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.reload(ctx, false); err != nil && ctx.Err() == nil {
				s.log.Warn("reloading MCP servers failed; keeping the last ones", "err", err)
			}
		}
	}
}

// stampOf summarises what Reload would load: ids and update times.
func stampOf(rows []store.MCPServer) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.ID + "@" + strconv.FormatInt(r.UpdatedAt.UnixNano(), 10) + ";")
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// States are the manager's servers' states, by name.
func (s *Service) States() map[string]mcp.ServerState {
	out := map[string]mcp.ServerState{}
	for _, st := range s.m.States() {
		out[st.Name] = st
	}
	return out
}

// Restart closes server's connection and starts it again at once within
// ctx (its tools are listed), so the answer says whether it came back.
func (s *Service) Restart(ctx context.Context, server string) error {
	if err := s.m.Restart(server); err != nil {
		return err
	}
	_, err := s.m.ListTools(ctx, server)
	return err
}

// Mask shows a secret value as a hint: its first three and last four
// characters around "…" when it is long enough for that to leave most of
// it hidden, else only "…".
func Mask(v string) string {
	r := []rune(v)
	if len(r) < 12 {
		return "…"
	}
	return string(r[:3]) + "…" + string(r[len(r)-4:])
}
