package control_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

func d(typ event.Type, p any) event.Draft { return event.Draft{Type: typ, Payload: p} }

// midTurn is a run held by rn_1 that crashed or is being stopped mid-turn:
// a closed text segment, open reasoning and text, a finished call, an
// executing call and a call waiting for approval.
func midTurn(e *env) (store.Run, store.Request) {
	e.t.Helper()
	r := e.send(e.session().ID, "work", "")
	r = e.hold(r.ID, "rn_1", run.Running, time.Minute)
	e.emit(r, "rn_1",
		d(event.RunStarted, event.RunStartedPayload{RunnerID: "rn_1", Attempt: 1}),
		d(event.TurnStarted, event.TurnStartedPayload{TurnID: "t0"}),
		d(event.MessageDelta, event.DeltaPayload{ID: "m0", TurnID: "t0", Delta: "Done before."}),
		d(event.MessageDone, event.DonePayload{ID: "m0", TurnID: "t0", Text: "Done before."}),
		d(event.TurnEnded, event.TurnEndedPayload{TurnID: "t0", StopReason: "end_turn"}),
		d(event.Usage, event.UsagePayload{TurnID: "t0", Turn: event.UsageTotals{InputTokens: 10, OutputTokens: 4, CachedTokens: 2}}),
		d(event.TurnStarted, event.TurnStartedPayload{TurnID: "t1", Index: 1}),
		d(event.ReasoningDelta, event.DeltaPayload{ID: "r1", TurnID: "t1", Delta: "hmm"}),
		d(event.MessageDelta, event.DeltaPayload{ID: "m1", TurnID: "t1", Delta: "Hel"}),
		d(event.MessageDelta, event.DeltaPayload{ID: "m1", TurnID: "t1", Delta: "lo"}),
		d(event.Usage, event.UsagePayload{TurnID: "t1", Turn: event.UsageTotals{InputTokens: 5, OutputTokens: 1, ReasoningTokens: 3}}),
		d(event.ToolStarted, event.ToolStartedPayload{ToolCallID: "c0", Name: "list_dir", TurnID: "t1"}),
		d(event.ToolUpdated, event.ToolUpdatedPayload{ToolCallID: "c0", Phase: "executing"}),
		d(event.ToolDone, event.ToolDonePayload{ToolCallID: "c0", Name: "list_dir", Status: event.ToolOK, Output: "a.go"}),
		d(event.ToolStarted, event.ToolStartedPayload{ToolCallID: "c1", Name: "run_command", TurnID: "t1"}),
		d(event.ToolUpdated, event.ToolUpdatedPayload{ToolCallID: "c1", Phase: "executing"}),
		d(event.ToolStarted, event.ToolStartedPayload{ToolCallID: "c2", Name: "run_command", TurnID: "t1"}),
	)
	q := e.ask(r, "rn_1", store.KindApproval, "c2")
	return e.run(r.ID), q
}

// midTurnUsage is the sum of midTurn's usage events.
var midTurnUsage = event.UsageTotals{InputTokens: 15, OutputTokens: 5, CachedTokens: 2, ReasoningTokens: 3}

func TestFinish(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		outcome     control.Outcome
		fence       string
		wantClosing string
	}{
		{"cancelled by its runner", control.Outcome{Status: run.Cancelled}, "rn_1", event.ToolCancelled},
		{"cancelled by the web tier", control.Outcome{Status: run.Cancelled}, "", event.ToolCancelled},
		{"failed", control.Outcome{Status: run.Failed, Error: &event.ErrorInfo{Code: "provider_auth", Message: "demo: bad key"}}, "rn_1", event.ToolError},
		{"completed", control.Outcome{Status: run.Completed}, "rn_1", event.ToolError},
		{"expired", control.Outcome{Status: run.Expired}, "rn_1", event.ToolError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r, q := midTurn(e)
			n := len(e.runEvents(r.ID))
			e.mustDo(func(tx store.Tx) error { return control.Finish(e.ctx, tx, r.ID, tt.fence, tt.outcome) })

			evs := e.runEvents(r.ID)
			added := evs[n:]
			want := []event.Type{event.ApprovalResolved, event.ReasoningDone, event.MessageDone, event.ToolDone, event.ToolDone, event.RunDone}
			if !slices.Equal(types(added), want) {
				t.Fatalf("events written = %v, want %v", types(added), want)
			}
			if p := decode[event.ResolvedPayload](t, added[0]); p.RequestID != q.ID || p.Status != store.RequestCancelled {
				t.Fatalf("approval.resolved = %+v", p)
			}
			if p := decode[event.DonePayload](t, added[1]); p.ID != "r1" || p.TurnID != "t1" || p.Text != "hmm" || !p.Partial {
				t.Fatalf("reasoning.done = %+v", p)
			}
			if p := decode[event.DonePayload](t, added[2]); p.ID != "m1" || p.TurnID != "t1" || p.Text != "Hello" || !p.Partial {
				t.Fatalf("message.done = %+v", p)
			}
			for i, call := range []string{"c1", "c2"} {
				p := decode[event.ToolDonePayload](t, added[3+i])
				if p.ToolCallID != call || p.Name != "run_command" || p.Status != tt.wantClosing ||
					!strings.HasPrefix(p.Output, tt.wantClosing+": ") || p.Error == "" {
					t.Fatalf("tool.done %d = %+v", i, p)
				}
			}
			done := decode[event.RunDonePayload](t, added[5])
			if done.Status != string(tt.outcome.Status) || done.Usage != midTurnUsage || !added[5].Terminal {
				t.Fatalf("run.done = %+v", done)
			}
			if (done.Error == nil) != (tt.outcome.Error == nil) || (done.Error != nil && *done.Error != *tt.outcome.Error) {
				t.Fatalf("run.done error = %+v, want %+v", done.Error, tt.outcome.Error)
			}
			for i, ev := range evs {
				if ev.Seq != int64(i+1) {
					t.Fatalf("seq gap: event %d has seq %d", i, ev.Seq)
				}
			}

			got := e.run(r.ID)
			if got.Status != tt.outcome.Status || got.RunnerID != "" || !got.LeaseExpiresAt.IsZero() || got.EndedAt.IsZero() || got.Usage != midTurnUsage {
				t.Fatalf("run = %+v", got)
			}
			if tt.outcome.Error != nil && (got.ErrorCode != tt.outcome.Error.Code || got.ErrorMessage != tt.outcome.Error.Message) {
				t.Fatalf("run error = %q %q", got.ErrorCode, got.ErrorMessage)
			}
			if gq, _ := e.st.GetRequest(e.ctx, q.ID); gq.Status != store.RequestCancelled {
				t.Fatalf("request = %+v", gq)
			}

			// Nothing is left open, so the history is valid for any provider.
			items := transcript.Fold(evs)
			for _, it := range items {
				if it.Open || (it.Tool != nil && !it.Tool.Done()) {
					t.Fatalf("still open after Finish: %+v", it)
				}
			}
			msgs, pending := transcript.History(items)
			if len(pending) != 0 {
				t.Fatalf("pending after Finish: %+v", pending)
			}
			last := msgs[len(msgs)-1]
			if last.Role != "tool" || len(last.ToolResults) != 3 {
				t.Fatalf("history tail = %+v", last)
			}

			// Exactly one terminal event: a second Finish conflicts.
			n = len(evs)
			err := e.do(func(tx store.Tx) error {
				return control.Finish(e.ctx, tx, r.ID, "", control.Outcome{Status: run.Completed})
			})
			if !errors.Is(err, store.ErrConflict) {
				t.Fatalf("second Finish = %v, want conflict", err)
			}
			if len(e.runEvents(r.ID)) != n {
				t.Fatal("second Finish wrote events")
			}
		})
	}
}

func TestFinishFenced(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, q := midTurn(e)
	before := e.lastID()
	err := e.do(func(tx store.Tx) error {
		return control.Finish(e.ctx, tx, r.ID, "rn_other", control.Outcome{Status: run.Completed})
	})
	if !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("err = %v, want lease lost", err)
	}
	if e.lastID() != before {
		t.Fatal("a fenced-out Finish wrote events")
	}
	if got := e.run(r.ID); got.Status != run.AwaitingApproval || got.RunnerID != "rn_1" {
		t.Fatalf("run = %+v", got)
	}
	if gq, _ := e.st.GetRequest(e.ctx, q.ID); gq.Status != store.RequestPending {
		t.Fatalf("request = %+v", gq)
	}
	if err := e.do(func(tx store.Tx) error {
		return control.Finish(e.ctx, tx, "run_missing", "", control.Outcome{Status: run.Completed})
	}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Finish of a missing run = %v", err)
	}
}

func TestFinishNothingOpen(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.send(e.session().ID, "work", "")
	n := len(e.runEvents(r.ID))
	e.mustDo(func(tx store.Tx) error {
		return control.Finish(e.ctx, tx, r.ID, "", control.Outcome{Status: run.Completed})
	})
	added := e.runEvents(r.ID)[n:]
	if !slices.Equal(types(added), []event.Type{event.RunDone}) {
		t.Fatalf("events = %v", types(added))
	}
	if got := e.run(r.ID); got.Status != run.Completed || got.Usage != (event.UsageTotals{}) {
		t.Fatalf("run = %+v", got)
	}
	// A completed run leaves no run_end item.
	for _, it := range transcript.Fold(e.runEvents(r.ID)) {
		if it.Kind == transcript.KindRunEnd {
			t.Fatalf("run_end item for a completed run: %+v", it)
		}
	}
}

func TestInterrupt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		setup      func(e *env) store.Run
		wantStatus run.Status
		wantRunner string
		wantEvents []event.Type
	}{
		{"running becomes interrupted", func(e *env) store.Run {
			r, _ := midTurn(e)
			// Back to running, as if the answer arrived and the runner then died.
			e.mustDo(func(tx store.Tx) error {
				return control.SetStatus(e.ctx, tx, r.ID, "rn_1", run.Running, "answered", run.AwaitingApproval)
			})
			return e.run(r.ID)
		}, run.Interrupted, "", []event.Type{event.ReasoningDone, event.MessageDone, event.RunStatus, event.Diagnostic}},
		{"awaiting approval is only released", func(e *env) store.Run {
			r, _ := midTurn(e)
			return r
		}, run.AwaitingApproval, "", nil},
		{"awaiting clarify is only released", func(e *env) store.Run {
			r, _ := pendingApproval(e, store.KindClarify)
			return e.run(r.ID)
		}, run.AwaitingClarify, "", nil},
		{"cancelling is finished as cancelled", func(e *env) store.Run {
			r, _ := midTurn(e)
			if _, err := e.svc.Cancel(e.ctx, r.ID, nil); err != nil {
				e.t.Fatal(err)
			}
			return e.run(r.ID)
		}, run.Cancelled, "", []event.Type{event.ApprovalResolved, event.ReasoningDone, event.MessageDone, event.ToolDone, event.ToolDone, event.RunDone}},
		{"queued is left alone", func(e *env) store.Run {
			return e.send(e.session().ID, "work", "")
		}, run.Queued, "", nil},
		{"finished is left alone", func(e *env) store.Run {
			r := e.send(e.session().ID, "work", "")
			r, _ = e.svc.Cancel(e.ctx, r.ID, nil)
			return r
		}, run.Cancelled, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := tt.setup(e)
			before := e.runEvents(r.ID)
			e.mustDo(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "its runner process exited") })
			got := e.run(r.ID)
			if got.Status != tt.wantStatus || got.RunnerID != tt.wantRunner || !got.LeaseExpiresAt.IsZero() {
				t.Fatalf("run = %+v, want status %s runner %q and no lease", got, tt.wantStatus, tt.wantRunner)
			}
			added := e.runEvents(r.ID)[len(before):]
			if !slices.Equal(types(added), tt.wantEvents) {
				t.Fatalf("events written = %v, want %v", types(added), tt.wantEvents)
			}
			if tt.wantStatus != run.Interrupted {
				return
			}
			st := decode[event.RunStatusPayload](t, added[len(added)-2])
			if st.Status != string(run.Interrupted) || st.Reason != "its runner process exited" {
				t.Fatalf("run.status = %+v", st)
			}
			diag := decode[event.DiagnosticPayload](t, added[len(added)-1])
			lastSeq := before[len(before)-1].Seq
			lastType := before[len(before)-1].Type
			// Plain words in the text; seqs and event types only in the details.
			if diag.Level != "error" || diag.Code != "worker_stopped" ||
				strings.Contains(diag.Message, fmt.Sprint(lastSeq)) || strings.Contains(diag.Message, string(lastType)) ||
				strings.Contains(diag.Message, "resumed") ||
				!strings.Contains(diag.Message, "its runner process exited") {
				t.Fatalf("diagnostic = %+v (last seq %d, type %s)", diag, lastSeq, lastType)
			}
			if diag.Details["last_seq"] != float64(lastSeq) || diag.Details["runner_id"] != "rn_1" || diag.Details["last_event_type"] != string(lastType) {
				t.Fatalf("diagnostic details = %+v", diag.Details)
			}
			// An interrupted run keeps its journal open for a resume and
			// no longer keeps the session busy.
			if n := len(ofType(e.runEvents(r.ID), event.RunDone)); n != 0 {
				t.Fatalf("%d run.done for an interrupted run", n)
			}
			if _, err := e.svc.Send(e.ctx, r.SessionID, control.Message{Content: "next", IfBusy: control.IfBusyReject}); err != nil {
				t.Fatalf("session still busy: %v", err)
			}
			// Interrupting again changes nothing.
			n := e.lastID()
			e.mustDo(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "again") })
			if e.lastID() != n {
				t.Fatal("second interrupt wrote events")
			}
		})
	}
}

// TestReleasedRunIsReclaimed: a run waiting for a person whose runner died
// is released, stays unclaimable while its request is pending (it holds no
// runner while it waits), and is claimed again once answered, without a
// new run.started: it continues, it does not start over.
func TestReleasedRunIsReclaimed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, q := pendingApproval(e, store.KindApproval)
	e.mustDo(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "gone") })
	claim := func() (store.Run, bool) {
		var claimed store.Run
		var ok bool
		e.mustDo(func(tx store.Tx) (err error) {
			claimed, ok, err = control.Claim(e.ctx, tx, "rn_2", time.Minute, describeDemo)
			return err
		})
		return claimed, ok
	}
	if got, ok := claim(); ok {
		t.Fatalf("claimed %s while its request is pending", got.ID)
	}
	if _, err := e.svc.Respond(e.ctx, q.ID, control.Response{Choice: "once"}); err != nil {
		t.Fatal(err)
	}
	before := len(e.runEvents(r.ID))
	claimed, ok := claim()
	if !ok || claimed.ID != r.ID || claimed.Status != run.AwaitingApproval || claimed.RunnerID != "rn_2" || claimed.Attempt != 1 {
		t.Fatalf("claimed = %+v, %v", claimed, ok)
	}
	if evs := e.runEvents(r.ID); len(evs) != before {
		t.Fatalf("claiming a parked run journaled %s", evs[len(evs)-1].Type)
	}
	e.mustDo(func(tx store.Tx) error {
		return control.SetStatus(e.ctx, tx, r.ID, "rn_2", run.Running, "answered", run.AwaitingApproval, run.AwaitingClarify)
	})
	if got := e.run(r.ID); got.Status != run.Running {
		t.Fatalf("status = %s", got.Status)
	}
}

// TestPark: a runner parks a run it holds while it waits for a person; the
// run keeps its status and loses its runner, a cancel that arrived first
// finishes it, and another runner's park is refused.
func TestPark(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		cancel     bool
		fence      string
		wantErr    error
		wantStatus run.Status
	}{
		{name: "parks", fence: "rn_1", wantStatus: run.AwaitingApproval},
		{name: "cancel arrived first", cancel: true, fence: "rn_1", wantStatus: run.Cancelled},
		{name: "not the holder", fence: "rn_other", wantErr: store.ErrLeaseLost, wantStatus: run.AwaitingApproval},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r, _ := pendingApproval(e, store.KindApproval)
			if tc.cancel {
				if _, err := e.svc.Cancel(e.ctx, r.ID, nil); err != nil {
					t.Fatal(err)
				}
			}
			err := e.w.Do(e.ctx, func(tx store.Tx) error { return control.Park(e.ctx, tx, r.ID, tc.fence) })
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("park: %v, want %v", err, tc.wantErr)
			}
			got := e.run(r.ID)
			if got.Status != tc.wantStatus {
				t.Fatalf("status = %s, want %s", got.Status, tc.wantStatus)
			}
			if tc.wantErr == nil && got.RunnerID != "" {
				t.Fatalf("parked run still held by %q", got.RunnerID)
			}
		})
	}
}

func TestClaim(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	claim := func(runner string) (store.Run, bool) {
		t.Helper()
		var r store.Run
		var ok bool
		e.mustDo(func(tx store.Tx) (err error) {
			r, ok, err = control.Claim(e.ctx, tx, runner, time.Minute, describeDemo)
			return err
		})
		return r, ok
	}
	if _, ok := claim("rn_1"); ok {
		t.Fatal("claimed from an empty queue")
	}
	s := e.session()
	first, err := e.svc.Send(e.ctx, s.ID, control.Message{Content: "one", Model: "special"})
	if err != nil {
		t.Fatal(err)
	}
	second := e.send(s.ID, "two", "")

	r, ok := claim("rn_1")
	if !ok || r.ID != first.ID || r.Status != run.Running || r.RunnerID != "rn_1" || r.Attempt != 1 ||
		r.StartedAt.IsZero() || !r.LeaseExpiresAt.After(time.Now()) {
		t.Fatalf("claimed = %+v, %v", r, ok)
	}
	evs := e.runEvents(first.ID)
	p := decode[event.RunStartedPayload](t, evs[len(evs)-1])
	if p.RunnerID != "rn_1" || p.Attempt != 1 || p.Resumed || p.Model != "special" || p.Provider != "demo" {
		t.Fatalf("run.started = %+v", p)
	}
	// One busy run per session: the second waits.
	if r, ok := claim("rn_2"); ok {
		t.Fatalf("claimed %s while the session is busy", r.ID)
	}
	e.mustDo(func(tx store.Tx) error {
		return control.Finish(e.ctx, tx, first.ID, "rn_1", control.Outcome{Status: run.Completed})
	})
	if r, ok := claim("rn_2"); !ok || r.ID != second.ID {
		t.Fatalf("claimed %+v, %v; want the second run", r, ok)
	}
}

func TestSetStatusAndRelease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.send(e.session().ID, "work", "")
	r = e.hold(r.ID, "rn_1", run.Running, time.Minute)
	n := len(e.runEvents(r.ID))

	tests := []struct {
		name      string
		fence     string
		to        run.Status
		from      []run.Status
		wantErr   error
		wantState run.Status
		newEvents int
	}{
		{"another runner is fenced out", "rn_2", run.Paused, nil, store.ErrLeaseLost, run.Running, 0},
		{"same status is a no-op", "rn_1", run.Running, nil, nil, run.Running, 0},
		{"precondition fails", "rn_1", run.AwaitingClarify, []run.Status{run.AwaitingApproval}, store.ErrConflict, run.Running, 0},
		{"moves and journals", "rn_1", run.AwaitingClarify, []run.Status{run.Running}, nil, run.AwaitingClarify, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.do(func(tx store.Tx) error {
				return control.SetStatus(e.ctx, tx, r.ID, tt.fence, tt.to, "because", tt.from...)
			})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got := e.run(r.ID).Status; got != tt.wantState {
				t.Fatalf("status = %s, want %s", got, tt.wantState)
			}
			evs := e.runEvents(r.ID)
			if len(evs)-n != tt.newEvents {
				t.Fatalf("%d new events, want %d", len(evs)-n, tt.newEvents)
			}
			n = len(evs)
		})
	}
	// Release by someone else is a no-op; by the holder it frees the run.
	e.mustDo(func(tx store.Tx) error { return control.Release(e.ctx, tx, r.ID, "rn_2") })
	if got := e.run(r.ID); got.RunnerID != "rn_1" {
		t.Fatalf("released by a stranger: %+v", got)
	}
	e.mustDo(func(tx store.Tx) error { return control.Release(e.ctx, tx, r.ID, "rn_1") })
	if got := e.run(r.ID); got.RunnerID != "" || !got.LeaseExpiresAt.IsZero() || got.Status != run.AwaitingClarify {
		t.Fatalf("after release: %+v", got)
	}
	if len(e.runEvents(r.ID)) != n {
		t.Fatal("release wrote events")
	}
}

// describeDemo is the Claim describe callback of a runner that answers
// every run with the demo model, or the run's own model when it names one.
func describeDemo(r store.Run) event.RunStartedPayload {
	model := r.Model
	if model == "" {
		model = "demo-model"
	}
	return event.RunStartedPayload{Provider: "demo", Model: model, Demo: true}
}

// TestFinishSumsUsageAcrossClaims: usage comes from the journal, so the
// turns of a runner that died before finishing still count.
func TestFinishSumsUsageAcrossClaims(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.send(e.session().ID, "work", "")
	r = e.hold(r.ID, "rn_1", run.Running, time.Minute)
	e.emit(r, "rn_1", d(event.Usage, event.UsagePayload{TurnID: "t0", Turn: event.UsageTotals{InputTokens: 100, OutputTokens: 10}}))
	e.mustDo(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "crash") })
	r = e.hold(r.ID, "rn_2", run.Running, time.Minute)
	e.emit(r, "rn_2",
		d(event.Usage, event.UsagePayload{TurnID: "t1", Turn: event.UsageTotals{InputTokens: 120, OutputTokens: 7, CachedTokens: 100}}),
		d(event.Usage, "not a usage payload"),
	)
	e.mustDo(func(tx store.Tx) error {
		return control.Finish(e.ctx, tx, r.ID, "rn_2", control.Outcome{Status: run.Completed})
	})
	want := event.UsageTotals{InputTokens: 220, OutputTokens: 17, CachedTokens: 100}
	evs := e.runEvents(r.ID)
	if got := decode[event.RunDonePayload](t, evs[len(evs)-1]).Usage; got != want {
		t.Fatalf("run.done usage = %+v, want %+v", got, want)
	}
	if got := e.run(r.ID).Usage; got != want {
		t.Fatalf("run usage = %+v, want %+v", got, want)
	}
	if got := control.SumUsage(evs); got != want {
		t.Fatalf("SumUsage = %+v, want %+v", got, want)
	}
}
