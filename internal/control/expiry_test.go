package control_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// sendExpiring queues a run that may take ten minutes.
func (e *env) sendExpiring() store.Run {
	e.t.Helper()
	r, err := e.svc.Send(e.ctx, e.session().ID, control.Message{Content: "work", ExpiresIn: 10 * time.Minute})
	if err != nil {
		e.t.Fatal(err)
	}
	if got := r.ExpiresAt.Sub(r.CreatedAt); got != 10*time.Minute {
		e.t.Fatalf("expires_at - created_at = %v, want 10m", got)
	}
	return r
}

// parkedExpiring is an expiring run parked on a pending request of kind.
func parkedExpiring(e *env, kind string) (store.Run, store.Request) {
	e.t.Helper()
	r := e.hold(e.sendExpiring().ID, "rn_1", run.Running, time.Minute)
	e.emit(r, "rn_1", event.Draft{Type: event.ToolStarted, Payload: event.ToolStartedPayload{ToolCallID: "call_1", Name: "run_command", TurnID: "t1"}})
	q := e.ask(r, "rn_1", kind, "call_1")
	e.mustDo(func(tx store.Tx) error { return control.Park(e.ctx, tx, r.ID, "rn_1") })
	return e.run(r.ID), q
}

// TestExpireRun brings a run in each state a run waits or works in to its
// deadline: whoever may end it ends it expired, once, with what it left
// open closed and its pending requests cancelled.
func TestExpireRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(e *env) (store.Run, *store.Request)
		fence string
	}{
		{"running, ended by its runner", func(e *env) (store.Run, *store.Request) {
			r := e.hold(e.sendExpiring().ID, "rn_1", run.Running, time.Minute)
			e.emit(r, "rn_1",
				d(event.ToolStarted, event.ToolStartedPayload{ToolCallID: "c1", Name: "run_command", TurnID: "t1"}),
				d(event.ToolUpdated, event.ToolUpdatedPayload{ToolCallID: "c1", Phase: "executing"}))
			return r, nil
		}, "rn_1"},
		{"queued", func(e *env) (store.Run, *store.Request) { return e.sendExpiring(), nil }, ""},
		{"parked awaiting approval", func(e *env) (store.Run, *store.Request) {
			r, q := parkedExpiring(e, store.KindApproval)
			return r, &q
		}, ""},
		{"parked awaiting clarify", func(e *env) (store.Run, *store.Request) {
			r, q := parkedExpiring(e, store.KindClarify)
			return r, &q
		}, ""},
		{"recovering", func(e *env) (store.Run, *store.Request) {
			return e.hold(e.sendExpiring().ID, "", run.Recovering, 0), nil
		}, ""},
		{"paused", func(e *env) (store.Run, *store.Request) {
			return e.hold(e.sendExpiring().ID, "", run.Paused, 0), nil
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r, q := tc.setup(e)
			// Before its deadline nothing ends it.
			err := e.do(func(tx store.Tx) error {
				return control.ExpireRun(e.ctx, tx, r.ID, tc.fence, r.ExpiresAt.Add(-time.Millisecond))
			})
			if !errors.Is(err, store.ErrConflict) || e.run(r.ID).Status.Terminal() {
				t.Fatalf("before the deadline: err = %v, status %s", err, e.run(r.ID).Status)
			}
			e.mustDo(func(tx store.Tx) error { return control.ExpireRun(e.ctx, tx, r.ID, tc.fence, r.ExpiresAt) })

			got := e.run(r.ID)
			if got.Status != run.Expired || got.RunnerID != "" || got.ErrorCode != control.ErrorExpired || got.EndedAt.IsZero() {
				t.Fatalf("run after expiry: %+v", got)
			}
			evs := e.runEvents(r.ID)
			dones := ofType(evs, event.RunDone)
			if len(dones) != 1 || evs[len(evs)-1].Type != event.RunDone {
				t.Fatalf("run.done %d times, last event %s; want once, last", len(dones), evs[len(evs)-1].Type)
			}
			p := decode[event.RunDonePayload](t, dones[0])
			if p.Status != string(run.Expired) || p.Error == nil || p.Error.Code != control.ErrorExpired ||
				!strings.HasPrefix(p.Error.Message, "Expired after 10m:") {
				t.Fatalf("run.done = %+v (error %+v)", p, p.Error)
			}
			// No tool call is left open.
			started, done := map[string]bool{}, map[string]bool{}
			for _, ev := range evs {
				switch ev.Type {
				case event.ToolStarted:
					started[decode[event.ToolStartedPayload](t, ev).ToolCallID] = true
				case event.ToolDone:
					done[decode[event.ToolDonePayload](t, ev).ToolCallID] = true
				}
			}
			for c := range started {
				if !done[c] {
					t.Errorf("tool call %s left open", c)
				}
			}
			if q != nil {
				if got, _ := e.st.GetRequest(e.ctx, q.ID); got.Status != store.RequestCancelled {
					t.Errorf("request %s is %s, want cancelled", q.ID, got.Status)
				}
			}
			// A second expiry (another watchdog) changes nothing.
			n := len(evs)
			err = e.do(func(tx store.Tx) error { return control.ExpireRun(e.ctx, tx, r.ID, "", r.ExpiresAt.Add(time.Hour)) })
			if !errors.Is(err, store.ErrConflict) || len(e.runEvents(r.ID)) != n {
				t.Fatalf("second expiry: err = %v, events %d -> %d", err, n, len(e.runEvents(r.ID)))
			}
		})
	}
}

// TestExpireRunLeavesHeldRuns: the sweep (no fence) never ends a run a
// runner holds; the runner ends it, and only its holder may.
func TestExpireRunLeavesHeldRuns(t *testing.T) {
	t.Parallel()
	for _, status := range []run.Status{run.Running, run.AwaitingApproval, run.Cancelling} {
		t.Run(string(status), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.hold(e.sendExpiring().ID, "rn_1", status, time.Minute)
			n := len(e.runEvents(r.ID))
			late := r.ExpiresAt.Add(time.Minute)
			if err := e.do(func(tx store.Tx) error { return control.ExpireRun(e.ctx, tx, r.ID, "", late) }); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("sweep: err = %v, want ErrConflict", err)
			}
			if err := e.do(func(tx store.Tx) error { return control.ExpireRun(e.ctx, tx, r.ID, "rn_2", late) }); !errors.Is(err, store.ErrLeaseLost) {
				t.Fatalf("another runner: err = %v, want ErrLeaseLost", err)
			}
			if got := e.run(r.ID); got.Status != status || len(e.runEvents(r.ID)) != n {
				t.Fatalf("changed: status %s, events %d -> %d", got.Status, n, len(e.runEvents(r.ID)))
			}
		})
	}
}

func TestExpiresIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"", 0, false},
		{"10m", 10 * time.Minute, false},
		{"1s", time.Second, false},
		{"168h", 7 * 24 * time.Hour, false},
		{"999ms", 0, true},
		{"169h", 0, true},
		{"-5m", 0, true},
		{"10", 0, true},
		{"0s", 0, true},
		{"0", 0, true},
		{"ten minutes", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := control.ParseExpiresIn(tc.in)
			if tc.wantErr {
				wantCode(t, err, control.CodeInvalidExpiresIn)
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseExpiresIn(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
	// Send refuses one out of bounds and queues nothing.
	e := newEnv(t)
	s := e.session()
	for _, d := range []time.Duration{-time.Second, time.Millisecond, 8 * 24 * time.Hour} {
		_, err := e.svc.Send(e.ctx, s.ID, control.Message{Content: "x", ExpiresIn: d})
		wantCode(t, err, control.CodeInvalidExpiresIn)
	}
	if rs := e.runs(s.ID); len(rs) != 0 {
		t.Fatalf("refused messages queued %d runs", len(rs))
	}
	if r := e.send(s.ID, "no deadline", ""); !r.ExpiresAt.IsZero() {
		t.Fatalf("a run sent without expires_in has a deadline %v", r.ExpiresAt)
	}
}
