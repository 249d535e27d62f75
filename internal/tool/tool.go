// Package tool defines what an agent can do in a workspace: the Tool
// interface, a Registry, and the built-in tools. Tools return structured
// results (seed 002) and never panic on bad arguments: a bad call is an
// error result the model can read and correct.
package tool

import (
	"context"
	"encoding/json"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

// Env is what a tool call may touch.
type Env struct {
	// Workspace is the absolute, cleaned root every path is confined to.
	Workspace string
	// Progress, when set, receives incremental output (e.g. command stdout);
	// it must not block for long.
	Progress func(stream, text string)
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

// Approval says whether a call needs a person before it runs.
type Approval struct {
	Needed bool
	// Action is the exact thing to approve ("$ rm -rf build").
	Action string
	// Reason explains the risk in one sentence.
	Reason string
}

// Tool is one capability offered to the model.
type Tool interface {
	Spec() provider.ToolSpec
	// Label is a concise human description of a call ("read src/a.go:10-50").
	Label(args json.RawMessage) string
	// Approval reports whether the call needs a person first.
	Approval(args json.RawMessage) Approval
	// Run executes the call. Bad arguments yield an error Result, not an error;
	// the returned error is for failures of the machinery itself.
	Run(ctx context.Context, env Env, args json.RawMessage) (Result, error)
}
