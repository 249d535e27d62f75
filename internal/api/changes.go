package api

// Changes and rollback: the checkpoints of a session's workspace, what a
// run, a tool call or the session changed, and putting files back
// (docs/API.md, "Changes and rollback").

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/caduceus-dev/caduceus/internal/changes"
	"github.com/caduceus-dev/caduceus/internal/checkpoint"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Changes is what the changes routes need (internal/changes.Service).
type Changes interface {
	List(ctx context.Context, sessionID string) ([]store.Checkpoint, error)
	CheckpointSpan(ctx context.Context, id string, toCurrent bool) (changes.Span, error)
	SpanTo(ctx context.Context, from, to string) (changes.Span, error)
	RunSpan(ctx context.Context, runID, toolCallID string) (changes.Span, error)
	SessionSpan(ctx context.Context, sessionID string) (changes.Span, error)
	Changes(ctx context.Context, sp changes.Span) ([]checkpoint.FileChange, error)
	Restore(ctx context.Context, sp changes.Span, o changes.RestoreOptions, by *event.Actor) (checkpoint.Plan, error)
}

// CodeCheckpointsUnavailable answers every changes route of a server that
// could not set up checkpoints (no git binary).
const CodeCheckpointsUnavailable = "checkpoints_unavailable"

// undoNote is what every rollback preview says.
const undoNote = "A checkpoint of the workspace is taken before anything is written, so this rollback can be undone."

// checkpointJSON is a checkpoint as the API shows it.
type checkpointJSON struct {
	ID           string       `json:"id"`
	SessionID    string       `json:"session_id"`
	RunID        string       `json:"run_id,omitempty"`
	ToolCallID   string       `json:"tool_call_id,omitempty"`
	Parent       string       `json:"parent_id,omitempty"`
	Reason       string       `json:"reason"`
	FilesChanged int          `json:"files_changed"`
	Added        int          `json:"added"`
	Removed      int          `json:"removed"`
	By           *event.Actor `json:"by,omitempty"`
	CreatedAt    event.Time   `json:"created_at"`
}

func toCheckpointJSON(c store.Checkpoint) checkpointJSON {
	out := checkpointJSON{ID: c.ID, SessionID: c.SessionID, RunID: c.RunID, ToolCallID: c.ToolCallID, Parent: c.Parent,
		Reason: c.Reason, FilesChanged: c.Files, Added: c.Added, Removed: c.Removed, CreatedAt: event.Time{Time: c.CreatedAt}}
	if c.By != "" {
		var by event.Actor
		if json.Unmarshal([]byte(c.By), &by) == nil {
			out.By = &by
		}
	}
	return out
}

// changesJSON is what changed over a span.
type changesJSON struct {
	changes.Span
	Files        []checkpoint.FileChange `json:"files"`
	FilesChanged int                     `json:"files_changed"`
	Added        int                     `json:"added"`
	Removed      int                     `json:"removed"`
}

// restoreJSON is a rollback's preview (dry_run) or outcome.
type restoreJSON struct {
	DryRun    bool                  `json:"dry_run"`
	From      string                `json:"from"`
	To        string                `json:"to,omitempty"`
	Files     []checkpoint.PlanFile `json:"files"`
	Conflicts int                   `json:"conflicts"`
	Undoable  bool                  `json:"undoable"`
	Note      string                `json:"note"`
	// Undo restores what the rollback replaced: POST
	// /api/checkpoints/{before}/restore {"to": after}.
	Before string `json:"before_checkpoint_id,omitempty"`
	After  string `json:"after_checkpoint_id,omitempty"`
}

func (a *API) changes(w http.ResponseWriter) (Changes, bool) {
	if a.opt.Changes == nil {
		writeError(w, http.StatusServiceUnavailable, CodeCheckpointsUnavailable,
			"this server takes no checkpoints (is git installed?): changes cannot be shown or rolled back", nil)
		return nil, false
	}
	return a.opt.Changes, true
}

// failChanges maps the checkpoint package's refusals to API errors.
func (a *API) failChanges(w http.ResponseWriter, r *http.Request, err error) {
	var ce *checkpoint.Error
	switch {
	case errors.As(err, &ce):
		status := http.StatusBadRequest
		switch ce.Code {
		case checkpoint.CodeNotFound:
			status = http.StatusNotFound
		case changes.ErrNoChanges.Code, checkpoint.CodeBadWorkspace:
			status = http.StatusConflict
		}
		writeError(w, status, ce.Code, ce.Msg, nil)
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, control.CodeNotFound, "not found", nil)
	default:
		a.fail(w, r, err)
	}
}

func (a *API) listCheckpoints(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	c, ok := a.changes(w)
	if !ok {
		return
	}
	rows, err := c.List(r.Context(), sid)
	if err != nil {
		a.failChanges(w, r, err)
		return
	}
	out := make([]checkpointJSON, len(rows))
	for i, row := range rows {
		out[i] = toCheckpointJSON(row)
	}
	writeJSON(w, http.StatusOK, map[string]any{"checkpoints": out})
}

// checkpointDiff is a checkpoint against the workspace's next one, or
// with ?to=current against the workspace now.
func (a *API) checkpointDiff(w http.ResponseWriter, r *http.Request) {
	cid, ok := pathID(w, r, "ckp", "checkpoint")
	if !ok {
		return
	}
	to := r.URL.Query().Get("to")
	if to != "" && to != "current" {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, `to must be "current" or absent`, nil)
		return
	}
	c, ok := a.changes(w)
	if !ok {
		return
	}
	sp, err := c.CheckpointSpan(r.Context(), cid, to == "current")
	a.writeChanges(w, r, c, sp, err)
}

func (a *API) runChanges(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "run", "run")
	if !ok {
		return
	}
	c, ok := a.changes(w)
	if !ok {
		return
	}
	sp, err := c.RunSpan(r.Context(), rid, r.URL.Query().Get("tool_call"))
	a.writeChanges(w, r, c, sp, err)
}

func (a *API) sessionChanges(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	c, ok := a.changes(w)
	if !ok {
		return
	}
	sp, err := c.SessionSpan(r.Context(), sid)
	a.writeChanges(w, r, c, sp, err)
}

// writeChanges answers the files changed over sp; a span that took no
// checkpoint changed nothing and answers an empty list.
func (a *API) writeChanges(w http.ResponseWriter, r *http.Request, c Changes, sp changes.Span, err error) {
	out := changesJSON{Span: sp, Files: []checkpoint.FileChange{}}
	if errors.Is(err, changes.ErrNoChanges) {
		writeJSON(w, http.StatusOK, out)
		return
	}
	if err == nil {
		out.Files, err = c.Changes(r.Context(), sp)
	}
	if err != nil {
		a.failChanges(w, r, err)
		return
	}
	out.FilesChanged = len(out.Files)
	for _, f := range out.Files {
		out.Added += f.Added
		out.Removed += f.Removed
	}
	writeJSON(w, http.StatusOK, out)
}

type restoreBody struct {
	Paths  []string `json:"paths"`
	DryRun bool     `json:"dry_run"`
	Force  bool     `json:"force"`
	// To (restore only) limits the rollback to the span from the
	// checkpoint to this later one: a rollback's undo.
	To string `json:"to"`
	// ToolCall (revert only) reverts one tool call's changes.
	ToolCall string `json:"tool_call"`
}

// restoreCheckpoint puts back everything since the checkpoint (or the
// chosen paths), or with to the span checkpoint → to.
func (a *API) restoreCheckpoint(w http.ResponseWriter, r *http.Request) {
	cid, ok := pathID(w, r, "ckp", "checkpoint")
	if !ok {
		return
	}
	var b restoreBody
	if !decode(w, r, &b) {
		return
	}
	if b.ToolCall != "" {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "tool_call belongs to POST /api/runs/{id}/revert", nil)
		return
	}
	c, ok := a.changes(w)
	if !ok {
		return
	}
	var sp changes.Span
	var err error
	if b.To != "" {
		sp, err = c.SpanTo(r.Context(), cid, b.To)
	} else {
		sp, err = c.CheckpointSpan(r.Context(), cid, true)
	}
	if err != nil {
		a.failChanges(w, r, err)
		return
	}
	a.restore(w, r, c, sp, b, b.To == "")
}

// revertRun undoes a run's changes, or with tool_call one call's.
func (a *API) revertRun(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "run", "run")
	if !ok {
		return
	}
	var b restoreBody
	if !decode(w, r, &b) {
		return
	}
	if b.To != "" {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "to belongs to POST /api/checkpoints/{id}/restore", nil)
		return
	}
	c, ok := a.changes(w)
	if !ok {
		return
	}
	sp, err := c.RunSpan(r.Context(), rid, b.ToolCall)
	if err != nil {
		a.failChanges(w, r, err)
		return
	}
	a.restore(w, r, c, sp, b, false)
}

func (a *API) restore(w http.ResponseWriter, r *http.Request, c Changes, sp changes.Span, b restoreBody, since bool) {
	plan, err := c.Restore(r.Context(), sp, changes.RestoreOptions{Paths: b.Paths, DryRun: b.DryRun, Force: b.Force, Since: since}, actor(r))
	if err != nil && plan.Before == nil {
		a.failChanges(w, r, err)
		return
	}
	if err != nil {
		// Files were written: answer what happened, the error is logged.
		a.log.Error("rollback partly recorded", "from", sp.From, "err", err)
	}
	out := restoreJSON{DryRun: b.DryRun, From: plan.From, To: plan.To, Files: plan.Files, Undoable: true, Note: undoNote}
	if out.Files == nil {
		out.Files = []checkpoint.PlanFile{}
	}
	for _, f := range out.Files {
		if f.Conflict {
			out.Conflicts++
		}
	}
	if plan.Before != nil {
		out.Before = plan.Before.ID
	}
	if plan.After != nil {
		out.After = plan.After.ID
	}
	writeJSON(w, http.StatusOK, out)
}
