package control_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// How the end of a goal's run settles the goal: each case runs the goal's
// first run to an outcome and checks the goal and whether a continuation
// was queued.
func TestGoalAfterRun(t *testing.T) {
	t.Parallel()
	usage := event.UsageTotals{InputTokens: 600, OutputTokens: 400, CostUSD: 0.5}
	tests := []struct {
		name       string
		in         control.GoalInput
		report     string // update_goal status the run reported ("" none)
		usage      bool   // the run used `usage`
		outcome    run.Status
		queueFirst bool // a person queued a message during the run
		wantStatus string
		wantReason string
		wantNext   bool
	}{
		{"no report: continues", control.GoalInput{MaxRuns: 3}, "", false, run.Completed, false, control.GoalActive, "", true},
		{"in progress: continues", control.GoalInput{MaxRuns: 3}, tool.GoalInProgress, false, run.Completed, false, control.GoalActive, "", true},
		{"met", control.GoalInput{MaxRuns: 3}, tool.GoalMet, false, run.Completed, false, control.GoalMet, "met", false},
		{"blocked", control.GoalInput{MaxRuns: 3}, tool.GoalBlocked, false, run.Completed, false, control.GoalBlocked, "blocked", false},
		{"run limit", control.GoalInput{MaxRuns: 1}, "", false, run.Completed, false, control.GoalPaused, "limit_runs", false},
		{"met beats the run limit", control.GoalInput{MaxRuns: 1}, tool.GoalMet, false, run.Completed, false, control.GoalMet, "met", false},
		{"token limit", control.GoalInput{MaxTokens: 1000}, "", true, run.Completed, false, control.GoalPaused, "limit_tokens", false},
		{"under the token limit", control.GoalInput{MaxTokens: 1001}, "", true, run.Completed, false, control.GoalActive, "", true},
		{"cost limit", control.GoalInput{MaxCostUSD: 0.5}, "", true, run.Completed, false, control.GoalPaused, "limit_cost", false},
		{"time limit", control.GoalInput{MaxDuration: time.Millisecond}, "", false, run.Completed, false, control.GoalPaused, "limit_duration", false},
		{"stopped by a person", control.GoalInput{}, "", false, run.Cancelled, false, control.GoalPaused, "run_cancelled", false},
		{"failed", control.GoalInput{}, "", false, run.Failed, false, control.GoalPaused, "run_failed", false},
		{"expired", control.GoalInput{}, "", false, run.Expired, false, control.GoalPaused, "run_expired", false},
		{"a queued message goes first", control.GoalInput{}, "", false, run.Completed, true, control.GoalActive, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			s := e.session()
			in := tt.in
			in.Text = "ship it"
			if _, err := e.svc.SetGoal(e.ctx, s.ID, in); err != nil {
				t.Fatal(err)
			}
			runs := e.runs(s.ID)
			if len(runs) != 1 || runs[0].Status != run.Queued {
				t.Fatalf("setting a goal on an idle session queued %+v", runs)
			}
			first := e.hold(runs[0].ID, "rn_1", run.Running, time.Minute)
			var drafts []event.Draft
			if tt.report != "" {
				res, _ := json.Marshal(tool.GoalReport{Status: tt.report, Note: "a note"})
				drafts = append(drafts, event.Draft{Type: event.ToolDone, Payload: event.ToolDonePayload{ToolCallID: "c1",
					Name: tool.NameUpdateGoal, Status: event.ToolOK, Result: res}})
			}
			if tt.usage {
				drafts = append(drafts, event.Draft{Type: event.Usage, Payload: event.UsagePayload{TurnID: "t1", Turn: usage, Total: usage}})
			}
			if len(drafts) > 0 {
				e.emit(first, "rn_1", drafts...)
			}
			if d := tt.in.MaxDuration; d > 0 {
				time.Sleep(2 * d) // the clock is kept to the millisecond
			}
			if tt.queueFirst {
				e.send(s.ID, "a person's message", "")
			}
			e.mustDo(func(tx store.Tx) error {
				return control.Finish(e.ctx, tx, first.ID, "rn_1", control.Outcome{Status: tt.outcome})
			})
			g, err := e.st.GetGoal(e.ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if g.Status != tt.wantStatus || g.Reason != tt.wantReason || g.Runs != 1 {
				t.Fatalf("goal = %s (%s) after %d runs; want %s (%s) after 1", g.Status, g.Reason, g.Runs, tt.wantStatus, tt.wantReason)
			}
			if tt.usage && (g.Tokens != 1000 || g.CostUSD != 0.5) {
				t.Fatalf("goal used %d tokens, $%v; want 1000, $0.5", g.Tokens, g.CostUSD)
			}
			if tt.report != "" && g.Note != "a note" {
				t.Fatalf("goal note %q", g.Note)
			}
			var next []store.Run
			for _, r := range e.runs(s.ID)[1:] {
				for _, ev := range ofType(e.runEvents(r.ID), event.RunQueued) {
					if decode[event.RunQueuedPayload](t, ev).Continuation > 0 {
						next = append(next, r)
					}
				}
			}
			if got := len(next) == 1; got != tt.wantNext || len(next) > 1 {
				t.Fatalf("%d continuations queued, want next %v", len(next), tt.wantNext)
			}
			if tt.wantNext {
				q := decode[event.RunQueuedPayload](t, ofType(e.runEvents(next[0].ID), event.RunQueued)[0])
				if q.Continuation != 2 || q.Input != next[0].Input {
					t.Fatalf("continuation run.queued = %+v", q)
				}
			}
			// Every change is journaled as goal.updated of no run.
			ups := ofType(e.events(store.EventQuery{SessionID: s.ID, Types: []event.Type{event.GoalUpdated}}), event.GoalUpdated)
			if len(ups) != 2 || ups[1].RunID != "" || decode[event.GoalUpdatedPayload](t, ups[1]).Status != tt.wantStatus {
				t.Fatalf("goal.updated events: %d", len(ups))
			}
		})
	}
}

// Pause, resume (a fresh budget, a run at once when idle) and clear.
func TestGoalStatus(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session()
	if _, err := e.svc.SetGoalStatus(e.ctx, s.ID, control.GoalPaused, nil); err == nil {
		t.Fatal("pausing a session without a goal succeeded")
	}
	if _, err := e.svc.SetGoal(e.ctx, s.ID, control.GoalInput{Text: "ship it", MaxRuns: 2}); err != nil {
		t.Fatal(err)
	}
	first := e.runs(s.ID)[0]
	g, err := e.svc.SetGoalStatus(e.ctx, s.ID, control.GoalPaused, nil)
	if err != nil || g.Status != control.GoalPaused || g.Reason != "paused" {
		t.Fatalf("pause: %+v, %v", g, err)
	}
	// The queued run still runs (pausing stops continuation, not runs);
	// its end queues nothing.
	e.hold(first.ID, "rn_1", run.Running, time.Minute)
	e.mustDo(func(tx store.Tx) error {
		return control.Finish(e.ctx, tx, first.ID, "rn_1", control.Outcome{Status: run.Completed})
	})
	if n := len(e.runs(s.ID)); n != 1 {
		t.Fatalf("%d runs after a paused goal's run ended", n)
	}
	g, err = e.svc.SetGoalStatus(e.ctx, s.ID, control.GoalActive, nil)
	if err != nil || g.Status != control.GoalActive || g.Runs != 0 {
		t.Fatalf("resume: %+v, %v", g, err)
	}
	if n := len(e.runs(s.ID)); n != 2 {
		t.Fatalf("%d runs after resuming on an idle session, want 2", n)
	}
	if g, err = e.svc.ClearGoal(e.ctx, s.ID, nil); err != nil || g.Status != control.GoalCleared {
		t.Fatalf("clear: %+v, %v", g, err)
	}
	_, err = e.svc.SetGoalStatus(e.ctx, s.ID, control.GoalActive, nil)
	wantCode(t, err, control.CodeConflict)
	_, err = e.svc.SetGoal(e.ctx, s.ID, control.GoalInput{Text: " "})
	wantCode(t, err, control.CodeInvalidInput)
}
