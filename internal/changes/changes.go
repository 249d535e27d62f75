// Package changes ties the checkpoints of workspaces (internal/checkpoint)
// to sessions, runs and tool calls (the store) and to the journal: it takes
// the checkpoints the runner and a person's edits need and records them,
// answers "what did this run, this tool call, this session change", and
// rolls changes back with a checkpoint first so the rollback can itself be
// undone.
//
// A run's changes are the span from its first checkpoint to its last (the
// runner takes one at the end of every run that took any), a tool call's
// from its checkpoint to the workspace's next one. Spans are compared in
// the shadow repository of the workspace recorded on the checkpoint, so
// the web tier must see the same directory the runner wrote (one host, or
// a shared mount).
package changes

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/checkpoint"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Service records, compares and restores the checkpoints of sessions.
type Service struct {
	cp       *checkpoint.Checkpointer
	st       store.Reader
	w        *journal.Writer
	maxBytes int64
	log      *slog.Logger

	mu     sync.Mutex
	pruned map[string]time.Time // workspace → when it was last pruned
}

// New returns a Service. maxBytes caps each workspace's shadow repository
// (Prune); 0 never prunes.
func New(cp *checkpoint.Checkpointer, st store.Reader, w *journal.Writer, maxBytes int64, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{cp: cp, st: st, w: w, maxBytes: maxBytes, log: log, pruned: map[string]time.Time{}}
}

// Checkpoint takes a checkpoint of workspace for m and records it. It is
// what the runner calls before a tool call that may change the workspace
// and at the end of a run; the caller journals the returned payload in
// the run.
func (s *Service) Checkpoint(ctx context.Context, workspace string, m checkpoint.Meta) (event.CheckpointCreatedPayload, error) {
	c, err := s.cp.Take(ctx, workspace, m)
	if err != nil {
		return event.CheckpointCreatedPayload{}, err
	}
	row, p := record(c, workspace, nil)
	if err := s.w.Do(ctx, func(tx store.Tx) error { return tx.InsertCheckpoint(ctx, row) }); err != nil {
		return event.CheckpointCreatedPayload{}, fmt.Errorf("record checkpoint %s: %w", c.ID, err)
	}
	return p, nil
}

// RunEnd takes the checkpoint that closes a run's span, when the run took
// any (a run that only read took none and changed nothing). ok is false
// when none was taken.
func (s *Service) RunEnd(ctx context.Context, workspace, sessionID, runID string) (p event.CheckpointCreatedPayload, ok bool, err error) {
	took, err := s.st.ListCheckpoints(ctx, store.CheckpointQuery{RunID: runID, Limit: 1})
	if err != nil || len(took) == 0 {
		return p, false, err
	}
	p, err = s.Checkpoint(ctx, workspace, checkpoint.Meta{SessionID: sessionID, RunID: runID, Reason: "end of run"})
	if err != nil {
		return p, false, err
	}
	return p, true, nil
}

// pruneEvery is the least time between two prunes of one workspace:
// pruning packs the repository (git gc) under the workspace's lock, which
// takes seconds for a large one, so it is not done after every run.
const pruneEvery = 10 * time.Minute

// Prune keeps workspace's checkpoints under the size cap, at most once per
// pruneEvery per workspace; the runner calls it after a run's end is
// journaled. A failure is logged: the checkpoints are still there, only
// larger than asked.
func (s *Service) Prune(ctx context.Context, workspace string) {
	if s.maxBytes <= 0 {
		return
	}
	s.mu.Lock()
	if last, ok := s.pruned[workspace]; ok && time.Since(last) < pruneEvery {
		s.mu.Unlock()
		return
	}
	s.pruned[workspace] = time.Now()
	s.mu.Unlock()
	res, err := s.cp.Prune(ctx, workspace, s.maxBytes)
	if err != nil {
		s.log.Warn("pruning checkpoints failed", "workspace", workspace, "err", err)
		return
	}
	if len(res.Removed) > 0 || res.OverCap {
		s.log.Info("checkpoints pruned", "workspace", workspace, "removed", len(res.Removed),
			"size_before", res.SizeBefore, "size_after", res.SizeAfter, "over_cap", res.OverCap)
	}
}

// BeforeEdit takes a checkpoint before a person saves path in the
// session's workspace (api.EditCheckpointer) and journals it as a session
// event, so the edit shows in the session's changes and can be undone.
func (s *Service) BeforeEdit(ctx context.Context, sessionID, workspace, path string, by *event.Actor) error {
	name := "someone"
	if by != nil && by.Name != "" {
		name = by.Name
	}
	c, err := s.cp.Take(ctx, workspace, checkpoint.Meta{SessionID: sessionID, Reason: "before edit by " + name})
	if err != nil {
		return err
	}
	row, p := record(c, workspace, by)
	return s.w.Do(ctx, func(tx store.Tx) error {
		if err := tx.InsertCheckpoint(ctx, row); err != nil {
			return err
		}
		_, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: sessionID, Type: event.CheckpointCreated, Payload: p})
		return err
	})
}

// record is the store row and the event payload of a checkpoint taken.
func record(c checkpoint.Checkpoint, workspace string, by *event.Actor) (store.Checkpoint, event.CheckpointCreatedPayload) {
	row := store.Checkpoint{ID: c.ID, SessionID: c.Meta.SessionID, RunID: c.Meta.RunID, ToolCallID: c.Meta.ToolCallID,
		Workspace: workspace, Commit: c.Commit, Parent: c.Parent, Reason: c.Meta.Reason, Files: len(c.Files), CreatedAt: c.CreatedAt}
	p := event.CheckpointCreatedPayload{CheckpointID: c.ID, ToolCallID: c.Meta.ToolCallID, Reason: c.Meta.Reason,
		FilesChanged: len(c.Files), Files: []string{}, By: by}
	for i, f := range c.Files {
		row.Added += f.Added
		row.Removed += f.Removed
		if i < event.MaxCheckpointFiles {
			p.Files = append(p.Files, f.Path)
		}
	}
	p.Added, p.Removed = row.Added, row.Removed
	if by != nil {
		if b, err := json.Marshal(by); err == nil {
			row.By = string(b)
		}
	}
	return row, p
}
