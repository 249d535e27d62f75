package control

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// Outcome is how a run ends.
type Outcome struct {
	Status run.Status // Completed, Failed, Cancelled or Expired
	Error  *event.ErrorInfo
	// By is who cancelled (Cancelled only). When nil, the cancelling
	// status in the journal names them, if a person asked.
	By *event.Actor
}

// Finish ends a run: it closes whatever the journal shows still open (text
// cut short, tool calls without result, pending requests) so the history
// stays valid for every provider, then writes the one terminal event. fence
// is the runner that must hold the run ("" for the web tier).
func Finish(ctx context.Context, tx store.Tx, runID, fence string, o Outcome) error {
	return finishInTx(ctx, tx, runID, fence, o, time.Now().UTC())
}

func finishInTx(ctx context.Context, tx store.Tx, runID, fence string, o Outcome, now time.Time) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	if r.Status.Terminal() {
		return fmt.Errorf("finish run %s: already %s: %w", runID, r.Status, store.ErrConflict)
	}
	if fence != "" && r.RunnerID != fence {
		return fmt.Errorf("finish run %s: %w", runID, store.ErrLeaseLost)
	}
	closing := event.ToolCancelled
	if o.Status != run.Cancelled {
		closing = event.ToolError
	}
	evs, err := tx.Events(ctx, store.EventQuery{RunID: r.ID})
	if err != nil {
		return err
	}
	drafts, usage := closeOpen(r, evs, closing, true)
	reqs, err := tx.ListRequests(ctx, store.RequestQuery{RunID: runID, Status: store.RequestPending})
	if err != nil {
		return err
	}
	for _, q := range reqs {
		if err := resolveInTx(ctx, tx, q, store.RequestCancelled, "", now, nil); err != nil {
			return err
		}
	}
	// Usage is summed from the journal, so turns of every claim count, even
	// those of a runner that died.
	r.Usage = usage
	drafts = append(drafts, event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.RunDone,
		Payload: event.RunDonePayload{Status: string(o.Status), Error: o.Error, Usage: r.Usage, By: cancelledBy(o, evs)}})
	// Append while the fence still holds, then release the run.
	if _, err := tx.AppendEvents(ctx, fence, drafts...); err != nil {
		return err
	}
	// A steer the run ended before delivering is not lost: it is queued.
	if err := queueUndelivered(ctx, tx, r, evs, now); err != nil {
		return err
	}
	// The session's goal counts the run and may carry on with another.
	if err := goalAfterRun(ctx, tx, r, o, evs, now); err != nil {
		return err
	}
	r.Status, r.EndedAt, r.RunnerID, r.LeaseExpiresAt = o.Status, now, "", time.Time{}
	if o.Error != nil {
		r.ErrorCode, r.ErrorMessage = o.Error.Code, o.Error.Message
	}
	if err := tx.UpdateRun(ctx, r); err != nil {
		return err
	}
	return tx.TouchSession(ctx, r.SessionID, now)
}

// closeOpen returns the events that close what the run's events evs leave
// open (text, reasoning and, with tools, tool calls), and its token usage. A run that
// stops to be resumed keeps its tool calls open: the resumed run reports
// each one that had begun as interrupted, and runs those that had not.
func closeOpen(r store.Run, evs []event.Event, toolStatus string, tools bool) ([]event.Draft, event.UsageTotals) {
	usage := SumUsage(evs)
	var drafts []event.Draft
	for _, it := range transcript.Fold(evs) {
		switch {
		case it.Open && it.Kind == transcript.KindAssistant:
			drafts = append(drafts, event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.MessageDone,
				Payload: event.DonePayload{ID: it.ID, TurnID: it.TurnID, Text: it.Text, Partial: true}})
		case it.Open && it.Kind == transcript.KindReasoning:
			drafts = append(drafts, event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.ReasoningDone,
				Payload: event.DonePayload{ID: it.ID, TurnID: it.TurnID, Text: it.Text, Partial: true,
					DurationMS: max(1, time.Since(it.CreatedAt.Time).Milliseconds())}})
		case tools && it.Tool != nil && !it.Tool.Done():
			msg := "cancelled before it finished"
			if toolStatus != event.ToolCancelled {
				msg = "the run ended before the tool call finished"
			}
			drafts = append(drafts, event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.ToolDone,
				Payload: event.ToolDonePayload{ToolCallID: it.Tool.ToolCallID, Name: it.Tool.Name, Status: toolStatus,
					Output: toolStatus + ": " + msg, Error: msg}})
		}
	}
	return drafts, usage
}

// SumUsage adds up the usage events among evs.
func SumUsage(evs []event.Event) event.UsageTotals {
	var total event.UsageTotals
	for _, e := range evs {
		if e.Type != event.Usage {
			continue
		}
		var p event.UsagePayload
		if json.Unmarshal(e.Payload, &p) == nil {
			total = total.Add(p.Turn)
		}
	}
	return total
}

// Claim leases the next runnable run to runnerID and journals it: run.started
// for a fresh run, or a re-claim notice for one that waits for a person.
// describe says which provider and model will answer the claimed run.
func Claim(ctx context.Context, tx store.Tx, runnerID string, lease time.Duration, describe func(store.Run) event.RunStartedPayload) (store.Run, bool, error) {
	now := time.Now().UTC()
	r, prev, ok, err := tx.ClaimNext(ctx, runnerID, now, now.Add(lease))
	if err != nil || !ok {
		return r, ok, err
	}
	if prev == run.AwaitingApproval || prev == run.AwaitingClarify {
		// A parked run continues where it stopped: the status change
		// to running once its answer is read says so, not a new start.
		return r, true, nil
	}
	info := describe(r)
	// A run is resumed when it was claimed before: waiting for a person,
	// or executed by a runner that died or handed it over.
	info.RunnerID, info.Attempt, info.Resumed = runnerID, r.Attempt, prev != run.Queued || r.Attempt > 1
	_, err = tx.AppendEvents(ctx, runnerID, event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.RunStarted, Payload: info})
	return r, true, err
}

// SetStatus moves a held run between non-terminal statuses and journals it.
func SetStatus(ctx context.Context, tx store.Tx, runID, fence string, to run.Status, reason string, from ...run.Status) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	if fence != "" && r.RunnerID != fence {
		return fmt.Errorf("set status of run %s: %w", runID, store.ErrLeaseLost)
	}
	if r.Status == to {
		return nil
	}
	r.Status = to
	if err := tx.UpdateRun(ctx, r, from...); err != nil {
		return err
	}
	_, err = tx.AppendEvents(ctx, fence, event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.RunStatus,
		Payload: event.RunStatusPayload{Status: string(to), Reason: reason}})
	return err
}

// Park releases a run that waits for a person: it keeps its status
// (awaiting_approval or awaiting_clarify) but holds no runner, no slot and
// no lease while it waits, so unanswered questions never delay other runs.
// ClaimNext offers it again once none of its requests is pending. A run
// whose cancel arrived meanwhile is finished as cancelled.
func Park(ctx context.Context, tx store.Tx, runID, fence string) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	if r.RunnerID != fence {
		return fmt.Errorf("park run %s: %w", runID, store.ErrLeaseLost)
	}
	switch r.Status {
	case run.Cancelling:
		return finishInTx(ctx, tx, runID, fence, Outcome{Status: run.Cancelled}, time.Now().UTC())
	case run.AwaitingApproval, run.AwaitingClarify:
		r.RunnerID, r.LeaseExpiresAt = "", time.Time{}
		return tx.UpdateRun(ctx, r, r.Status)
	}
	return fmt.Errorf("park run %s: it is %s, not waiting for a person: %w", runID, r.Status, store.ErrConflict)
}

// Release gives up a runner's lease without changing the status, so another
// runner (or this one after a restart) can take the run over.
func Release(ctx context.Context, tx store.Tx, runID, runnerID string) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	if r.RunnerID != runnerID {
		return nil
	}
	r.RunnerID, r.LeaseExpiresAt = "", time.Time{}
	return tx.UpdateRun(ctx, r, r.Status)
}

// cancelledBy is who cancelled a run ending cancelled: o.By, or else the
// person the run's latest cancelling status names (a runner finishes a
// cancel asked for on the web tier).
func cancelledBy(o Outcome, evs []event.Event) *event.Actor {
	if o.Status != run.Cancelled || o.By != nil {
		return o.By
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type != event.RunStatus {
			continue
		}
		var p event.RunStatusPayload
		if json.Unmarshal(evs[i].Payload, &p) == nil && p.Status == string(run.Cancelling) {
			return p.By
		}
	}
	return nil
}
