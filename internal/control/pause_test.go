package control_test

import (
	"errors"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

var tokenCause = control.PauseCause{Code: control.PauseBudget, Reason: "token budget of 500 reached: 512 used",
	Details: map[string]any{"scope": budget.ScopeRun, "limit": "max_tokens", "max": "500", "used": "512"}}

// TestPause: only the runner holding a running run pauses it; the run is
// released, paused, with the reason in its status and a diagnostic.
func TestPause(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  run.Status
		fence   string
		want    run.Status
		wantErr error
	}{
		{"running, by its runner", run.Running, "rn_1", run.Paused, nil},
		{"running, by another runner", run.Running, "rn_other", run.Running, store.ErrLeaseLost},
		{"cancelling finishes cancelled", run.Cancelling, "rn_1", run.Cancelled, nil},
		{"waiting for a person", run.AwaitingApproval, "rn_1", run.AwaitingApproval, store.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.send(e.session().ID, "go", "")
			r = e.hold(r.ID, "rn_1", tt.status, time.Minute)
			before := len(e.runEvents(r.ID))
			err := e.do(func(tx store.Tx) error { return control.Pause(e.ctx, tx, r.ID, tt.fence, tokenCause) })
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Pause = %v, want %v", err, tt.wantErr)
			}
			got := e.run(r.ID)
			if got.Status != tt.want {
				t.Fatalf("status = %s, want %s", got.Status, tt.want)
			}
			evs := e.runEvents(r.ID)
			if tt.wantErr != nil {
				if len(evs) != before {
					t.Fatal("a refused pause wrote events")
				}
				return
			}
			if tt.want != run.Paused {
				return
			}
			if got.RunnerID != "" || !got.LeaseExpiresAt.IsZero() {
				t.Fatalf("paused run still held: %+v", got)
			}
			st := decode[event.RunStatusPayload](t, ofType(evs, event.RunStatus)[0])
			if st.Status != "paused" || st.Reason != tokenCause.Reason {
				t.Fatalf("status event = %+v", st)
			}
			c, ok := control.PausedBy(evs)
			if !ok || c.Code != control.PauseBudget || c.Details["used"] != "512" {
				t.Fatalf("PausedBy = %+v, %v", c, ok)
			}
		})
	}
}

func TestRequestPause(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   run.Status // "" leaves the run queued
		want     run.Status
		wantDiag string
		wantCode string
	}{
		{"queued pauses at once", "", run.Paused, control.PauseByPerson, ""},
		{"running asks its runner", run.Running, run.Running, control.PauseRequested, ""},
		{"waiting asks its runner", run.AwaitingClarify, run.AwaitingClarify, control.PauseRequested, ""},
		{"interrupted is refused", run.Interrupted, run.Interrupted, "", control.CodeNotPausable},
		{"cancelling is refused", run.Cancelling, run.Cancelling, "", control.CodeNotPausable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.send(e.session().ID, "go", "")
			if tt.status != "" {
				r = e.hold(r.ID, "rn_1", tt.status, time.Minute)
			}
			before := len(e.runEvents(r.ID))
			got, err := e.svc.RequestPause(e.ctx, r.ID, &event.Actor{Kind: "user", Name: "ann"})
			if tt.wantCode != "" {
				wantCode(t, err, tt.wantCode)
				if len(e.runEvents(r.ID)) != before {
					t.Fatal("a refused pause wrote events")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.want {
				t.Fatalf("status = %s, want %s", got.Status, tt.want)
			}
			diags := ofType(e.runEvents(r.ID), event.Diagnostic)
			if len(diags) == 0 || decode[event.DiagnosticPayload](t, diags[len(diags)-1]).Code != tt.wantDiag {
				t.Fatalf("diagnostics %v, want the last %s", diags, tt.wantDiag)
			}
			// Asking again is harmless.
			if _, err := e.svc.RequestPause(e.ctx, r.ID, nil); err != nil {
				t.Fatalf("second pause: %v", err)
			}
		})
	}
}

// TestResumePaused: a paused run resumes with raised limits of the scope
// that paused it; bad limits are refused and change nothing.
func TestResumePaused(t *testing.T) {
	t.Parallel()
	sessionCause := tokenCause
	sessionCause.Details = map[string]any{"scope": budget.ScopeSession}
	tests := []struct {
		name      string
		cause     control.PauseCause
		in        *budget.Limits
		wantCode  string
		wantScope string
	}{
		{"raise the run's tokens", tokenCause, &budget.Limits{MaxTokens: 5000}, "", budget.ScopeRun},
		{"raise the session's", sessionCause, &budget.Limits{MaxTokens: 5000}, "", budget.ScopeSession},
		{"no new limits", tokenCause, nil, "", ""},
		{"negative tokens", tokenCause, &budget.Limits{MaxTokens: -5}, control.CodeInvalidBudget, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r := e.send(e.session().ID, "go", "")
			r = e.hold(r.ID, "rn_1", run.Running, time.Minute)
			e.mustDo(func(tx store.Tx) error { return control.Pause(e.ctx, tx, r.ID, "rn_1", tt.cause) })
			before := len(e.runEvents(r.ID))
			got, err := e.svc.ResumeWith(e.ctx, r.ID, control.ResumeInput{Budget: tt.in})
			if tt.wantCode != "" {
				wantCode(t, err, tt.wantCode)
				if len(e.runEvents(r.ID)) != before || e.run(r.ID).Status != run.Paused {
					t.Fatal("a refused resume changed the run")
				}
				if bs, _ := e.st.ListBudgets(e.ctx, ""); len(bs) != 0 {
					t.Fatalf("a refused resume wrote budgets %+v", bs)
				}
				return
			}
			if err != nil || got.Status != run.Queued {
				t.Fatalf("ResumeWith = %+v, %v", got, err)
			}
			bs, err := e.st.ListBudgets(e.ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantScope == "" {
				if len(bs) != 0 {
					t.Fatalf("budgets %+v, want none", bs)
				}
				return
			}
			target := r.ID
			if tt.wantScope == budget.ScopeSession {
				target = r.SessionID
			}
			if len(bs) != 1 || bs[0].Scope != tt.wantScope || bs[0].Target != target || bs[0].Limits.MaxTokens != 5000 {
				t.Fatalf("budgets %+v, want %s/%s with 5000 tokens", bs, tt.wantScope, target)
			}
		})
	}
}
