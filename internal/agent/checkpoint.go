package agent

import (
	"context"

	"github.com/caduceus-dev/caduceus/internal/checkpoint"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// Checkpointer records the workspace before a tool call that may change
// it, so a person can see what the call changed and take it back.
type Checkpointer interface {
	Checkpoint(ctx context.Context, workspace string, m checkpoint.Meta) (event.CheckpointCreatedPayload, error)
}

// mayChange says whether a call may change the workspace: every write and
// every command. The policy's reading of a command is about risk, not about
// whether it writes (sed -i, a build, a script all look harmless), so no
// command counts as read-only here: a checkpoint with nothing changed
// costs one small commit.
func mayChange(in tool.Intent) bool {
	return !in.Invalid && (in.Effect == tool.EffectWrite || in.Effect == tool.EffectExec)
}

// checkpoint takes the checkpoint before call c when it may change the
// workspace. A checkpoint that cannot be taken refuses the call (refused
// is its result): a change nobody could undo is worse than a tool error
// the model can report. err is only a failed emit (the run must stop).
func (l *Loop) checkpoint(ctx context.Context, h Host, c provider.ToolCall, in tool.Intent) (refused *tool.Result, err error) {
	if l.Checkpoints == nil || !mayChange(in) || l.Workspace == "" {
		return nil, nil
	}
	p, cerr := l.Checkpoints.Checkpoint(ctx, l.Workspace, checkpoint.Meta{
		SessionID: l.SessionID, RunID: l.RunID, ToolCallID: c.ID, Reason: "before " + c.Name})
	if cerr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return &tool.Result{Status: event.ToolError, Output: "Not run: the workspace could not be checkpointed before this change, " +
			"so it could not be undone (" + cerr.Error() + "). Tell the user; do not work around it."}, nil
	}
	return nil, h.Emit(event.CheckpointCreated, p)
}
