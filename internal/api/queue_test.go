package api_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/store"
)

type waitingJSON struct {
	Reason   string `json:"reason"`
	Position int    `json:"position"`
	RunID    string `json:"run_id"`
	RetryAt  string `json:"retry_at"`
}

// What a run that does not execute waits for, and health's count of runs
// answered while parked: each scenario builds the waiting work through the
// control package (no runner executes here) and reads GET /api/runs/{id}.
func TestRunWaiting(t *testing.T) {
	t.Parallel()
	type want struct {
		reason   string
		position int
		behind   bool // run_id names the run it waits behind
	}
	tests := []struct {
		name   string
		runner bool // a runner has sent a heartbeat
		build  func(t *testing.T, e *env) (runID string, behind string)
		want   want
		// health's answered count
		answered int
		// the session's status, when the case says
		sessionStatus string
	}{
		{
			name: "queued, no runner alive",
			build: func(t *testing.T, e *env) (string, string) {
				return e.send(t, e.session(t).ID, "hi").ID, ""
			},
			want: want{reason: "runner", position: 1},
		},
		{
			name:   "queued behind another session's run, runners alive",
			runner: true,
			build: func(t *testing.T, e *env) (string, string) {
				e.send(t, e.session(t).ID, "first")
				return e.send(t, e.session(t).ID, "second").ID, ""
			},
			want: want{reason: "runner_slot", position: 2},
		},
		{
			name: "queued behind its session's busy run",
			build: func(t *testing.T, e *env) (string, string) {
				s := e.session(t)
				first := e.send(t, s.ID, "first")
				e.hold(t, first.ID, "rnr_test")
				return e.send(t, s.ID, "second").ID, first.ID
			},
			want: want{reason: "previous_run", behind: true},
		},
		{
			name: "parked with a pending question",
			build: func(t *testing.T, e *env) (string, string) {
				ru := e.send(t, e.session(t).ID, "ask")
				e.hold(t, ru.ID, "rnr_test")
				e.ask(t, ru.ID, "rnr_test", store.KindClarify)
				e.park(t, ru.ID, "rnr_test")
				return ru.ID, ""
			},
			want:          want{reason: "person"},
			sessionStatus: "awaiting_clarify",
		},
		{
			name: "answered while parked, no runner alive: first in line",
			build: func(t *testing.T, e *env) (string, string) {
				e.send(t, e.session(t).ID, "an older queued message")
				ru := e.send(t, e.session(t).ID, "ask")
				e.hold(t, ru.ID, "rnr_test")
				q := e.ask(t, ru.ID, "rnr_test", store.KindApproval)
				e.park(t, ru.ID, "rnr_test")
				e.req("POST", "/api/requests/"+q+"/respond", `{"choice":"once"}`).want(t, 200, "")
				return ru.ID, ""
			},
			want:          want{reason: "runner", position: 1},
			answered:      1,
			sessionStatus: "answered",
		},
		{
			name: "recovering until its retry",
			build: func(t *testing.T, e *env) (string, string) {
				ru := e.send(t, e.session(t).ID, "hi")
				e.hold(t, ru.ID, "rnr_test")
				e.recover(t, ru.ID, "rnr_test")
				return ru.ID, ""
			},
			want: want{reason: "retry"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withRetries(1, time.Hour))
			if tc.runner {
				e.heartbeat(t, "rnr_alive")
			}
			runID, behind := tc.build(t, e)
			var got struct {
				Waiting *waitingJSON `json:"waiting"`
			}
			e.req("GET", "/api/runs/"+runID, "").decode(t, &got)
			if got.Waiting == nil {
				t.Fatal("no waiting")
			}
			w := *got.Waiting
			if w.Reason != tc.want.reason || w.Position != tc.want.position || (w.RunID != "") != tc.want.behind ||
				(tc.want.behind && w.RunID != behind) || (w.Reason == "retry") != (w.RetryAt != "") {
				t.Fatalf("waiting = %+v, want %+v (behind %s)", w, tc.want, behind)
			}
			// The session's run list says the same.
			var list struct {
				Runs []struct {
					ID      string       `json:"id"`
					Waiting *waitingJSON `json:"waiting"`
				} `json:"runs"`
			}
			ru, _ := e.st.GetRun(e.ctx, runID)
			e.req("GET", "/api/sessions/"+ru.SessionID+"/runs", "").decode(t, &list)
			for _, r := range list.Runs {
				if r.ID == runID && (r.Waiting == nil || fmt.Sprint(*r.Waiting) != fmt.Sprint(w)) {
					t.Errorf("in the session's runs: %+v, want %+v", r.Waiting, w)
				}
			}
			if tc.sessionStatus != "" {
				var sv struct {
					Status string `json:"status"`
				}
				e.req("GET", "/api/sessions/"+ru.SessionID, "").decode(t, &sv)
				if sv.Status != tc.sessionStatus {
					t.Errorf("session status = %q, want %q", sv.Status, tc.sessionStatus)
				}
			}
			var h struct {
				Answered int `json:"answered"`
			}
			e.req("GET", "/api/health", "").decode(t, &h)
			if h.Answered != tc.answered {
				t.Errorf("health answered = %d, want %d", h.Answered, tc.answered)
			}
		})
	}
}

// A run that executes or has ended waits for nothing.
func TestRunWaitingAbsent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ru := e.send(t, e.session(t).ID, "hi")
	e.hold(t, ru.ID, "rnr_test")
	var got map[string]any
	e.req("GET", "/api/runs/"+ru.ID, "").decode(t, &got)
	if _, ok := got["waiting"]; ok {
		t.Fatalf("a running run has waiting: %v", got["waiting"])
	}
	if _, err := e.svc.Cancel(e.ctx, ru.ID, nil); err != nil {
		t.Fatal(err)
	}
	e.park(t, ru.ID, "rnr_test") // the cancel arrived first: finished
	got = nil
	e.req("GET", "/api/runs/"+ru.ID, "").decode(t, &got)
	if _, ok := got["waiting"]; ok || got["status"] != "cancelled" {
		t.Fatalf("run = %v", got)
	}
}

// park releases a held run waiting for a person, as its runner does.
func (e *env) park(t *testing.T, runID, runnerID string) {
	t.Helper()
	if err := e.w.Do(e.ctx, func(tx store.Tx) error { return control.Park(e.ctx, tx, runID, runnerID) }); err != nil {
		t.Fatal(err)
	}
}

// heartbeat registers a live runner.
func (e *env) heartbeat(t *testing.T, runnerID string) {
	t.Helper()
	now := time.Now().UTC()
	if err := e.w.Do(e.ctx, func(tx store.Tx) error {
		return tx.UpsertRunner(e.ctx, store.RunnerInfo{ID: runnerID, Host: "test", PID: 1, StartedAt: now, HeartbeatAt: now})
	}); err != nil {
		t.Fatal(err)
	}
}
