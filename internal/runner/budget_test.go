package runner_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

func usage(in, out int64) demo.Step {
	return demo.Step{Kind: demo.KindUsage, InputTokens: in, OutputTokens: out}
}

// pauseOf returns the run's last paused status and pause diagnostic.
func pauseOf(t *testing.T, evs []event.Event) (event.RunStatusPayload, event.DiagnosticPayload) {
	t.Helper()
	var st event.RunStatusPayload
	var d event.DiagnosticPayload
	for _, e := range evs {
		switch e.Type {
		case event.RunStatus:
			var p event.RunStatusPayload
			if json.Unmarshal(e.Payload, &p) == nil && p.Status == string(run.Paused) {
				st = p
			}
		case event.Diagnostic:
			var p event.DiagnosticPayload
			if json.Unmarshal(e.Payload, &p) == nil && (p.Code == control.PauseBudget || p.Code == control.PauseStuck || p.Code == control.PauseByPerson) {
				d = p
			}
		}
	}
	return st, d
}

// TestBudgetPausesAndResumes: a run with a 500-token budget pauses at the
// step boundary where it passes it, holding no runner, with the limit and
// the numbers in its reason; resumed with 5,000 it runs the tool call it
// had not begun and completes.
func TestBudgetPausesAndResumes(t *testing.T) {
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		e := newEnv(t, open, script(
			turn(call("run_command", `{"command":"echo one"}`), usage(300, 12)),
			turn(call("run_command", `{"command":"echo two"}`), usage(200, 12)),
			turn(text("done"), usage(250, 5)),
		), control.RetryPolicy{})
		r := e.send("work")
		if err := e.st.Write(e.ctx, func(tx store.Tx) error {
			return tx.PutBudget(e.ctx, store.Budget{Scope: budget.ScopeRun, Target: r.ID, Limits: budget.Limits{MaxTokens: 500}, UpdatedAt: time.Now()})
		}); err != nil {
			t.Fatal(err)
		}
		e.start(runner.Config{ApprovalMode: "off"})
		got := e.wait(r.ID, "paused", isStatus(run.Paused))
		if got.RunnerID != "" {
			t.Fatalf("paused run held by %s", got.RunnerID)
		}
		st, d := pauseOf(t, e.events(r.ID))
		if st.Reason != "token budget of 500 reached: 524 used" || d.Code != control.PauseBudget || d.Details["limit"] != "max_tokens" {
			t.Fatalf("paused with %+v, %+v", st, d)
		}
		if n := count(e.events(r.ID), event.ToolDone); n != 1 {
			t.Fatalf("%d tool calls done before the pause, want 1 (the second is not begun)", n)
		}
		if _, err := e.svc.ResumeWith(e.ctx, r.ID, control.ResumeInput{Budget: &budget.Limits{MaxTokens: 5000}}); err != nil {
			t.Fatal(err)
		}
		e.wait(r.ID, "completed", terminal)
		evs := e.events(r.ID)
		checkOnce(t, evs, run.Completed)
		if n := count(evs, event.ToolDone); n != 2 {
			t.Fatalf("%d tool calls done, want 2", n)
		}
		// The server's day counts every model call and tool call, the
		// final answer's and the call run after the resume included.
		day, err := e.st.DayUsage(e.ctx, budget.Day(time.Now()))
		if err != nil || day.Tokens != 312+212+255 || day.ToolCalls != 2 {
			t.Fatalf("day usage %+v, %v; want 779 tokens and 2 tool calls", day, err)
		}
	})
}

// TestLoopPausesAsStuck: the same call with the same arguments three times
// in a row pauses the run, naming the call; a known secret among the
// arguments is not repeated in the reason.
func TestLoopPausesAsStuck(t *testing.T) {
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		const key = "sk-live-loop0123456789"
		same := call("run_command", `{"command":"echo again `+key+`"}`)
		e := newEnv(t, open, script(turn(same), turn(same), turn(same), turn(same), turn(text("never"))), control.RetryPolicy{})
		r := e.send("loop")
		e.start(runner.Config{ApprovalMode: "off", Redactor: secret.NewRedactor(key)})
		e.wait(r.ID, "paused", isStatus(run.Paused))
		st, d := pauseOf(t, e.events(r.ID))
		if !strings.HasPrefix(st.Reason, "looks stuck: called run_command with the same arguments 3 times in a row") || d.Details["tool"] != "run_command" {
			t.Fatalf("paused with %+v, %+v", st, d)
		}
		for _, s := range []string{st.Reason, d.Message, d.Details["args"].(string)} {
			if strings.Contains(s, key) || !strings.Contains(s, "[redacted]") {
				t.Fatalf("the pause quotes %q: want the key redacted", s)
			}
		}
		if n := count(e.events(r.ID), event.ToolDone); n != 3 {
			t.Fatalf("%d tool calls, want 3", n)
		}
	})
}

// TestPersonPausesRunningRun: a pause asked while the run streams takes
// effect at its next step boundary; cancelling the paused run ends it.
func TestPersonPausesRunningRun(t *testing.T) {
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		slow := demo.Step{Kind: demo.KindDelay, DelayMS: 300}
		e := newEnv(t, open, script(
			turn(slow, call("run_command", `{"command":"echo 1"}`)),
			turn(slow, call("run_command", `{"command":"echo 2"}`)),
			turn(text("done")),
		), control.RetryPolicy{})
		r := e.send("work")
		e.start(runner.Config{ApprovalMode: "off"})
		e.wait(r.ID, "running", isStatus(run.Running))
		if _, err := e.svc.RequestPause(e.ctx, r.ID, nil); err != nil {
			t.Fatal(err)
		}
		e.wait(r.ID, "paused", isStatus(run.Paused))
		if _, d := pauseOf(t, e.events(r.ID)); d.Code != control.PauseByPerson {
			t.Fatalf("pause diagnostic %+v", d)
		}
		if _, err := e.svc.Cancel(e.ctx, r.ID, nil); err != nil {
			t.Fatal(err)
		}
		checkOnce(t, e.events(r.ID), run.Cancelled)
	})
}

// TestHealthReports: every HealthEvery model calls the run journals a
// run_health diagnostic with what it spent and its error rate.
func TestHealthReports(t *testing.T) {
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		e := newEnv(t, open, script(
			turn(call("run_command", `{"command":"echo 1"}`), usage(100, 10)),
			turn(call("run_command", `{"command":"exit 3"}`), usage(100, 10)),
			turn(call("run_command", `{"command":"echo 3"}`), usage(100, 10)),
			turn(call("run_command", `{"command":"echo 4"}`), usage(100, 10)),
			turn(text("done")),
		), control.RetryPolicy{})
		r := e.send("work")
		e.start(runner.Config{ApprovalMode: "off", HealthEvery: 2})
		e.wait(r.ID, "completed", terminal)
		var health []event.DiagnosticPayload
		for _, ev := range e.events(r.ID) {
			var p event.DiagnosticPayload
			if ev.Type == event.Diagnostic && json.Unmarshal(ev.Payload, &p) == nil && p.Code == "run_health" {
				health = append(health, p)
			}
		}
		if len(health) != 2 {
			t.Fatalf("%d health reports, want 2", len(health))
		}
		last := health[1]
		if last.Details["turns"] != float64(4) || last.Details["tokens"] != float64(440) || last.Details["tool_calls"] != float64(3) {
			t.Fatalf("last health report %+v", last)
		}
		if !strings.HasPrefix(last.Message, "Health after 4 model calls: 440 tokens") {
			t.Fatalf("message %q", last.Message)
		}
	})
}

// TestLoopCaughtAcrossApprovals: a run that parks for every call (manual
// approval) is re-claimed each time; its repeats still count, from the
// journal.
func TestLoopCaughtAcrossApprovals(t *testing.T) {
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		t.Parallel()
		same := call("run_command", `{"command":"echo again"}`)
		e := newEnv(t, open, script(turn(same), turn(same), turn(same), turn(same), turn(text("never"))), control.RetryPolicy{})
		r := e.send("loop")
		e.start(runner.Config{ApprovalMode: "manual"})
		for range 3 {
			q := e.pending(r.ID)
			if _, err := e.svc.Respond(e.ctx, q.ID, control.Response{Choice: control.ChoiceOnce}); err != nil {
				t.Fatal(err)
			}
			e.wait(r.ID, "the answer taken", func(ru store.Run) bool {
				qs, err := e.st.ListRequests(e.ctx, store.RequestQuery{RunID: r.ID, Status: store.RequestPending})
				return err == nil && (len(qs) == 0 || qs[0].ID != q.ID)
			})
		}
		e.wait(r.ID, "paused", isStatus(run.Paused))
		if _, d := pauseOf(t, e.events(r.ID)); d.Code != control.PauseStuck {
			t.Fatalf("paused with %+v", d)
		}
	})
}
