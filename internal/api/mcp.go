package api

// MCP servers (issue 18, h18-mcpwire): /api/mcp/servers configures the
// Model Context Protocol servers whose tools runs are offered, shows each
// one's state, tools and last error, and restarts one.

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/mcp"
	"github.com/caduceus-dev/caduceus/internal/mcpconf"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// MCP is what the API needs of internal/mcpconf.
type MCP interface {
	Reload(ctx context.Context) error
	Seal(id, kind string, clear map[string]string) (map[string]string, error)
	Open(r store.MCPServer, kind string) (map[string]string, error)
	ConfigError(name string) string
	States() map[string]mcp.ServerState
	Restart(ctx context.Context, server string) error
}

// Error codes of the MCP routes.
const (
	CodeMCPUnavailable = "mcp_unavailable" // 503: no MCP manager, or no key to seal secrets with
	CodeMCPNameTaken   = "mcp_name_taken"  // 409
)

// StateDisabled is the state shown for a server switched off.
const mcpStateDisabled = "disabled"

type mcpToolView struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Verdict     string `json:"verdict"` // allow, ask or deny, as configured
}

type mcpServerView struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	Transport      string            `json:"transport"`
	Command        string            `json:"command,omitempty"`
	Args           []string          `json:"args"`
	Dir            string            `json:"dir,omitempty"`
	URL            string            `json:"url,omitempty"`
	Env            map[string]string `json:"env"`     // name -> masked value
	Headers        map[string]string `json:"headers"` // name -> masked value
	StartTimeoutMS int64             `json:"start_timeout_ms"`
	CallTimeoutMS  int64             `json:"call_timeout_ms"`
	Enabled        bool              `json:"enabled"`
	Policy         string            `json:"policy"`
	ToolPolicies   map[string]string `json:"tool_policies"`
	State          string            `json:"state"`
	LastError      string            `json:"last_error,omitempty"`
	Restarts       int               `json:"restarts"`
	PID            int               `json:"pid,omitempty"`
	Tools          []mcpToolView     `json:"tools"`
	CreatedAt      event.Time        `json:"created_at"`
	UpdatedAt      event.Time        `json:"updated_at"`
}

func (a *API) viewMCPServer(s store.MCPServer, states map[string]mcp.ServerState) mcpServerView {
	v := mcpServerView{ID: s.ID, Name: s.Name, Transport: s.Transport, Command: s.Command, Args: s.Args, Dir: s.Dir, URL: s.URL,
		Env: map[string]string{}, Headers: map[string]string{}, StartTimeoutMS: s.StartTimeout.Milliseconds(),
		CallTimeoutMS: s.CallTimeout.Milliseconds(), Enabled: s.Enabled, Policy: s.Policy, ToolPolicies: s.ToolPolicies,
		Tools: []mcpToolView{}, CreatedAt: event.Time{Time: s.CreatedAt}, UpdatedAt: event.Time{Time: s.UpdatedAt}}
	if v.Args == nil {
		v.Args = []string{}
	}
	if v.Policy == "" {
		v.Policy = mcpconf.Ask
	}
	if v.ToolPolicies == nil {
		v.ToolPolicies = map[string]string{}
	}
	for _, f := range []struct {
		kind         string
		sealed, into map[string]string
	}{{"env", s.Env, v.Env}, {"header", s.Headers, v.Headers}} {
		clear, err := a.opt.MCP.Open(s, f.kind)
		for name := range f.sealed {
			f.into[name] = "…" // a value that cannot be opened shows as set
			if err == nil {
				f.into[name] = mcpconf.Mask(clear[name])
			}
		}
	}
	st, ok := states[s.Name]
	switch {
	case !s.Enabled:
		v.State = mcpStateDisabled
	case !ok:
		v.State = string(mcp.StateFailed)
		v.LastError = a.opt.MCP.ConfigError(s.Name)
	default:
		v.State, v.LastError, v.Restarts, v.PID = string(st.State), st.LastError, st.Restarts, st.PID
		for _, t := range st.Tools {
			verdict := s.ToolPolicies[t.Name]
			if verdict == "" {
				verdict = v.Policy
			}
			v.Tools = append(v.Tools, mcpToolView{Name: t.Name, Title: t.Title, Description: t.Description, Verdict: verdict})
		}
	}
	if a.opt.Redactor != nil {
		v.LastError = a.opt.Redactor.String(v.LastError)
	}
	return v
}

// mcpServerInput is the body of POST and PATCH. Env and Headers replace
// the whole map when given; a value equal to its masked form (as GET
// shows it) keeps the stored value, so a client can send back what it
// read with one value changed.
type mcpServerInput struct {
	Name           *string            `json:"name"`
	Transport      *string            `json:"transport"`
	Command        *string            `json:"command"`
	Args           *[]string          `json:"args"`
	Dir            *string            `json:"dir"`
	URL            *string            `json:"url"`
	Env            *map[string]string `json:"env"`
	Headers        *map[string]string `json:"headers"`
	StartTimeoutMS *int64             `json:"start_timeout_ms"`
	CallTimeoutMS  *int64             `json:"call_timeout_ms"`
	Enabled        *bool              `json:"enabled"`
	Policy         *string            `json:"policy"`
	ToolPolicies   *map[string]string `json:"tool_policies"`
}

func validVerdict(v string) bool {
	return v == mcpconf.Allow || v == mcpconf.Ask || v == mcpconf.Deny
}

// applyMCPServer changes s by in and checks the result; secrets are
// sealed. Nothing is stored.
func (a *API) applyMCPServer(r *http.Request, s *store.MCPServer, in mcpServerInput) error {
	bad := func(msg string) error { return &control.Error{Code: control.CodeInvalidInput, Message: msg} }
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = strings.TrimSpace(*src)
		}
	}
	set(&s.Name, in.Name)
	set(&s.Transport, in.Transport)
	set(&s.Command, in.Command)
	set(&s.Dir, in.Dir)
	set(&s.URL, in.URL)
	if in.Args != nil {
		s.Args = slices.Clone(*in.Args)
	}
	if in.StartTimeoutMS != nil {
		s.StartTimeout = time.Duration(*in.StartTimeoutMS) * time.Millisecond
	}
	if in.CallTimeoutMS != nil {
		s.CallTimeout = time.Duration(*in.CallTimeoutMS) * time.Millisecond
	}
	if in.Enabled != nil {
		s.Enabled = *in.Enabled
	}
	if in.Policy != nil {
		s.Policy = strings.TrimSpace(*in.Policy)
		if s.Policy == "" {
			s.Policy = mcpconf.Ask
		}
	}
	if s.Policy != "" && !validVerdict(s.Policy) {
		return bad("policy must be allow, ask or deny")
	}
	if in.ToolPolicies != nil {
		s.ToolPolicies = nil
		for t, v := range *in.ToolPolicies {
			if t == "" || !validVerdict(v) {
				return bad("tool_policies map tool names to allow, ask or deny")
			}
			if s.ToolPolicies == nil {
				s.ToolPolicies = map[string]string{}
			}
			s.ToolPolicies[t] = v
		}
	}
	if s.StartTimeout < 0 || s.CallTimeout < 0 || s.StartTimeout > time.Hour || s.CallTimeout > 24*time.Hour {
		return bad("timeouts are 0 (the default) or positive: start at most an hour, a call at most a day")
	}
	for kind, src := range map[string]*map[string]string{"env": in.Env, "header": in.Headers} {
		if src == nil {
			continue
		}
		if err := a.replaceMCPSecrets(s, kind, *src); err != nil {
			return err
		}
	}
	// The mcp package's own checks (name, transport and its fields),
	// on the configuration with placeholder values.
	c := mcp.ServerConfig{Name: s.Name, Transport: s.Transport, Command: s.Command, Args: s.Args, Dir: s.Dir, URL: s.URL,
		StartTimeout: s.StartTimeout, CallTimeout: s.CallTimeout}
	for k := range s.Env {
		c.Env = append(c.Env, k+"=x")
	}
	if len(s.Headers) > 0 {
		c.Headers = map[string]string{}
		for k := range s.Headers {
			c.Headers[k] = "x"
		}
	}
	if err := c.Validate(); err != nil {
		return bad(strings.TrimPrefix(err.Error(), mcp.ErrInvalidConfig.Error()+": "))
	}
	for k := range s.Env {
		if strings.ContainsAny(k, "=\x00") {
			return bad("environment variable names hold no '=' or NUL")
		}
	}
	others, err := a.st.ListMCPServers(r.Context())
	if err != nil {
		return err
	}
	for _, o := range others {
		if o.ID != s.ID && o.Name == s.Name {
			return &control.Error{Code: CodeMCPNameTaken, Message: "another MCP server is called " + s.Name}
		}
	}
	return nil
}

// replaceMCPSecrets makes clear s's env or headers: a value equal to the
// stored one's mask keeps the stored value; others are sealed.
func (a *API) replaceMCPSecrets(s *store.MCPServer, kind string, clear map[string]string) error {
	old, err := a.opt.MCP.Open(*s, kind)
	if err != nil {
		old = nil // unreadable: every value must be given afresh
	}
	stored := s.Env
	if kind == "header" {
		stored = s.Headers
	}
	next := map[string]string{}
	fresh := map[string]string{}
	for k, v := range clear {
		if prev, ok := old[k]; ok && (v == mcpconf.Mask(prev) || v == "…") {
			next[k] = stored[k]
			continue
		}
		if v == "" {
			return &control.Error{Code: control.CodeInvalidInput, Message: kind + " " + k + " has no value"}
		}
		fresh[k] = v
	}
	sealed, err := a.opt.MCP.Seal(s.ID, kind, fresh)
	if err != nil {
		return &control.Error{Code: CodeMCPUnavailable, Message: "no key to seal the server's secrets with: " + err.Error()}
	}
	maps.Copy(next, sealed)
	if len(next) == 0 {
		next = nil
	}
	if kind == "header" {
		s.Headers = next
	} else {
		s.Env = next
	}
	return nil
}

// failMCP answers the MCP routes' own codes with their status; the
// others as every route does.
func (a *API) failMCP(w http.ResponseWriter, r *http.Request, err error) {
	var ce *control.Error
	if errors.As(err, &ce) {
		switch ce.Code {
		case CodeMCPNameTaken:
			writeError(w, http.StatusConflict, ce.Code, ce.Message, nil)
			return
		case CodeMCPUnavailable:
			writeError(w, http.StatusServiceUnavailable, ce.Code, ce.Message, nil)
			return
		}
	}
	a.fail(w, r, err)
}

func (a *API) mcpReady(w http.ResponseWriter) bool {
	if a.opt.MCP == nil {
		writeError(w, http.StatusServiceUnavailable, CodeMCPUnavailable, "MCP servers are not available on this server", nil)
		return false
	}
	return true
}

func (a *API) listMCPServers(w http.ResponseWriter, r *http.Request) {
	if !a.mcpReady(w) {
		return
	}
	rows, err := a.st.ListMCPServers(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	states := a.opt.MCP.States()
	out := make([]mcpServerView, len(rows))
	for i, s := range rows {
		out[i] = a.viewMCPServer(s, states)
	}
	writeJSON(w, http.StatusOK, map[string]any{"servers": out})
}

func (a *API) mcpServerOf(w http.ResponseWriter, r *http.Request) (store.MCPServer, bool) {
	if !a.mcpReady(w) {
		return store.MCPServer{}, false
	}
	sid, ok := pathID(w, r, "mcp", "MCP server")
	if !ok {
		return store.MCPServer{}, false
	}
	s, err := a.st.GetMCPServer(r.Context(), sid)
	if err != nil {
		a.failHook(w, r, err, "MCP server")
		return s, false
	}
	return s, true
}

// afterMCPWrite applies the stored configuration to this process's
// manager at once (other processes within a poll) and answers the view.
func (a *API) afterMCPWrite(w http.ResponseWriter, r *http.Request, status int, s store.MCPServer) {
	if err := a.opt.MCP.Reload(r.Context()); err != nil {
		a.log.Warn("applying the MCP servers after a change", "err", err)
	}
	if status == http.StatusNoContent {
		w.WriteHeader(status)
		return
	}
	writeJSON(w, status, a.viewMCPServer(s, a.opt.MCP.States()))
}

func (a *API) createMCPServer(w http.ResponseWriter, r *http.Request) {
	if !a.mcpReady(w) {
		return
	}
	var in mcpServerInput
	if !decode(w, r, &in) {
		return
	}
	now := a.opt.Now()
	s := store.MCPServer{ID: id.New("mcp"), Enabled: true, Policy: mcpconf.Ask, CreatedAt: now, UpdatedAt: now}
	if err := a.applyMCPServer(r, &s, in); err != nil {
		a.failMCP(w, r, err)
		return
	}
	if err := a.st.Write(r.Context(), func(tx store.Tx) error { return tx.InsertMCPServer(r.Context(), s) }); err != nil {
		a.fail(w, r, err)
		return
	}
	a.afterMCPWrite(w, r, http.StatusCreated, s)
}

func (a *API) getMCPServer(w http.ResponseWriter, r *http.Request) {
	if s, ok := a.mcpServerOf(w, r); ok {
		writeJSON(w, http.StatusOK, a.viewMCPServer(s, a.opt.MCP.States()))
	}
}

func (a *API) patchMCPServer(w http.ResponseWriter, r *http.Request) {
	s, ok := a.mcpServerOf(w, r)
	var in mcpServerInput
	if !ok || !decode(w, r, &in) {
		return
	}
	if err := a.applyMCPServer(r, &s, in); err != nil {
		a.failMCP(w, r, err)
		return
	}
	s.UpdatedAt = a.opt.Now()
	if err := a.st.Write(r.Context(), func(tx store.Tx) error { return tx.UpdateMCPServer(r.Context(), s) }); err != nil {
		a.fail(w, r, err)
		return
	}
	a.afterMCPWrite(w, r, http.StatusOK, s)
}

func (a *API) deleteMCPServer(w http.ResponseWriter, r *http.Request) {
	s, ok := a.mcpServerOf(w, r)
	if !ok {
		return
	}
	if err := a.st.Write(r.Context(), func(tx store.Tx) error { return tx.DeleteMCPServer(r.Context(), s.ID) }); err != nil {
		a.fail(w, r, err)
		return
	}
	a.afterMCPWrite(w, r, http.StatusNoContent, s)
}

// restartMCPServer: POST /api/mcp/servers/{id}/restart closes the server's
// connection (its process ends) and starts it again; the answer shows
// whether it came back (state ready) or why not (last_error).
func (a *API) restartMCPServer(w http.ResponseWriter, r *http.Request) {
	s, ok := a.mcpServerOf(w, r)
	if !ok {
		return
	}
	if !s.Enabled {
		writeError(w, http.StatusConflict, control.CodeInvalidInput, "the server is disabled: enable it first", nil)
		return
	}
	// A server another process just added may not be in this process's
	// manager before its next poll.
	if err := a.opt.MCP.Reload(r.Context()); err != nil {
		a.log.Warn("applying the MCP servers before a restart", "err", err)
	}
	if err := a.opt.MCP.Restart(r.Context(), s.Name); err != nil && errors.Is(err, mcp.ErrUnknownServer) {
		writeError(w, http.StatusConflict, control.CodeInvalidInput, "the server's configuration is not in use: "+a.opt.MCP.ConfigError(s.Name), nil)
		return
	}
	// A start that failed is in the state's last_error.
	writeJSON(w, http.StatusOK, a.viewMCPServer(s, a.opt.MCP.States()))
}
