package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
)

// NameUpdateGoal is the tool the agent reports on the session's goal with.
// It is offered only in a session that has an active goal.
const NameUpdateGoal = "update_goal"

// Statuses the agent may report.
const (
	GoalInProgress = "in_progress"
	GoalMet        = "met"
	GoalBlocked    = "blocked"
)

// MaxGoalNote bounds a report's note (runes).
const MaxGoalNote = 2000

// GoalReport is update_goal's structured result: what the agent reported.
// The server reads it from the call's tool.done when the run ends and
// decides from it whether another run follows.
type GoalReport struct {
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
}

type updateGoalTool struct{}

// NewUpdateGoal returns the update_goal tool. It keeps no state: the
// journal's tool.done is the record, read when the run ends.
func NewUpdateGoal() Tool { return updateGoalTool{} }

const updateGoalSchema = `{
  "type": "object",
  "properties": {
    "status": {"type": "string", "enum": ["in_progress", "met", "blocked"], "description": "in_progress: more work is needed (another run follows by itself); met: the goal is reached; blocked: you cannot go on without a person."},
    "note": {"type": "string", "maxLength": 2000, "description": "What was done, what is left, or what blocks you."}
  },
  "required": ["status"],
  "additionalProperties": false
}`

func (updateGoalTool) Spec() provider.ToolSpec {
	return provider.ToolSpec{
		Name: NameUpdateGoal,
		Description: "Report progress on the session's goal. Call it with status met once the goal is reached " +
			"(no further run follows), blocked when you cannot go on without the person, or in_progress with a note " +
			"of what is left. While the goal is neither met nor blocked, a new run continues after this one.",
		Parameters: json.RawMessage(updateGoalSchema),
	}
}

// ParseGoalReport validates update_goal's arguments.
func ParseGoalReport(args json.RawMessage) (GoalReport, error) {
	var a GoalReport
	if err := decodeArgs(args, &a); err != nil {
		return a, err
	}
	switch a.Status {
	case GoalInProgress, GoalMet, GoalBlocked:
	case "":
		return a, errors.New("status is required: in_progress, met or blocked")
	default:
		return a, fmt.Errorf("status must be in_progress, met or blocked, got %q", a.Status)
	}
	a.Note = strings.TrimSpace(a.Note)
	if n := utf8.RuneCountInString(a.Note); n > MaxGoalNote {
		return a, fmt.Errorf("note is %d characters, at most %d", n, MaxGoalNote)
	}
	return a, nil
}

func (updateGoalTool) Label(args json.RawMessage) string {
	r, err := ParseGoalReport(args)
	if err != nil {
		return "update goal (invalid arguments)"
	}
	return "goal: " + strings.ReplaceAll(r.Status, "_", " ")
}

func (updateGoalTool) Intent(json.RawMessage) Intent { return Intent{Effect: EffectNone} }

func (updateGoalTool) Run(_ context.Context, _ Env, args json.RawMessage) (Result, error) {
	r, err := ParseGoalReport(args)
	if err != nil {
		return invalidArgs(err), nil
	}
	out := map[string]string{
		GoalInProgress: "Noted: the goal is in progress. Another run continues after this one unless a limit is reached.",
		GoalMet:        "Noted: the goal is met. No further run follows.",
		GoalBlocked:    "Noted: the goal is blocked. It waits for the person.",
	}[r.Status]
	return Result{Status: event.ToolOK, Output: out, Data: r}, nil
}

// Without returns a registry of r's tools but those named.
func (r *Registry) Without(names ...string) *Registry {
	var keep []Tool
	for _, n := range r.names {
		if !slices.Contains(names, n) {
			keep = append(keep, r.tools[n])
		}
	}
	return NewRegistry(keep...)
}
