package tool

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/netguard"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/skill"
)

// Names of the built-in tools. The agent loop matches NameClarify to turn
// the call into a human request instead of running it.
const (
	NameListDir    = "list_dir"
	NameReadFile   = "read_file"
	NameRunCommand = "run_command"
	NameClarify    = "clarify"
)

// Defaults for Config's zero values.
const (
	DefaultCommandTimeout    = 2 * time.Minute
	DefaultMaxCommandTimeout = 10 * time.Minute
	DefaultOutputCap         = 64 << 10
	DefaultReadCap           = 256 << 10
)

// Config tunes the built-in tools. Zero (or negative) values mean defaults.
type Config struct {
	// CommandTimeout applies to run_command calls that give no timeout_s.
	CommandTimeout time.Duration
	// MaxCommandTimeout caps the timeout_s a call may ask for; never below
	// CommandTimeout.
	MaxCommandTimeout time.Duration
	// OutputCap bounds the command output kept for the model, in bytes;
	// beyond it the head and the tail are kept.
	OutputCap int
	// ReadCap bounds the file content read_file returns, in bytes.
	ReadCap int
	// Environ is the environment commands take their variables from; nil
	// means the runner's own (os.Environ). Only an allow-list of harmless
	// variables passes (PATH, HOME, the locale, ...: see commandEnv), so a
	// command such as `env` cannot hand provider keys to the model.
	Environ []string
	// ExtraEnv adds variables to commands' environment: "NAME=value", or
	// "NAME" to pass the value Environ holds. A name that looks secret
	// (secret.LooksSecret) is dropped all the same.
	ExtraEnv []string
	// Processes holds run_command's background processes; the process tool
	// reads and kills them. Nil refuses background commands. The owner
	// closes it at shutdown. Its registry, if any, also records foreground
	// commands while they run.
	Processes *ProcessTable
	// BackgroundTimeout bounds how long a background command may run
	// (default DefaultBackgroundTimeout): long enough for a dev server,
	// short enough that a forgotten one does not run for days.
	BackgroundTimeout time.Duration
	// FetchTimeout bounds a whole web_fetch call, body included (default
	// DefaultFetchTimeout).
	FetchTimeout time.Duration
	// Memory backs the memory tool; nil answers "not configured".
	Memory *memory.Store
	// Skills backs the skills tool; nil answers "not configured".
	Skills *skill.Library
	// WebSearch backs web_search; nil (or no back-end configured) leaves
	// it out of the tools a run offers (Registry.Available).
	WebSearch WebSearcher
	// HTTPClient makes web_fetch's requests; nil means a client that dials
	// through Net. Redirects are limited and the timeout applied whatever
	// client is given.
	HTTPClient *http.Client
	// Net confines web_fetch's connections (when HTTPClient is nil): a name
	// that resolves to a private address is refused unless Net allows it.
	// Nil means a guard with the defaults (every private address refused
	// but the one a person approved by name; see webFetch.client).
	Net *netguard.Guard
}

func (c Config) withDefaults() Config {
	if c.CommandTimeout <= 0 {
		c.CommandTimeout = DefaultCommandTimeout
	}
	if c.MaxCommandTimeout <= 0 {
		c.MaxCommandTimeout = DefaultMaxCommandTimeout
	}
	c.MaxCommandTimeout = max(c.MaxCommandTimeout, c.CommandTimeout)
	if c.OutputCap <= 0 {
		c.OutputCap = DefaultOutputCap
	}
	if c.ReadCap <= 0 {
		c.ReadCap = DefaultReadCap
	}
	return c
}

// Registry is an immutable set of tools keyed by name; safe for concurrent
// use.
type Registry struct {
	tools map[string]Tool
	names []string // sorted
}

// NewRegistry builds a registry. A nil tool, an empty name or a name given
// twice is a programming error and panics, like a duplicate route would.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		if t == nil {
			panic("tool: NewRegistry: nil tool")
		}
		name := t.Spec().Name
		if name == "" {
			panic("tool: NewRegistry: tool with an empty name")
		}
		if _, dup := r.tools[name]; dup {
			panic(fmt.Sprintf("tool: NewRegistry: duplicate tool %q", name))
		}
		r.tools[name] = t
		r.names = append(r.names, name)
	}
	slices.Sort(r.names)
	return r
}

// Builtin returns every built-in tool, configured by cfg.
func Builtin(cfg Config) *Registry {
	return NewRegistry(
		NewListDir(cfg), NewReadFile(cfg), NewGlob(cfg), NewGrep(cfg),
		NewWriteFile(cfg), NewEditFile(cfg),
		NewRunCommand(cfg), NewProcess(cfg),
		NewWebFetch(cfg), NewWebSearch(cfg.WebSearch), NewTodo(), NewClarify(),
		NewMemory(cfg.Memory), NewSkills(cfg.Skills),
		// Offered only in a session with an active goal: the runner takes
		// it out of other runs (Registry.Without).
		NewUpdateGoal(),
	)
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Specs describes every tool to the model, ordered by name so that prompts
// (and provider prompt caches) are stable.
func (r *Registry) Specs() []provider.ToolSpec {
	specs := make([]provider.ToolSpec, 0, len(r.names))
	for _, n := range r.names {
		specs = append(specs, r.tools[n].Spec())
	}
	return specs
}

// Names lists the tool names in order.
func (r *Registry) Names() []string {
	return slices.Clone(r.names)
}

// With returns a registry of r's tools and extra (a run's MCP tools); a
// tool of extra named like one already there is left out, so a server
// cannot shadow a built-in.
func (r *Registry) With(extra ...Tool) *Registry {
	all := make([]Tool, 0, len(r.names)+len(extra))
	for _, n := range r.names {
		all = append(all, r.tools[n])
	}
	seen := maps.Clone(r.tools)
	for _, t := range extra {
		if t == nil {
			continue
		}
		name := t.Spec().Name
		if _, dup := seen[name]; dup || name == "" {
			continue
		}
		seen[name] = t
		all = append(all, t)
	}
	return NewRegistry(all...)
}
