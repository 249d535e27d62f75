package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// NameDelegate is the delegate tool's name. A child run is never offered
// it: delegation is one level deep, so no run can fan out without bound.
const NameDelegate = "delegate"

// MaxDelegateTasks bounds the tasks of one delegate call.
const MaxDelegateTasks = 8

// Workspaces a delegated task may work in.
const (
	DelegateShared  = "shared"  // the parent's workspace itself
	DelegateScratch = "scratch" // a copy of it, thrown away with nothing merged back
)

// DelegateTask is one task of a delegate call.
type DelegateTask struct {
	Prompt    string `json:"prompt"`
	Title     string `json:"title,omitempty"`
	Profile   string `json:"profile,omitempty"`
	Workspace string `json:"workspace,omitempty"`
}

// DelegateOutcome is how one delegated task ended.
type DelegateOutcome struct {
	Index     int    `json:"index"`
	Title     string `json:"title"`
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
	// Status is the child run's final status (completed, failed,
	// cancelled, expired, interrupted).
	Status string `json:"status"`
	Answer string `json:"answer,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Delegator runs the tasks of one delegate call as child runs and waits
// for them (internal/delegate). A task it cannot start is an error of the
// whole call: nothing was delegated, or what was is cancelled.
type Delegator interface {
	Delegate(ctx context.Context, env Env, tasks []DelegateTask) ([]DelegateOutcome, error)
}

type delegate struct{ d Delegator }

// NewDelegate returns the delegate tool over d.
func NewDelegate(d Delegator) Tool { return delegate{d: d} }

const delegateSchema = `{
  "type": "object",
  "properties": {
    "tasks": {
      "type": "array", "minItems": 1, "maxItems": 8,
      "items": {
        "type": "object",
        "properties": {
          "prompt": {"type": "string", "minLength": 1, "description": "The task, self-contained: the subagent sees nothing of this conversation."},
          "title": {"type": "string", "description": "A short name for the task."},
          "profile": {"type": "string", "description": "The agent profile (id) to run it with; default: this session's."},
          "workspace": {"type": "string", "enum": ["shared", "scratch"], "description": "shared: this workspace; scratch: a throw-away copy of it."}
        },
        "required": ["prompt"],
        "additionalProperties": false
      }
    }
  },
  "required": ["tasks"],
  "additionalProperties": false
}`

func (delegate) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameDelegate,
		Description: "Hand one or several independent tasks to subagents that work in parallel, each in a session of its own " +
			"with no view of this conversation. Waits until all are done and returns each one's final answer. " +
			"Give every task a self-contained prompt; use workspace \"scratch\" for experiments that must not touch the files.",
		Parameters: json.RawMessage(delegateSchema),
	}
}

func (delegate) Label(args json.RawMessage) string {
	tasks, err := ParseDelegate(args)
	if err != nil {
		return "delegate (invalid arguments)"
	}
	if len(tasks) == 1 {
		return "delegate: " + truncate(tasks[0].Title, 100)
	}
	return fmt.Sprintf("delegate %d tasks", len(tasks))
}

// Intent: delegating changes nothing itself; each child run's calls pass
// the approval policy of their own session.
func (delegate) Intent(args json.RawMessage) Intent {
	_, err := ParseDelegate(args)
	return Intent{Effect: EffectNone, Action: "delegate", Invalid: err != nil}
}

func (t delegate) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	tasks, err := ParseDelegate(args)
	if err != nil {
		return Result{Status: event.ToolError, Output: err.Error()}, nil
	}
	if t.d == nil || env.CallID == "" || env.RunID == "" {
		return Result{Status: event.ToolError, Output: "delegation is not available here"}, nil
	}
	out, err := t.d.Delegate(ctx, env, tasks)
	if err != nil {
		if ctx.Err() != nil {
			return Result{Status: event.ToolCancelled, Output: "cancelled: " + err.Error(), Data: delegateData{Tasks: out}}, nil
		}
		var bad *DelegateError
		if errors.As(err, &bad) {
			return Result{Status: event.ToolError, Output: bad.Error(), Data: delegateData{Tasks: out}}, nil
		}
		return Result{}, err
	}
	return Result{Status: event.ToolOK, Output: delegateOutput(out), Data: delegateData{Tasks: out}}, nil
}

// Resumable: a delegate call run again after a handover finds the child
// sessions it made (by its tool call id) and waits for them.
func (delegate) Resumable() bool { return true }

// DelegateError is a delegation refused for its arguments (an unknown
// profile, a workspace too large to copy): the model reads it and may
// correct the call.
type DelegateError struct{ Msg string }

func (e *DelegateError) Error() string { return e.Msg }

type delegateData struct {
	Tasks []DelegateOutcome `json:"tasks"`
}

// delegateOutput is what the model reads: every task's outcome, in the
// order given.
func delegateOutput(out []DelegateOutcome) string {
	var b strings.Builder
	for i, o := range out {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "## Task %d: %s (%s; session %s)\n", o.Index+1, o.Title, o.Status, o.SessionID)
		switch {
		case o.Answer != "":
			b.WriteString(o.Answer)
		case o.Error != "":
			b.WriteString("Error: " + o.Error)
		default:
			b.WriteString("(no answer)")
		}
	}
	return b.String()
}

// ParseDelegate validates delegate arguments: 1 to MaxDelegateTasks tasks,
// each with a prompt; a missing title is the prompt's first line and a
// missing workspace is shared.
func ParseDelegate(args json.RawMessage) ([]DelegateTask, error) {
	var a struct {
		Tasks []DelegateTask `json:"tasks"`
	}
	if err := decodeArgs(args, &a); err != nil {
		return nil, fmt.Errorf("invalid arguments: %w", err)
	}
	if len(a.Tasks) == 0 || len(a.Tasks) > MaxDelegateTasks {
		return nil, fmt.Errorf("invalid arguments: give 1 to %d tasks, got %d", MaxDelegateTasks, len(a.Tasks))
	}
	for i := range a.Tasks {
		tk := &a.Tasks[i]
		tk.Prompt = strings.TrimSpace(tk.Prompt)
		if tk.Prompt == "" {
			return nil, fmt.Errorf("invalid arguments: task %d has no prompt", i+1)
		}
		tk.Title = strings.TrimSpace(tk.Title)
		if tk.Title == "" {
			l, _ := firstLine(tk.Prompt)
			tk.Title = truncate(l, 80)
		}
		tk.Profile = strings.TrimSpace(tk.Profile)
		switch tk.Workspace {
		case "":
			tk.Workspace = DelegateShared
		case DelegateShared, DelegateScratch:
		default:
			return nil, fmt.Errorf("invalid arguments: task %d: workspace must be shared or scratch", i+1)
		}
	}
	return a.Tasks, nil
}
