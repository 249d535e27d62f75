package runner_test

// Run expiry (h17-expiry) as the runner and the watchdog see it.

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// sendExpiring queues content in a new session with expires_in d.
func (e *env) sendExpiring(content string, d time.Duration) store.Run {
	e.t.Helper()
	s, err := e.svc.CreateSession(e.ctx, control.NewSession{})
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := e.svc.Send(e.ctx, s.ID, control.Message{Content: content, ExpiresIn: d})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// A command that outlives the run's deadline is cut off there: the run
// ends expired, its tool call closed as an error, run.done once and last.
func TestLongToolCallOutlivesExpiry(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e := newEnv(t, open, script(turn(call("run_command", `{"command":"sleep 30"}`)), turn(text("slept"))), control.RetryPolicy{})
		if _, err := e.svc.CreateRule(e.ctx, control.NewRule{Tool: "run_command", Pattern: "sleep *"}); err != nil {
			t.Fatal(err)
		}
		r := e.sendExpiring("sleep on it", time.Second)
		e.start(runner.Config{})
		got := e.wait(r.ID, "the run to end", terminal)
		if got.Status != run.Expired || got.ErrorCode != control.ErrorExpired {
			t.Fatalf("run ended %s (%s: %s), want expired", got.Status, got.ErrorCode, got.ErrorMessage)
		}
		if got.EndedAt.Sub(got.ExpiresAt) > 5*time.Second {
			t.Fatalf("ended at %v, %v after its deadline: the command was not cut off", got.EndedAt, got.EndedAt.Sub(got.ExpiresAt))
		}
		evs := e.events(r.ID)
		checkOnce(t, evs, run.Expired)
		if count(evs, event.ToolStarted) != 1 || count(evs, event.ToolDone) != 1 {
			t.Fatalf("tool calls not closed once: %v", typesOf(evs))
		}
		for _, ev := range evs {
			if ev.Type != event.ToolDone {
				continue
			}
			var p event.ToolDonePayload
			if err := json.Unmarshal(ev.Payload, &p); err != nil || p.Status == event.ToolOK {
				t.Fatalf("tool.done %s: the command should not have finished", ev.Payload)
			}
		}
		if count(evs, event.TurnStarted) != 1 {
			t.Fatalf("the model was asked again after the deadline: %v", typesOf(evs))
		}
	})
}

// A queued run past its deadline is never claimed: the watchdog ends it
// expired even with no runner alive.
func TestWatchdogExpiresQueuedRun(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e := newEnv(t, open, script(turn(text("too late"))), control.RetryPolicy{})
		r := e.sendExpiring("later", time.Second)
		d := runner.NewWatchdog(e.st, e.w, "", runner.Config{Lease: time.Second}, slog.New(slog.DiscardHandler))
		d.Sweep(e.ctx)
		if got := e.run(r.ID); got.Status != run.Queued {
			t.Fatalf("before its deadline the sweep made it %s", got.Status)
		}
		time.Sleep(time.Until(r.ExpiresAt) + 10*time.Millisecond)
		d.Sweep(e.ctx)
		got := e.run(r.ID)
		if got.Status != run.Expired {
			t.Fatalf("after its deadline the run is %s, want expired", got.Status)
		}
		evs := e.events(r.ID)
		checkOnce(t, evs, run.Expired)
		if count(evs, event.RunStarted) != 0 {
			t.Fatalf("an expired run was started: %v", typesOf(evs))
		}
	})
}
