package api_test

// Budgets and health (issue 16, h16-budgets): acceptance.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

func usageStep(in, out int64) demo.Step {
	return demo.Step{Kind: demo.KindUsage, InputTokens: in, OutputTokens: out}
}

type pausedJSON struct {
	Status string `json:"status"`
	Paused *struct {
		Code    string         `json:"code"`
		Reason  string         `json:"reason"`
		Details map[string]any `json:"details"`
	} `json:"paused"`
}

func onStore(dbArgs []string) e2etest.ServerOpt {
	return func(c *config.Config) {
		if len(dbArgs) == 2 {
			c.Database = dbArgs[1]
		}
	}
}

// A run under a profile with a 500-token budget pauses at the limit with
// the reason; resumed with 5,000 it completes.
func TestBudgetPausesRunAndResumeCompletes(t *testing.T) {
	e2etest.EachStore(t, pg, func(t *testing.T, dbArgs []string) {
		s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("",
			e2etest.Turn(e2etest.Call("run_command", `{"command":"echo one"}`), usageStep(300, 12)),
			e2etest.Turn(e2etest.Call("run_command", `{"command":"echo two"}`), usageStep(200, 12)),
			e2etest.Turn(e2etest.Text("All done."), usageStep(250, 5)),
		)), e2etest.WithApprovalMode("off"), onStore(dbArgs))
		var prof struct {
			ID string `json:"id"`
		}
		if c := e2etest.Do(t, "POST", s.URL+"/api/profiles", map[string]any{"name": "Frugal"}, &prof); c != http.StatusCreated {
			t.Fatalf("create profile: %d", c)
		}
		if c := e2etest.Do(t, "PUT", s.URL+"/api/budgets", map[string]any{"scope": "profile", "target": prof.ID,
			"limits": map[string]any{"max_tokens": 500}}, nil); c != http.StatusOK {
			t.Fatalf("set the profile's budget: %d", c)
		}
		var sess struct {
			ID string `json:"id"`
		}
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]any{"profile_id": prof.ID}, &sess); c != http.StatusCreated {
			t.Fatalf("create session: %d", c)
		}
		r := s.Send(t, sess.ID, "work")
		s.WaitStatus(t, r.ID, "paused")
		var got pausedJSON
		e2etest.Do(t, "GET", s.URL+"/api/runs/"+r.ID, nil, &got)
		if got.Paused == nil || got.Paused.Code != "budget_exceeded" || got.Paused.Reason != "token budget of 500 reached: 524 used" {
			t.Fatalf("paused run = %+v", got.Paused)
		}
		// The session shows the run as needing a person.
		var sessions struct {
			Sessions []struct {
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"sessions"`
		}
		e2etest.Do(t, "GET", s.URL+"/api/sessions", nil, &sessions)
		for _, ss := range sessions.Sessions {
			if ss.ID == sess.ID && ss.Status != "paused" {
				t.Errorf("session status %q, want paused", ss.Status)
			}
		}
		var bad e2etest.ErrorJSON
		if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/resume", map[string]any{"budget": map[string]any{"max_tokens": -5}}, &bad); c != http.StatusBadRequest || bad.Error.Code != "invalid_budget" {
			t.Fatalf("resume with a negative budget: %d %+v", c, bad)
		}
		if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/resume", map[string]any{"budget": map[string]any{"max_tokens": 5000}}, nil); c != http.StatusAccepted {
			t.Fatalf("resume: %d", c)
		}
		s.WaitStatus(t, r.ID, "completed")
		evs := s.Journal(t, r.ID)
		e2etest.CheckJournal(t, evs)
		if n := e2etest.CountType(evs, event.ToolDone); n != 2 {
			t.Fatalf("%d tool calls done, want 2", n)
		}
	})
}

// A scripted loop of identical tool calls pauses as stuck, naming the call.
func TestLoopOfIdenticalCallsPausesAsStuck(t *testing.T) {
	e2etest.EachStore(t, pg, func(t *testing.T, dbArgs []string) {
		same := e2etest.Turn(e2etest.Call("run_command", `{"command":"ls"}`))
		s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", same, same, same, same, same)),
			e2etest.WithApprovalMode("off"), onStore(dbArgs))
		r := s.Send(t, s.NewSession(t), "loop")
		s.WaitStatus(t, r.ID, "paused")
		var got pausedJSON
		e2etest.Do(t, "GET", s.URL+"/api/runs/"+r.ID, nil, &got)
		if got.Paused == nil || got.Paused.Code != "looks_stuck" || !strings.Contains(got.Paused.Reason, "run_command") ||
			!strings.Contains(got.Paused.Reason, "3 times in a row") {
			t.Fatalf("paused run = %+v", got.Paused)
		}
		// Stopping it from there ends it cancelled.
		if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/cancel", nil, nil); c != http.StatusOK {
			t.Fatalf("cancel: %d", c)
		}
		s.WaitStatus(t, r.ID, "cancelled")
	})
}
