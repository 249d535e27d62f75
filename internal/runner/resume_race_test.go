package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// slowWindDown is telemetry whose end of a parked execution answers the
// run's request itself and returns only once the runner has claimed the
// run again: the parked execution winds down after the resumed one began,
// as a descheduled goroutine does on a loaded machine.
type slowWindDown struct {
	e    *env
	once sync.Once
}

func (*slowWindDown) ModelCall(ctx context.Context, _, _ string) (context.Context, func(agent.ModelOutcome)) {
	return ctx, func(agent.ModelOutcome) {}
}

func (*slowWindDown) ToolCall(ctx context.Context, _, _ string) (context.Context, func(string)) {
	return ctx, func(string) {}
}

func (s *slowWindDown) Executing(ctx context.Context, runID string, _ int) (context.Context, func(string)) {
	return ctx, func(outcome string) {
		if outcome != runner.OutcomeParked {
			return
		}
		s.once.Do(func() {
			q := s.e.pending(runID)
			if _, err := s.e.svc.Respond(s.e.ctx, q.ID, control.Response{Choice: "once"}); err != nil {
				s.e.t.Error(err)
				return
			}
			s.e.wait(runID, "the run claimed again", func(r store.Run) bool { return r.Status == run.Running })
		})
	}
}

func (*slowWindDown) QueueWaited(time.Duration)          {}
func (*slowWindDown) LinkQueued(context.Context, string) {}

// A parked run answered and claimed again before its parked execution has
// wound down is the resumed execution's: the parked one's leaving does not
// make the heartbeat take the run for an orphan and interrupt it (seen as
// "lease lost" in a loaded full test run).
func TestParkedRunResumedBeforeItsExecutionWindsDown(t *testing.T) {
	t.Parallel()
	slow := call("run_command", `{"command":"sleep 1"}`)
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		e := newEnv(t, open, script(turn(slow), turn(text("done"))), control.RetryPolicy{})
		// Heartbeats every 100 ms, ten of them while the command sleeps.
		e.start(runner.Config{Lease: 300 * time.Millisecond, Telemetry: &slowWindDown{e: e}})
		r := e.send("go")
		got := e.wait(r.ID, "the end", terminal)
		if got.Status != run.Completed {
			t.Fatalf("run ended %s (%s), want completed", got.Status, got.ErrorMessage)
		}
		checkOnce(t, e.events(r.ID), run.Completed)
	})
}
