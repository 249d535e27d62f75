package runner_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// A runner executes each scripted run to one end, obeying what people
// write meanwhile (answers, cancel), with a journal of seq 1..n and one
// terminal event.
func TestRunScenarios(t *testing.T) {
	t.Parallel()
	echo := call("run_command", `{"command":"echo hi"}`)
	answer := func(choice string) func(*env, store.Run) {
		return func(e *env, r store.Run) {
			q := e.pending(r.ID)
			if _, err := e.svc.Respond(e.ctx, q.ID, control.Response{Choice: choice}); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	cancel := func(e *env, r store.Run) {
		if _, err := e.svc.Cancel(e.ctx, r.ID, nil); err != nil {
			e.t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		script demo.Script
		cfg    runner.Config
		retry  control.RetryPolicy
		before func(*env, store.Run) // after the message is queued, before the runner starts
		act    func(*env, store.Run) // while it runs
		want   run.Status
		check  func(*testing.T, []event.Event)
	}{
		{
			name: "text answer", script: script(turn(text("Hello there."))), want: run.Completed,
			check: func(t *testing.T, evs []event.Event) {
				if count(evs, event.RunStarted) != 1 || count(evs, event.MessageDelta) == 0 || count(evs, event.MessageDone) != 1 {
					t.Fatalf("journal %v", typesOf(evs))
				}
			},
		},
		{
			name: "command approved once", script: script(turn(echo), turn(text("done"))), act: answer("once"), want: run.Completed,
			check: wantTool(event.ToolOK, event.ApprovalRequested),
		},
		{
			name: "command denied", script: script(turn(echo), turn(text("ok, not running it"))), act: answer("deny"), want: run.Completed,
			check: wantTool(event.ToolDenied, event.ApprovalRequested),
		},
		{
			name: "remembered rule approves", script: script(turn(echo), turn(text("done"))), want: run.Completed,
			before: func(e *env, r store.Run) {
				if _, err := e.svc.CreateRule(e.ctx, control.NewRule{Tool: "run_command", Pattern: "echo *"}); err != nil {
					e.t.Fatal(err)
				}
			},
			check: func(t *testing.T, evs []event.Event) {
				wantTool(event.ToolOK)(t, evs)
				if count(evs, event.ApprovalRequested) != 0 {
					t.Fatal("a remembered rule still asked")
				}
			},
		},
		{
			name: "approval expires", script: script(turn(echo), turn(text("nobody answered"))), cfg: runner.Config{ApprovalTTL: 50 * time.Millisecond},
			want: run.Completed, check: func(t *testing.T, evs []event.Event) {
				for _, e := range evs {
					if e.Type == event.ApprovalResolved {
						var p event.ResolvedPayload
						_ = json.Unmarshal(e.Payload, &p)
						if p.Status != store.RequestExpired {
							t.Fatalf("approval.resolved %s, want expired", e.Payload)
						}
						return
					}
				}
				t.Fatalf("no approval.resolved in %v", typesOf(evs))
			},
		},
		{
			name: "clarify answered", script: script(turn(call("clarify", `{"question":"Which?","choices":["a","b"]}`)), turn(text("b it is"))),
			act: func(e *env, r store.Run) {
				q := e.pending(r.ID)
				if q.Kind != store.KindClarify {
					e.t.Fatalf("request kind %s", q.Kind)
				}
				if _, err := e.svc.Respond(e.ctx, q.ID, control.Response{Answer: "b"}); err != nil {
					e.t.Fatal(err)
				}
			},
			want: run.Completed, check: wantTool(event.ToolOK, event.ClarifyRequested),
		},
		{
			name: "cancel mid-stream", script: script(turn(demo.Step{Kind: demo.KindText, Text: "tok tok tok tok tok tok tok tok", ChunkSize: 4, ChunkDelayMS: 200})),
			act: func(e *env, r store.Run) {
				e.wait(r.ID, "running", isStatus(run.Running))
				cancel(e, r)
			},
			want: run.Cancelled,
		},
		{
			name: "cancel while waiting for a person", script: script(turn(echo)),
			act: func(e *env, r store.Run) {
				q := e.pending(r.ID)
				cancel(e, r)
				e.wait(r.ID, "the end", terminal)
				if got, _ := e.st.GetRequest(e.ctx, q.ID); got.Status != store.RequestCancelled {
					e.t.Fatalf("request after cancel: %s", got.Status)
				}
			},
			want: run.Cancelled,
		},
		{
			name: "cancel before a runner claims", script: script(turn(text("never"))), before: cancel, want: run.Cancelled,
			check: func(t *testing.T, evs []event.Event) {
				if count(evs, event.RunStarted) != 0 {
					t.Fatal("a cancelled run was started")
				}
			},
		},
		{
			name: "provider error fails the run", script: script(turn(demo.Step{Kind: demo.KindError, Code: "bad_request", Message: "no"})),
			want: run.Failed,
		},
		{
			name: "transient error without retries interrupts", script: script(turn(demo.Step{Kind: demo.KindError, Code: "rate_limited", Message: "slow", Retryable: true})),
			// Interrupted is not terminal: the run waits for a person to
			// resume it; cancelling ends it.
			act: func(e *env, r store.Run) {
				e.wait(r.ID, "interrupted", isStatus(run.Interrupted))
				cancel(e, r)
			},
			want: run.Cancelled,
		},
	}
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, open, tc.script, tc.retry)
				r := e.send("go")
				if tc.before != nil {
					tc.before(e, r)
				}
				e.start(tc.cfg)
				if tc.act != nil {
					tc.act(e, r)
				}
				got := e.wait(r.ID, "the end", terminal)
				if got.Status != tc.want {
					t.Fatalf("status %s (%s: %s), want %s", got.Status, got.ErrorCode, got.ErrorMessage, tc.want)
				}
				evs := e.events(r.ID)
				checkOnce(t, evs, tc.want)
				if tc.check != nil {
					tc.check(t, evs)
				}
			})
		}
	})
}

// wantTool checks the run's one tool call ended with status, after the
// events of asked.
func wantTool(status string, asked ...event.Type) func(*testing.T, []event.Event) {
	return func(t *testing.T, evs []event.Event) {
		t.Helper()
		var dones []event.ToolDonePayload
		for _, e := range evs {
			if e.Type == event.ToolDone {
				var p event.ToolDonePayload
				if err := json.Unmarshal(e.Payload, &p); err != nil {
					t.Fatal(err)
				}
				dones = append(dones, p)
			}
		}
		if len(dones) != 1 || dones[0].Status != status {
			t.Fatalf("tool.done %+v, want one with status %s", dones, status)
		}
		for _, typ := range asked {
			if !slices.Contains(typesOf(evs), typ) {
				t.Fatalf("no %s in %v", typ, typesOf(evs))
			}
		}
	}
}

// A runner stopping mid-run hands it over; another runner resumes it and
// ends it once.
func TestShutdownHandsOver(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		// Slow enough (2 s) that the run is still streaming when A stops, on
		// a loaded machine too.
		e := newEnv(t, open, script(turn(demo.Step{Kind: demo.KindText, Text: strings.Repeat("tok ", 20), ChunkSize: 4, ChunkDelayMS: 100})), control.RetryPolicy{})
		r := e.send("go")
		a := e.start(runner.Config{})
		e.wait(r.ID, "running", isStatus(run.Running))
		a.stop()
		if got := e.run(r.ID); got.Status != run.Queued || got.RunnerID != "" {
			t.Fatalf("after shutdown the run is %s held by %q, want queued and free", got.Status, got.RunnerID)
		}
		if rs, _ := e.st.ListRunners(e.ctx); len(rs) != 0 {
			t.Fatalf("a stopped runner is still registered: %+v", rs)
		}
		b := e.start(runner.Config{})
		e.wait(r.ID, "completed", isStatus(run.Completed))
		evs := e.events(r.ID)
		checkOnce(t, evs, run.Completed)
		var starts []event.RunStartedPayload
		for _, ev := range evs {
			if ev.Type == event.RunStarted {
				var p event.RunStartedPayload
				_ = json.Unmarshal(ev.Payload, &p)
				starts = append(starts, p)
			}
		}
		if len(starts) != 2 || starts[0].RunnerID != a.ID() || starts[1].RunnerID != b.ID() || !starts[1].Resumed {
			t.Fatalf("run.started %+v, want runner A then B resuming", starts)
		}
	})
}

// MaxConcurrent bounds the runs a runner executes at once: the second
// waits queued while the first runs.
func TestMaxConcurrent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		e := newEnv(t, open, script(turn(demo.Step{Kind: demo.KindDelay, DelayMS: 1000}, text("done"))), control.RetryPolicy{})
		first, second := e.send("one"), e.send("two")
		e.start(runner.Config{MaxConcurrent: 1})
		e.wait(first.ID, "running", isStatus(run.Running))
		if got := e.run(second.ID); got.Status != run.Queued {
			t.Fatalf("second run %s while the first runs, want queued", got.Status)
		}
		e.wait(first.ID, "completed", isStatus(run.Completed))
		e.wait(second.ID, "completed", isStatus(run.Completed))
	})
}

// A registered runner is listed with its identity before it claims
// anything.
func TestRegister(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		e := newEnv(t, open, script(turn(text("hi"))), control.RetryPolicy{})
		s := e.start(runner.Config{Version: "v-test"})
		deadline := time.Now().Add(10 * time.Second)
		for {
			rs, err := e.st.ListRunners(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) == 1 {
				if rs[0].ID != s.ID() || rs[0].Version != "v-test" || rs[0].PID == 0 || rs[0].HeartbeatAt.IsZero() {
					t.Fatalf("runner %+v", rs[0])
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the runner was not registered")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}
