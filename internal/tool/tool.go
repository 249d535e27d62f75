// Package tool defines what an agent can do in a workspace: the Tool
// interface, a Registry, and the built-in tools. Tools return structured
// results (seed 002) and never panic on bad arguments: a bad call is an
// error result the model can read and correct.
package tool

import (
	"context"
	"encoding/json"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/memory"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// Env is what a tool call may touch.
type Env struct {
	// Workspace is the absolute, cleaned root every path is confined to.
	Workspace string
	// SessionID is the session the call belongs to (background processes and
	// todo lists are per session).
	SessionID string
	// RunID is the run the call belongs to (recorded with background
	// processes, for people reading what is left of a run).
	RunID string
	// Progress, when set, receives incremental output (e.g. command stdout);
	// it must not block for long.
	Progress func(stream, text string)
	// Emit, when set, journals an event of the run (todo.updated, ...). It
	// returns an error only when the run has lost its lease.
	Emit func(typ event.Type, payload any) error
	// Memory, when set, is the memory of the run's agent profile, used by
	// the memory tool instead of its own (h16-memory).
	Memory *memory.Store
	// CallID is the id of the tool call being run (the delegate tool keys
	// the child sessions it makes by it).
	CallID string
	// Idle, when set, tells the runner the call only waits for other runs
	// (delegate): the run stops counting against the runner's limit of
	// executing runs, so the children it waits for find a free slot, until
	// the returned func is called. nil: the call cannot release its slot.
	Idle func() (busy func())
}

// Result is the outcome of one tool call.
type Result struct {
	// Status is one of event.ToolOK, ToolError, ToolTimeout, ToolDenied,
	// ToolCancelled.
	Status string
	// Output is the text the model sees.
	Output string
	// Data is a structured result for people (line ranges, exit codes, ...);
	// it is marshalled to JSON.
	Data any
}

// Effect classifies what a call may change. The approval policy
// (internal/policy) decides from it whether a person must agree first.
type Effect int

const (
	EffectNone    Effect = iota // reads the workspace or the tool's own state only
	EffectWrite                 // creates, changes or deletes files in the workspace
	EffectExec                  // runs a process
	EffectNetwork               // talks to other hosts
	EffectMemory                // changes the agent's persistent notes or the user profile
	// EffectExternal: a tool of another program (an MCP server) whose
	// effects Caduceus cannot know; the policy asks unless told otherwise.
	EffectExternal
)

func (e Effect) String() string {
	switch e {
	case EffectNone:
		return "none"
	case EffectWrite:
		return "write"
	case EffectExec:
		return "exec"
	case EffectNetwork:
		return "network"
	case EffectMemory:
		return "memory"
	case EffectExternal:
		return "external"
	}
	return "unknown"
}

// Intent describes what a call would do, before it runs.
type Intent struct {
	Effect Effect
	// Action is the exact thing a person would approve ("$ rm -rf build",
	// "write src/a.go").
	Action string
	// Command is the shell command of an EffectExec call, for pattern
	// matching by the policy.
	Command string
	// Paths are the paths (as given) an EffectWrite call changes.
	Paths []string
	// URL is the address an EffectNetwork call fetches.
	URL string
	// Invalid is set when the arguments do not parse; the call will fail
	// without effect, so the policy need not ask.
	Invalid bool
	// Rule is the verdict a person configured for this very tool where it
	// comes from (an MCP server's setting, per server or per tool):
	// "allow", "ask" or "deny"; "" leaves it to the policy. Only
	// EffectExternal calls honour it.
	Rule string
}

// Resumable is a Tool whose call may run again after the worker executing
// it stopped mid-call, because it finds the work it began instead of doing
// it twice (delegate: its child sessions, by tool call id). Any other
// call found executing after a handover is reported interrupted, not run.
type Resumable interface {
	Resumable() bool
}

// Tool is one capability offered to the model.
type Tool interface {
	Spec() provider.ToolSpec
	// Label is a concise human description of a call ("read src/a.go:10-50").
	Label(args json.RawMessage) string
	// Intent says what the call would do, for the approval policy.
	Intent(args json.RawMessage) Intent
	// Run executes the call. Bad arguments yield an error Result, not an error;
	// the returned error is for failures of the machinery itself.
	Run(ctx context.Context, env Env, args json.RawMessage) (Result, error)
}
