package changes

import (
	"context"
	"errors"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/checkpoint"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Span is a stretch of a workspace's history: from a checkpoint to a later
// one, or to the working tree as it is now (To == checkpoint.Current).
type Span struct {
	Workspace string `json:"-"`
	SessionID string `json:"session_id"`
	From      string `json:"from"`
	To        string `json:"to,omitempty"` // "" is the workspace now
	// RunID and ToolCallID say whose changes the span holds, when a run's
	// or a tool call's.
	RunID      string `json:"run_id,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ErrNoChanges is a run, tool call or session that took no checkpoint: it
// changed nothing that can be shown or reverted.
var ErrNoChanges = &checkpoint.Error{Code: "no_changes", Msg: "nothing was checkpointed here: it changed no files"}

// CheckpointSpan is checkpoint id to the workspace's next checkpoint, or to
// now when there is none or toCurrent.
func (s *Service) CheckpointSpan(ctx context.Context, id string, toCurrent bool) (Span, error) {
	c, err := s.get(ctx, id)
	if err != nil {
		return Span{}, err
	}
	sp := Span{Workspace: c.Workspace, SessionID: c.SessionID, From: c.ID, RunID: c.RunID, ToolCallID: c.ToolCallID}
	if toCurrent {
		return sp, nil
	}
	next, err := s.st.ListCheckpoints(ctx, store.CheckpointQuery{Parent: c.ID, Limit: 1})
	if err != nil {
		return Span{}, err
	}
	if len(next) > 0 {
		sp.To = next[0].ID
	}
	return sp, nil
}

// RunSpan is a run's changes (its first checkpoint to its last, or to now
// while it has not closed its span), or with toolCallID one call's.
func (s *Service) RunSpan(ctx context.Context, runID, toolCallID string) (Span, error) {
	ru, err := s.st.GetRun(ctx, runID)
	if err != nil {
		return Span{}, err
	}
	rows, err := s.st.ListCheckpoints(ctx, store.CheckpointQuery{RunID: runID})
	if err != nil {
		return Span{}, err
	}
	if toolCallID != "" {
		for _, c := range rows {
			if c.ToolCallID == toolCallID {
				return s.CheckpointSpan(ctx, c.ID, false)
			}
		}
		return Span{}, ErrNoChanges
	}
	if len(rows) == 0 {
		return Span{}, ErrNoChanges
	}
	sp := Span{Workspace: rows[0].Workspace, SessionID: ru.SessionID, From: rows[0].ID, RunID: runID}
	// The end-of-run checkpoint (no tool call) closes the span; until it
	// is taken the run's last call is still changing the workspace.
	if last := rows[len(rows)-1]; len(rows) > 1 && last.ToolCallID == "" {
		sp.To = last.ID
	}
	return sp, nil
}

// SessionSpan is everything that changed in the session's workspace since
// its first checkpoint.
func (s *Service) SessionSpan(ctx context.Context, sessionID string) (Span, error) {
	if _, err := s.st.GetSession(ctx, sessionID); err != nil {
		return Span{}, err
	}
	rows, err := s.st.ListCheckpoints(ctx, store.CheckpointQuery{SessionID: sessionID, Limit: 1})
	if err != nil {
		return Span{}, err
	}
	if len(rows) == 0 {
		return Span{}, ErrNoChanges
	}
	return Span{Workspace: rows[0].Workspace, SessionID: sessionID, From: rows[0].ID}, nil
}

// List is a session's checkpoints, oldest first.
func (s *Service) List(ctx context.Context, sessionID string) ([]store.Checkpoint, error) {
	if _, err := s.st.GetSession(ctx, sessionID); err != nil {
		return nil, err
	}
	return s.st.ListCheckpoints(ctx, store.CheckpointQuery{SessionID: sessionID})
}

// Changes lists the files that differ over the span, with unified diffs.
func (s *Service) Changes(ctx context.Context, sp Span) ([]checkpoint.FileChange, error) {
	return s.cp.Changes(ctx, sp.Workspace, sp.From, sp.To)
}

// RestoreOptions say what of a span to put back.
type RestoreOptions struct {
	Paths  []string
	DryRun bool
	Force  bool
	// Since restores everything since the span's From (the workspace as it
	// was then) instead of undoing only the span's own changes.
	Since bool
}

// Restore puts back the files of the span as they were at its From, after
// taking a checkpoint so the rollback can be undone, records both
// checkpoints the rollback took and journals checkpoint.restored in the
// span's session. A dry run only plans.
func (s *Service) Restore(ctx context.Context, sp Span, o RestoreOptions, by *event.Actor) (checkpoint.Plan, error) {
	req := checkpoint.RestoreRequest{From: sp.From, To: sp.To, Paths: o.Paths, DryRun: o.DryRun, Force: o.Force,
		Meta: checkpoint.Meta{SessionID: sp.SessionID}}
	if o.Since {
		req.To = checkpoint.Current
	}
	// A rollback once begun runs to its end (each git call has its own
	// timeout): a client that goes away must not leave it half applied and
	// unrecorded.
	rctx := ctx
	if !o.DryRun {
		rctx = context.WithoutCancel(ctx)
	}
	plan, err := s.cp.Restore(rctx, sp.Workspace, req)
	if o.DryRun || plan.Before == nil {
		return plan, err
	}
	// The files are written: record what happened even when the closing
	// checkpoint failed, so the undo point is never lost.
	p := event.CheckpointRestoredPayload{CheckpointID: sp.From, RunID: sp.RunID, ToolCallID: sp.ToolCallID,
		Files: []string{}, Before: plan.Before.ID, By: by}
	for _, f := range plan.Files {
		if !f.Applied {
			continue
		}
		p.Count++
		if len(p.Files) < event.MaxCheckpointFiles {
			p.Files = append(p.Files, f.Path)
		}
	}
	rows := []store.Checkpoint{}
	before, _ := record(*plan.Before, sp.Workspace, by)
	rows = append(rows, before)
	if plan.After != nil {
		after, _ := record(*plan.After, sp.Workspace, by)
		rows = append(rows, after)
		p.After = plan.After.ID
	}
	// The client going away now must not lose the record of files already
	// written.
	bg := context.WithoutCancel(ctx)
	werr := s.w.Do(bg, func(tx store.Tx) error {
		for _, r := range rows {
			if err := tx.InsertCheckpoint(bg, r); err != nil {
				return err
			}
		}
		_, err := tx.AppendEvents(bg, "", event.Draft{SessionID: sp.SessionID, Type: event.CheckpointRestored, Payload: p})
		return err
	})
	if werr != nil {
		werr = fmt.Errorf("record rollback: %w", werr)
	}
	return plan, errors.Join(err, werr)
}

func (s *Service) get(ctx context.Context, id string) (store.Checkpoint, error) {
	c, err := s.st.GetCheckpoint(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return c, &checkpoint.Error{Code: checkpoint.CodeNotFound, Msg: fmt.Sprintf("no checkpoint %q", id)}
	}
	return c, err
}

// SpanTo is checkpoint from to checkpoint to of the same workspace: the
// span a rollback's undo restores (its before → after checkpoints).
func (s *Service) SpanTo(ctx context.Context, from, to string) (Span, error) {
	sp, err := s.CheckpointSpan(ctx, from, true)
	if err != nil {
		return Span{}, err
	}
	c, err := s.get(ctx, to)
	if err != nil {
		return Span{}, err
	}
	if c.Workspace != sp.Workspace {
		return Span{}, &checkpoint.Error{Code: checkpoint.CodeBadRequest, Msg: "the two checkpoints are of different workspaces"}
	}
	sp.To = c.ID
	return sp, nil
}
