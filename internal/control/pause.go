package control

// Pausing and resuming runs (issue 16, h16-budgets): a run pauses at a step
// boundary when a budget is reached, when it looks stuck or when a person
// asks; a paused run holds no runner, no slot and no lease, keeps its
// session busy, and goes on only when a person resumes it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Diagnostic codes of pauses: the diagnostic journaled with the paused
// status says which, and its details carry the numbers.
const (
	PauseBudget    = "budget_exceeded"
	PauseStuck     = "looks_stuck"
	PauseByPerson  = "paused_by_person"
	PauseRequested = "pause_requested" // a person asked a held run to pause
)

// Codes of the pause and resume intents.
const (
	CodeNotPausable   = "not_pausable"
	CodeInvalidBudget = "invalid_budget"
)

// pausedPrefix opens the message of a pause's diagnostic.
const pausedPrefix = "Paused: "

// PauseCause is why a run pauses.
type PauseCause struct {
	Code    string // a Pause* code
	Reason  string // for a person: "token budget of 500 reached: 512 used"
	Details map[string]any
}

// Pause stops a run its runner (fence) holds at a step boundary and
// releases it: paused, with the reason in the status and a diagnostic. Text
// cut short is closed; tool calls not begun stay open and run when the run
// is resumed. A run whose cancel arrived meanwhile is finished cancelled.
func Pause(ctx context.Context, tx store.Tx, runID, fence string, c PauseCause) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	if r.RunnerID != fence {
		return fmt.Errorf("pause run %s: %w", runID, store.ErrLeaseLost)
	}
	switch r.Status {
	case run.Cancelling:
		return finishInTx(ctx, tx, runID, fence, Outcome{Status: run.Cancelled}, time.Now().UTC())
	case run.Running:
	default:
		return fmt.Errorf("pause run %s: it is %s: %w", runID, r.Status, store.ErrConflict)
	}
	evs, err := tx.Events(ctx, store.EventQuery{RunID: runID})
	if err != nil {
		return err
	}
	return pauseInTx(ctx, tx, r, evs, fence, c)
}

func pauseInTx(ctx context.Context, tx store.Tx, r store.Run, evs []event.Event, fence string, c PauseCause) error {
	drafts, _ := closeOpen(r, evs, event.ToolError, false)
	drafts = append(drafts,
		event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.RunStatus,
			Payload: event.RunStatusPayload{Status: string(run.Paused), Reason: c.Reason}},
		event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.Diagnostic,
			Payload: event.DiagnosticPayload{Level: "warning", Code: c.Code, Message: pausedPrefix + c.Reason, Details: c.Details}})
	if _, err := tx.AppendEvents(ctx, fence, drafts...); err != nil {
		return err
	}
	from := r.Status
	r.Status, r.RunnerID, r.LeaseExpiresAt = run.Paused, "", time.Time{}
	return tx.UpdateRun(ctx, r, from)
}

// RequestPause records a person's wish to pause a run. A queued run no
// runner holds pauses at once; a held run pauses at its next step boundary,
// when its runner reads the pause_requested diagnostic (a run waiting for a
// person does so after the answer, before its next step). Pausing a paused
// run changes nothing.
func (s *Service) RequestPause(ctx context.Context, runID string, by *event.Actor) (store.Run, error) {
	var out store.Run
	err := s.w.Do(ctx, func(tx store.Tx) error {
		r, err := tx.GetRun(ctx, runID)
		if err != nil {
			return err
		}
		if r.Status == run.Paused {
			out = r
			return nil
		}
		if !r.Status.Pausable() {
			return &Error{Code: CodeNotPausable, Message: fmt.Sprintf("run is %s; only queued, running or waiting runs can be paused", r.Status),
				Details: map[string]any{"status": r.Status}}
		}
		now := time.Now().UTC()
		if err := tx.InsertControl(ctx, store.Control{ID: id.New("ctl"), RunID: r.ID, Kind: "pause", CreatedAt: now}); err != nil {
			return err
		}
		who := "a person"
		if by != nil && by.Name != "" {
			who = by.Name
		}
		details := map[string]any{}
		if by != nil {
			details["by"] = by
		}
		if r.Status == run.Queued {
			c := PauseCause{Code: PauseByPerson, Reason: "paused by " + who, Details: details}
			if err := pauseInTx(ctx, tx, r, nil, "", c); err != nil {
				return err
			}
		} else if _, err := tx.AppendEvents(ctx, "", event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.Diagnostic,
			Payload: event.DiagnosticPayload{Level: "info", Code: PauseRequested,
				Message: "Pause requested by " + who + "; the run pauses at its next step boundary.", Details: details}}); err != nil {
			return err
		}
		out, err = tx.GetRun(ctx, runID)
		return err
	})
	return out, err
}

// PausedBy returns the cause of a paused run's latest pause, read from the
// journal (evs: the run's events).
func PausedBy(evs []event.Event) (PauseCause, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type != event.Diagnostic {
			continue
		}
		var p event.DiagnosticPayload
		if json.Unmarshal(evs[i].Payload, &p) != nil {
			continue
		}
		switch p.Code {
		case PauseBudget, PauseStuck, PauseByPerson:
			return PauseCause{Code: p.Code, Reason: strings.TrimPrefix(p.Message, pausedPrefix), Details: p.Details}, true
		}
	}
	return PauseCause{}, false
}

// raiseBudget writes the limits a person gave when resuming a paused run:
// over those of the scope whose limit paused it when that is the session,
// else over the run's own (which take precedence over its profile's). The
// server's day limits are configuration and change only in Settings.
func raiseBudget(ctx context.Context, tx store.Tx, r store.Run, evs []event.Event, l budget.Limits, now time.Time) error {
	if err := l.Validate(); err != nil {
		fe := err.(*budget.FieldError)
		return &Error{Code: CodeInvalidBudget, Message: "budget." + fe.Field + " " + fe.Message, Details: map[string]any{"field": "budget." + fe.Field}}
	}
	scope, target := budget.ScopeRun, r.ID
	if c, ok := PausedBy(evs); ok && c.Details["scope"] == budget.ScopeSession {
		scope, target = budget.ScopeSession, r.SessionID
	}
	prev, err := tx.GetBudget(ctx, scope, target)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return tx.PutBudget(ctx, store.Budget{Scope: scope, Target: target, Limits: prev.Limits.Merge(l), UpdatedAt: now})
}
