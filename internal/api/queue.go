package api

import (
	"context"
	"slices"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Why a run that is not executing waits, so that every waiting state can
// say what it waits for (docs/API.md, "waiting").
const (
	WaitPerson      = "person"       // a question or approval is unanswered
	WaitPreviousRun = "previous_run" // an earlier run of its session goes first
	WaitRunner      = "runner"       // no runner is alive to take it
	WaitRunnerSlot  = "runner_slot"  // runners are alive; it is in line for a slot
	WaitRetry       = "retry"        // an automatic retry is due at retry_at
)

// waitingView is what a run that does not execute waits for.
type waitingView struct {
	Reason string `json:"reason"`
	// Position in the line of runs the runners take next (1 = next), for
	// runner and runner_slot.
	Position int `json:"position,omitempty"`
	// RunID is the run it waits behind, for previous_run.
	RunID   string      `json:"run_id,omitempty"`
	RetryAt *event.Time `json:"retry_at,omitempty"`
}

// queue is a snapshot of the work that waits and the runners that could
// take it. It mirrors the order in which ClaimNext hands out runs: parked
// runs whose answer is in first, then queued and due recovering runs by
// priority and age.
type queue struct {
	liveRunners int
	// pendingRuns have an unanswered, unexpired request.
	pendingRuns map[string]bool
	// pos is each claimable run's place in the claim order (1 = next).
	pos map[string]int
	// blocker is the run a blocked queued run waits behind.
	blocker map[string]string
	// answered are parked runs whose answer is in (claimable).
	answered, queued, recovering int
}

// readQueue reads the waiting work. Only unfinished runs are read, so its
// cost follows the work in flight, not the history.
func (a *API) readQueue(ctx context.Context) (queue, error) {
	q := queue{pendingRuns: map[string]bool{}, pos: map[string]int{}, blocker: map[string]string{}}
	runners, err := a.st.ListRunners(ctx)
	if err != nil {
		return q, err
	}
	for _, ru := range runners {
		if time.Since(ru.HeartbeatAt) < a.opt.LeaseWindow {
			q.liveRunners++
		}
	}
	reqs, err := a.st.ListRequests(ctx, store.RequestQuery{Status: store.RequestPending})
	if err != nil {
		return q, err
	}
	now := time.Now()
	for _, r := range reqs {
		if r.ExpiresAt.IsZero() || now.Before(r.ExpiresAt) {
			q.pendingRuns[r.RunID] = true
		}
	}
	// Ordered by priority, then age: the order ClaimNext uses.
	runs, err := a.st.RunsWithStatus(ctx, busyStatuses()...)
	if err != nil {
		return q, err
	}
	busy := map[string]string{} // session → its busy (non-queued) run
	for _, r := range runs {
		if r.Status != run.Queued {
			busy[r.SessionID] = r.ID
		}
	}
	// Ids only: the runs are large and the queue may be long.
	var parked []parkedRun
	var rest []string
	firstQueued := map[string]string{} // session → its first queued run
	for _, r := range runs {
		switch r.Status {
		case run.AwaitingApproval, run.AwaitingClarify:
			if r.RunnerID == "" && !q.pendingRuns[r.ID] {
				parked = append(parked, parkedRun{r.ID, r.CreatedAt})
				q.answered++
			}
		case run.Recovering:
			q.recovering++
			if !r.RetryAt.After(now) {
				rest = append(rest, r.ID)
			}
		case run.Queued:
			q.queued++
			if b, ok := busy[r.SessionID]; ok {
				q.blocker[r.ID] = b
				continue
			}
			if f, ok := firstQueued[r.SessionID]; ok {
				q.blocker[r.ID] = f
				continue
			}
			firstQueued[r.SessionID] = r.ID
			rest = append(rest, r.ID)
		}
	}
	slices.SortStableFunc(parked, func(a, b parkedRun) int { return a.created.Compare(b.created) })
	for i, p := range parked {
		q.pos[p.id] = i + 1
	}
	for i, id := range rest {
		q.pos[id] = len(parked) + i + 1
	}
	return q, nil
}

// parkedRun is an answered parked run, in line by age.
type parkedRun struct {
	id      string
	created time.Time
}

// waitingFor says what ru waits for, or nil when it executes or has ended.
func (q queue) waitingFor(ru store.Run) *waitingView {
	switch ru.Status {
	case run.AwaitingApproval, run.AwaitingClarify:
		if q.pendingRuns[ru.ID] || ru.RunnerID != "" {
			return &waitingView{Reason: WaitPerson}
		}
	case run.Recovering:
		if _, ok := q.pos[ru.ID]; !ok {
			return &waitingView{Reason: WaitRetry, RetryAt: &event.Time{Time: ru.RetryAt}}
		}
	case run.Queued:
		if b, ok := q.blocker[ru.ID]; ok {
			return &waitingView{Reason: WaitPreviousRun, RunID: b}
		}
	default:
		return nil
	}
	p, ok := q.pos[ru.ID]
	if !ok {
		return nil
	}
	if q.liveRunners == 0 {
		return &waitingView{Reason: WaitRunner, Position: p}
	}
	return &waitingView{Reason: WaitRunnerSlot, Position: p}
}
