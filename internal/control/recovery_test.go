package control_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// withRetries queues a run with the given retry policy and gives it to
// rn_1, running, with a tool call that had begun.
func withRetries(e *env, p control.RetryPolicy) store.Run {
	e.t.Helper()
	svc := control.NewService(e.st, e.w, e.ws, p)
	r, err := svc.Send(e.ctx, e.session().ID, control.Message{Content: "work"})
	if err != nil {
		e.t.Fatal(err)
	}
	r = e.hold(r.ID, "rn_1", run.Running, time.Minute)
	e.emit(r, "rn_1",
		d(event.RunStarted, event.RunStartedPayload{RunnerID: "rn_1", Attempt: 1}),
		d(event.TurnStarted, event.TurnStartedPayload{TurnID: "t0"}),
		d(event.MessageDelta, event.DeltaPayload{ID: "m0", TurnID: "t0", Delta: "Let me"}),
		d(event.ToolStarted, event.ToolStartedPayload{ToolCallID: "c0", Name: "run_command", TurnID: "t0"}),
	)
	return e.run(r.ID)
}

func TestTransientStops(t *testing.T) {
	t.Parallel()
	cause := event.ErrorInfo{Code: "provider_rate_limited", Message: "demo: slow down", Retryable: true}
	tests := []struct {
		name       string
		policy     control.RetryPolicy
		used       int // automatic retries already used
		stop       func(e *env, r store.Run) error
		wantStatus run.Status
		wantRetry  int
		wantDelay  time.Duration
		wantDiag   string
	}{
		{"dead runner, retries left", control.RetryPolicy{Max: 2, Backoff: time.Second}, 0,
			func(e *env, r store.Run) error {
				return e.do(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "its runner process exited") })
			}, run.Recovering, 1, time.Second, "worker_stopped"},
		{"dead runner, second retry doubles the wait", control.RetryPolicy{Max: 2, Backoff: time.Second}, 1,
			func(e *env, r store.Run) error {
				return e.do(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "its runner process exited") })
			}, run.Recovering, 2, 2 * time.Second, "worker_stopped"},
		{"dead runner, retries used up", control.RetryPolicy{Max: 1, Backoff: time.Second}, 1,
			func(e *env, r store.Run) error {
				return e.do(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "its runner process exited") })
			}, run.Interrupted, 0, 0, "worker_stopped"},
		{"provider failure, retries left", control.RetryPolicy{Max: 3, Backoff: 500 * time.Millisecond}, 0,
			func(e *env, r store.Run) error {
				return e.do(func(tx store.Tx) error { return control.Recover(e.ctx, tx, r.ID, "rn_1", cause) })
			}, run.Recovering, 1, 500 * time.Millisecond, "retrying"},
		{"provider failure, no retries", control.RetryPolicy{}, 0,
			func(e *env, r store.Run) error {
				return e.do(func(tx store.Tx) error { return control.Recover(e.ctx, tx, r.ID, "rn_1", cause) })
			}, run.Interrupted, 0, 0, "retrying"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := withRetries(e, tt.policy)
			if tt.used > 0 {
				// Simulate earlier retries: the counter is only written by
				// the transitions, so go through the store directly.
				if err := e.st.Write(e.ctx, func(tx store.Tx) error {
					r.Retries = tt.used
					return tx.UpdateRun(e.ctx, r)
				}); err != nil {
					t.Fatal(err)
				}
			}
			before := len(e.runEvents(r.ID))
			start := time.Now()
			if err := tt.stop(e, r); err != nil {
				t.Fatal(err)
			}
			got := e.run(r.ID)
			if got.Status != tt.wantStatus || got.RunnerID != "" || !got.LeaseExpiresAt.IsZero() {
				t.Fatalf("run = %+v, want %s, released", got, tt.wantStatus)
			}
			added := e.runEvents(r.ID)[before:]
			if want := []event.Type{event.MessageDone, event.RunStatus, event.Diagnostic}; !slices.Equal(types(added), want) {
				t.Fatalf("events = %v, want %v (open text closed, the started tool call left for the resume)", types(added), want)
			}
			st := decode[event.RunStatusPayload](t, added[1])
			diag := decode[event.DiagnosticPayload](t, added[2])
			if diag.Code != tt.wantDiag || st.Status != string(tt.wantStatus) {
				t.Fatalf("status %+v diagnostic %+v", st, diag)
			}
			if tt.wantStatus == run.Recovering {
				if st.Retry != tt.wantRetry || st.MaxRetries != tt.policy.Max || st.RetryAt == nil || got.Retries != tt.wantRetry {
					t.Fatalf("status = %+v, run retries %d", st, got.Retries)
				}
				if d := got.RetryAt.Sub(start); d < tt.wantDelay-50*time.Millisecond || d > tt.wantDelay+5*time.Second {
					t.Fatalf("retry in %s, want about %s", d, tt.wantDelay)
				}
				// Recovering keeps the session busy.
				if _, err := e.svc.Send(e.ctx, r.SessionID, control.Message{Content: "next", IfBusy: control.IfBusyReject}); err == nil {
					t.Fatal("a recovering run must keep its session busy")
				}
			}
			if tt.wantDiag == "retrying" && tt.policy.Max > 0 && !strings.Contains(diag.Message, "retry 1 of 3") {
				t.Fatalf("diagnostic message %q", diag.Message)
			}
		})
	}
}

// A recovering run is claimed only once its retry time has come, and then
// before anything queued behind it in its session.
func TestClaimRecovering(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// The backoff leaves the first claim time to finish before the retry
	// time on a loaded machine; one that finished later may claim.
	r := withRetries(e, control.RetryPolicy{Max: 1, Backoff: 2 * time.Second})
	e.mustDo(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "gone") })
	behind := e.send(r.SessionID, "after", "")
	retryAt := e.run(r.ID).RetryAt
	claim := func() (store.Run, bool) {
		var c store.Run
		var ok bool
		e.mustDo(func(tx store.Tx) (err error) {
			c, ok, err = control.Claim(e.ctx, tx, "rn_2", time.Minute, describeDemo)
			return err
		})
		return c, ok
	}
	c, ok := claim()
	if ok && time.Now().Before(retryAt) {
		t.Fatalf("claimed %s before the retry time", c.ID)
	}
	for deadline := time.Now().Add(10 * time.Second); !ok; c, ok = claim() {
		if time.Now().After(deadline) {
			t.Fatal("recovering run never claimable")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c.ID != r.ID || c.Attempt != 2 || c.Status != run.Running || !c.RetryAt.IsZero() {
		t.Fatalf("claimed %+v, want the recovering run, attempt 2", c)
	}
	evs := e.runEvents(r.ID)
	p := decode[event.RunStartedPayload](t, evs[len(evs)-1])
	if !p.Resumed || p.Attempt != 2 || p.RunnerID != "rn_2" {
		t.Fatalf("run.started = %+v", p)
	}
	if got := e.run(behind.ID); got.Status != run.Queued {
		t.Fatalf("the run behind is %s", got.Status)
	}
}

func TestHandover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := withRetries(e, control.RetryPolicy{Max: 1, Backoff: time.Second})
	if err := e.do(func(tx store.Tx) error { return control.Handover(e.ctx, tx, r.ID, "rn_other", "stopping") }); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("handover by a runner that does not hold the run: %v", err)
	}
	e.mustDo(func(tx store.Tx) error {
		return control.Handover(e.ctx, tx, r.ID, "rn_1", "runner rn_1 is shutting down")
	})
	got := e.run(r.ID)
	if got.Status != run.Queued || got.RunnerID != "" || got.Retries != 0 {
		t.Fatalf("run = %+v, want queued with no retry used", got)
	}
	evs := e.runEvents(r.ID)
	st := decode[event.RunStatusPayload](t, evs[len(evs)-1])
	if st.Status != "queued" || !strings.HasPrefix(st.Reason, "handed over: ") {
		t.Fatalf("status = %+v", st)
	}

	// Waiting for a person: only released, announced by a diagnostic.
	r2, _ := pendingApproval(e, store.KindApproval)
	e.mustDo(func(tx store.Tx) error { return control.Handover(e.ctx, tx, r2.ID, "rn_1", "stopping") })
	if got := e.run(r2.ID); got.Status != run.AwaitingApproval || got.RunnerID != "" {
		t.Fatalf("waiting run = %+v", got)
	}
}

func TestResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		setup    func(e *env) store.Run
		wantCode string
	}{
		{"interrupted", func(e *env) store.Run {
			r := withRetries(e, control.RetryPolicy{})
			e.mustDo(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "gone") })
			return r
		}, ""},
		{"recovering skips the wait", func(e *env) store.Run {
			r := withRetries(e, control.RetryPolicy{Max: 1, Backoff: time.Hour})
			e.mustDo(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "gone") })
			return r
		}, ""},
		{"running", func(e *env) store.Run { return withRetries(e, control.RetryPolicy{}) }, control.CodeNotResumable},
		{"queued", func(e *env) store.Run { return e.send(e.session().ID, "x", "") }, control.CodeNotResumable},
		{"completed", func(e *env) store.Run {
			r := withRetries(e, control.RetryPolicy{})
			e.mustDo(func(tx store.Tx) error {
				return control.Finish(e.ctx, tx, r.ID, "rn_1", control.Outcome{Status: run.Completed})
			})
			return r
		}, control.CodeNotResumable},
		{"superseded by a later run", func(e *env) store.Run {
			r := withRetries(e, control.RetryPolicy{})
			e.mustDo(func(tx store.Tx) error { return control.Interrupt(e.ctx, tx, r.ID, "gone") })
			later := e.send(r.SessionID, "next", "")
			e.hold(later.ID, "rn_2", run.Running, time.Minute)
			return r
		}, control.CodeSuperseded},
		{"unknown", func(e *env) store.Run { return store.Run{ID: "run_01m7y3svk0qzqr34e8q9rjq2bz"} }, control.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := tt.setup(e)
			var before []event.Event
			if r.SessionID != "" {
				before = e.runEvents(r.ID)
			}
			got, err := e.svc.Resume(e.ctx, r.ID)
			if tt.wantCode != "" {
				ce, ok := control.AsError(err)
				if !ok || ce.Code != tt.wantCode {
					t.Fatalf("err = %v, want %s", err, tt.wantCode)
				}
				if r.SessionID != "" && len(e.runEvents(r.ID)) != len(before) {
					t.Fatal("a refused resume wrote events")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != run.Queued || !got.RetryAt.IsZero() {
				t.Fatalf("resumed run = %+v", got)
			}
			evs := e.runEvents(r.ID)
			st := decode[event.RunStatusPayload](t, evs[len(evs)-1])
			if st.Status != "queued" || st.Reason != "resumed by a person" {
				t.Fatalf("status = %+v", st)
			}
			// A second resume is refused and changes nothing.
			if _, err := e.svc.Resume(e.ctx, r.ID); err == nil {
				t.Fatal("second resume accepted")
			}
			if n := len(e.runEvents(r.ID)); n != len(evs) {
				t.Fatalf("second resume wrote %d events", n-len(evs))
			}
		})
	}
}
