package control

import (
	"context"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// RetryPolicy is how often and how soon a run that stopped on a transient
// failure is retried by itself. It is copied into each run when it is
// queued, so every process applies the run's own policy.
type RetryPolicy struct {
	Max     int           // automatic retries; 0 turns them off
	Backoff time.Duration // wait before the first retry; doubles per retry
}

// maxBackoff caps the doubling: a retry is never more than a minute away.
const maxBackoff = time.Minute

// retryDelay is the wait before the run's next automatic retry.
func retryDelay(r store.Run) time.Duration {
	d := r.RetryBackoff
	for i := 0; i < r.Retries && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// Interrupt marks a run whose runner is gone. A run that was being cancelled
// is finished as cancelled; one waiting for a person is only released, since
// its request is still answerable; a running one gets a diagnostic saying
// what the journal last recorded and becomes recovering (retried by itself)
// or, with no retries left, interrupted (a person may resume it).
func Interrupt(ctx context.Context, tx store.Tx, runID string, why string) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	switch r.Status {
	case run.Cancelling:
		return finishInTx(ctx, tx, runID, "", Outcome{Status: run.Cancelled}, now)
	case run.AwaitingApproval, run.AwaitingClarify:
		return Release(ctx, tx, runID, r.RunnerID)
	case run.Running:
	default:
		return nil
	}
	evs, err := tx.Events(ctx, store.EventQuery{RunID: runID})
	if err != nil {
		return err
	}
	lastType := ""
	if len(evs) > 0 {
		lastType = string(evs[len(evs)-1].Type)
	}
	// Plain words in the message; what an operator needs to dig in is in
	// the details, which the workbench shows one click away. Whether the
	// run can be resumed is the page's to say: it changes, the text stays.
	diag := event.DiagnosticPayload{
		Level: "error", Code: "worker_stopped",
		Message: "The runner working on this run stopped before the run finished (" + why + "). Everything up to that point is kept.",
		Details: map[string]any{"runner_id": r.RunnerID, "last_seq": r.LastSeq, "last_event_type": lastType, "last_status": string(run.Running)},
	}
	return stopTransient(ctx, tx, r, evs, "", why, diag, now)
}

// InterruptHeldBy interrupts the run only while holder still holds it:
// whoever decided it was abandoned saw it held by holder, and it may since
// have ended, parked, or been claimed by a live runner, which must not
// lose it. Otherwise it fails with ErrConflict and changes nothing.
func InterruptHeldBy(ctx context.Context, tx store.Tx, runID, holder, why string) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	if r.RunnerID != holder {
		return fmt.Errorf("interrupt run %s: held by %q now, not %q: %w", runID, r.RunnerID, holder, store.ErrConflict)
	}
	return Interrupt(ctx, tx, runID, why)
}

// Recover stops a run its runner holds after a failure a retry may fix (a
// provider that is rate limited, overloaded or unreachable): recovering
// while retries are left, else interrupted, so a person can resume it
// later. Either way the run is not failed: its journal stays open.
func Recover(ctx context.Context, tx store.Tx, runID, fence string, cause event.ErrorInfo) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	if fence != "" && r.RunnerID != fence {
		return fmt.Errorf("recover run %s: %w", runID, store.ErrLeaseLost)
	}
	now := time.Now().UTC()
	// The retry time is not in the text (it would read as a time in the
	// past later on): the run's status carries it and the page counts down.
	msg := cause.Message
	if r.Retries < r.MaxRetries {
		msg = fmt.Sprintf("%s — retrying automatically (retry %d of %d)", cause.Message, r.Retries+1, r.MaxRetries)
	} else if r.MaxRetries > 0 {
		msg = fmt.Sprintf("%s — gave up after %d automatic retries", cause.Message, r.MaxRetries)
	}
	diag := event.DiagnosticPayload{Level: "warning", Code: "retrying", Message: msg,
		Details: map[string]any{"error_code": cause.Code, "retries": r.Retries, "max_retries": r.MaxRetries, "retry_in_ms": retryDelay(r).Milliseconds()}}
	evs, err := tx.Events(ctx, store.EventQuery{RunID: runID})
	if err != nil {
		return err
	}
	return stopTransient(ctx, tx, r, evs, fence, cause.Code+": "+cause.Message, diag, now)
}

// stopTransient releases a running run that stopped on a transient failure,
// journaling the new status and diag: recovering with its retry time while
// retries are left, interrupted after. evs are the run's events.
func stopTransient(ctx context.Context, tx store.Tx, r store.Run, evs []event.Event, fence, why string, diag event.DiagnosticPayload, now time.Time) error {
	drafts, _ := closeOpen(r, evs, event.ToolError, false)
	status := event.RunStatusPayload{Status: string(run.Interrupted), Reason: why}
	next := r
	next.RunnerID, next.LeaseExpiresAt = "", time.Time{}
	if r.Retries < r.MaxRetries {
		at := now.Add(retryDelay(r))
		next.Status, next.Retries, next.RetryAt = run.Recovering, r.Retries+1, at
		status = event.RunStatusPayload{Status: string(run.Recovering), Reason: why,
			Retry: next.Retries, MaxRetries: r.MaxRetries, RetryAt: &event.Time{Time: at}}
	} else {
		next.Status = run.Interrupted
	}
	drafts = append(drafts,
		event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.RunStatus, Payload: status},
		event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.Diagnostic, Payload: diag})
	// Append while the fence still holds, then release the run.
	if _, err := tx.AppendEvents(ctx, fence, drafts...); err != nil {
		return err
	}
	return tx.UpdateRun(ctx, next, run.Running)
}

// Handover gives a run back when its runner stops gracefully, so another
// runner continues it at once: a running run is queued again (its retries
// untouched: nothing failed), one waiting for a person is released as it
// is, one being cancelled is finished.
func Handover(ctx context.Context, tx store.Tx, runID, fence, why string) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	if fence != "" && r.RunnerID != fence {
		return fmt.Errorf("hand over run %s: %w", runID, store.ErrLeaseLost)
	}
	switch r.Status {
	case run.Cancelling:
		return finishInTx(ctx, tx, runID, fence, Outcome{Status: run.Cancelled}, time.Now().UTC())
	case run.AwaitingApproval, run.AwaitingClarify:
		// The status stays, so this diagnostic is what wakes other runners.
		if _, err := tx.AppendEvents(ctx, fence, event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.Diagnostic,
			Payload: event.DiagnosticPayload{Level: "info", Code: "handed_over", Message: "Handed over while waiting for a person (" + why + ")."}}); err != nil {
			return err
		}
		return Release(ctx, tx, runID, r.RunnerID)
	case run.Running:
	default:
		return nil
	}
	evs, err := tx.Events(ctx, store.EventQuery{RunID: r.ID})
	if err != nil {
		return err
	}
	drafts, _ := closeOpen(r, evs, event.ToolError, false)
	drafts = append(drafts, event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.RunStatus,
		Payload: event.RunStatusPayload{Status: string(run.Queued), Reason: "handed over: " + why}})
	if _, err := tx.AppendEvents(ctx, fence, drafts...); err != nil {
		return err
	}
	r.Status, r.RunnerID, r.LeaseExpiresAt = run.Queued, "", time.Time{}
	return tx.UpdateRun(ctx, r, run.Running)
}

// ResumeInput is what a person may give when resuming a run.
type ResumeInput struct {
	// Budget, when set, raises limits of a paused run (h16-budgets): see
	// raiseBudget for which scope's.
	Budget *budget.Limits
	By     *event.Actor
}

// Resume puts an interrupted, recovering or paused run back in the queue
// now. The runner that claims it rebuilds the conversation from the
// journal; a tool call that had begun is reported interrupted, never
// executed again. A run whose session has moved on (a later run started)
// cannot be resumed: its answer would land after newer ones.
func (s *Service) Resume(ctx context.Context, runID string) (store.Run, error) {
	return s.ResumeWith(ctx, runID, ResumeInput{})
}

// ResumeWith is Resume with new limits for a paused run.
func (s *Service) ResumeWith(ctx context.Context, runID string, in ResumeInput) (store.Run, error) {
	var out store.Run
	err := s.w.Do(ctx, func(tx store.Tx) error {
		r, err := tx.GetRun(ctx, runID)
		if err != nil {
			return err
		}
		if !r.Status.Resumable() {
			return &Error{Code: CodeNotResumable, Message: fmt.Sprintf("run is %s; only interrupted, recovering or paused runs can be resumed", r.Status),
				Details: map[string]any{"status": r.Status}}
		}
		runs, err := tx.SessionRuns(ctx, r.SessionID)
		if err != nil {
			return err
		}
		for _, o := range runs {
			later := o.CreatedAt.After(r.CreatedAt) || (o.CreatedAt.Equal(r.CreatedAt) && o.ID > r.ID)
			if later && !o.StartedAt.IsZero() {
				return &Error{Code: CodeSuperseded, Message: "a later message of this session has already been answered; send a new message instead",
					Details: map[string]any{"run_id": o.ID}}
			}
		}
		now := time.Now().UTC()
		if in.Budget != nil {
			evs, err := tx.Events(ctx, store.EventQuery{RunID: r.ID})
			if err != nil {
				return err
			}
			if err := raiseBudget(ctx, tx, r, evs, *in.Budget, now); err != nil {
				return err
			}
		}
		if err := tx.InsertControl(ctx, store.Control{ID: id.New("ctl"), RunID: r.ID, Kind: "resume", CreatedAt: now}); err != nil {
			return err
		}
		prev := r.Status
		r.Status, r.RetryAt = run.Queued, time.Time{}
		if err := tx.UpdateRun(ctx, r, prev); err != nil {
			return err
		}
		if _, err := tx.AppendEvents(ctx, "", event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.RunStatus,
			Payload: event.RunStatusPayload{Status: string(run.Queued), Reason: "resumed by a person", By: in.By}}); err != nil {
			return err
		}
		out, err = tx.GetRun(ctx, runID)
		return err
	})
	return out, err
}
