package runner

import (
	"context"
	"time"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Telemetry watches what the runner executes (metrics, traces). The
// agent's model and tool calls are reported through the embedded
// agent.Observer, under the context Executing returns.
type Telemetry interface {
	agent.Observer
	// Executing starts watching one execution of a run (one claim); end is
	// called once with how it ended (an Outcome*).
	Executing(ctx context.Context, runID string, attempt int) (context.Context, func(outcome string))
	// QueueWaited reports how long a run waited before its first execution.
	QueueWaited(d time.Duration)
	// LinkQueued ties the execution in ctx to the traced request that
	// queued the run (a W3C traceparent).
	LinkQueued(ctx context.Context, traceparent string)
}

// How an execution ends.
const (
	OutcomeCompleted  = "completed"
	OutcomeFailed     = "failed"
	OutcomeCancelled  = "cancelled"
	OutcomeExpired    = "expired"     // its deadline passed (h17-expiry)
	OutcomeParked     = "parked"      // waits for a person, holding no runner
	OutcomePaused     = "paused"      // a budget, a loop or a person paused it (h16-budgets)
	OutcomeHandedOver = "handed_over" // the runner stopped; another continues
	OutcomeRecovering = "recovering"  // a transient failure; retried later
	OutcomeLeaseLost  = "lease_lost"  // another runner owns the run now
	OutcomeStoreError = "store_error" // its ending could not be written
)

// firstStart reports whether claiming ru started it for the first time:
// a queued run becomes running with its first attempt, while a parked run
// keeps its awaiting status and a retried one counts a later attempt.
func firstStart(ru store.Run) bool { return ru.Attempt == 1 && ru.Status == run.Running }

// unwatched is the Telemetry of a runner given none.
type unwatched struct{}

func (unwatched) ModelCall(ctx context.Context, _, _ string) (context.Context, func(agent.ModelOutcome)) {
	return ctx, func(agent.ModelOutcome) {}
}

func (unwatched) ToolCall(ctx context.Context, _, _ string) (context.Context, func(string)) {
	return ctx, func(string) {}
}

func (unwatched) Executing(ctx context.Context, _ string, _ int) (context.Context, func(string)) {
	return ctx, func(string) {}
}

func (unwatched) QueueWaited(time.Duration)          {}
func (unwatched) LinkQueued(context.Context, string) {}
