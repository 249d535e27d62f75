package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// goalJSON is a goal as the API shows it.
type goalJSON struct {
	Text    string `json:"text"`
	Status  string `json:"status"`
	MaxRuns int    `json:"max_runs"`
	Runs    int    `json:"runs"`
	Note    string `json:"note"`
	Reason  string `json:"reason"`
}

func putGoal(t *testing.T, s *e2etest.Server, sid string, body map[string]any) goalJSON {
	t.Helper()
	var g goalJSON
	if c := e2etest.Do(t, "PUT", s.URL+"/api/sessions/"+sid+"/goal", body, &g); c != http.StatusOK {
		t.Fatalf("PUT goal %v: %d", body, c)
	}
	return g
}

// goalStopped waits for the goal.updated that ends the goal's activity.
func goalStopped(t *testing.T, st *e2etest.Stream) event.GoalUpdatedPayload {
	t.Helper()
	evs := st.Until(t, "the goal stops", func(e event.Event) bool {
		if e.Type != event.GoalUpdated {
			return false
		}
		return e2etest.Payload[event.GoalUpdatedPayload](t, e).Status != "active"
	})
	return e2etest.Payload[event.GoalUpdatedPayload](t, evs[len(evs)-1])
}

// continuations returns each run's continuation number from its
// run.queued, in run order.
func continuations(t *testing.T, s *e2etest.Server, sid string) []int {
	t.Helper()
	var out []int
	for _, r := range s.Runs(t, sid) {
		if !r.Terminal {
			t.Fatalf("run %s is %s after the goal stopped", r.ID, r.Status)
		}
		for _, e := range s.Journal(t, r.ID) {
			if e.Type == event.RunQueued {
				out = append(out, e2etest.Payload[event.RunQueuedPayload](t, e).Continuation)
			}
		}
	}
	return out
}

// The scripted model needs three runs: it reports nothing in the first,
// in_progress in the second, met in the third. Exactly three runs, then
// the goal is met and nothing follows.
func TestGoalMetAfterThreeRuns(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("Continuation 3 of the goal",
			e2etest.Turn(e2etest.Call("update_goal", `{"status":"met","note":"all three parts done"}`)),
			e2etest.Turn(e2etest.Text("The goal is met."))),
		e2etest.Scenario("Continuation 2 of the goal",
			e2etest.Turn(e2etest.Call("update_goal", `{"status":"in_progress","note":"part two done"}`)),
			e2etest.Turn(e2etest.Text("Part two done."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Part one done."))),
	))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	defer st.Close()
	g := putGoal(t, s, sid, map[string]any{"text": "write the three parts", "max_runs": 5})
	if g.Status != "active" || g.MaxRuns != 5 || g.Runs != 0 {
		t.Fatalf("PUT goal = %+v", g)
	}
	stopped := goalStopped(t, st)
	if stopped.Status != "met" || stopped.Runs != 3 || stopped.Note != "all three parts done" || stopped.Reason != "met" {
		t.Fatalf("goal stopped as %+v, want met after 3 runs", stopped)
	}
	if got := continuations(t, s, sid); len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("runs' continuation numbers %v, want [1 2 3]", got)
	}
	var now goalJSON
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/goal", nil, &now)
	if now.Status != "met" || now.Runs != 3 {
		t.Fatalf("GET goal = %+v", now)
	}
	// The transcript marks each continuation's prompt.
	var msgs struct {
		Items []struct {
			Kind         string `json:"kind"`
			Text         string `json:"text"`
			Continuation int    `json:"continuation"`
		} `json:"items"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &msgs)
	var marks []int
	for _, it := range msgs.Items {
		if it.Kind == "user" {
			marks = append(marks, it.Continuation)
			if !strings.Contains(it.Text, "write the three parts") {
				t.Fatalf("a continuation prompt does not name the goal: %q", it.Text)
			}
		}
	}
	if len(marks) != 3 || marks[2] != 3 {
		t.Fatalf("user items' continuation marks %v", marks)
	}
}

// A model that never reports met stops at the run limit, paused.
func TestGoalStopsAtRunLimit(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("Still working."))))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	defer st.Close()
	putGoal(t, s, sid, map[string]any{"text": "never done", "max_runs": 2})
	stopped := goalStopped(t, st)
	if stopped.Status != "paused" || stopped.Reason != "limit_runs" || stopped.Runs != 2 {
		t.Fatalf("goal stopped as %+v, want paused by limit_runs after 2", stopped)
	}
	if got := continuations(t, s, sid); len(got) != 2 {
		t.Fatalf("%d runs, want 2", len(got))
	}
	// Resuming gives a fresh budget: two more runs.
	putGoal(t, s, sid, map[string]any{"status": "active"})
	if again := goalStopped(t, st); again.Reason != "limit_runs" || again.Runs != 2 {
		t.Fatalf("after resume the goal stopped as %+v", again)
	}
	if got := continuations(t, s, sid); len(got) != 4 {
		t.Fatalf("%d runs after resuming, want 4", len(got))
	}
}

// A clarify in the second run holds the goal until it is answered: no
// run follows while the question waits; after the answer the goal goes on
// to met.
func TestGoalWaitsForClarify(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("Continuation 3 of the goal",
			e2etest.Turn(e2etest.Call("update_goal", `{"status":"met"}`)),
			e2etest.Turn(e2etest.Text("Met."))),
		e2etest.Scenario("Continuation 2 of the goal",
			e2etest.Turn(e2etest.Call("clarify", `{"question":"Tabs or spaces?","choices":["tabs","spaces"]}`)),
			e2etest.Turn(e2etest.Text("Using the answer."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("First part."))),
	))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	defer st.Close()
	putGoal(t, s, sid, map[string]any{"text": "format the code", "max_runs": 5})
	evs := st.Until(t, "clarify", e2etest.IsType(event.ClarifyRequested))
	ask := evs[len(evs)-1]
	s.WaitStatus(t, ask.RunID, "awaiting_clarify")
	if runs := s.Runs(t, sid); len(runs) != 2 {
		t.Fatalf("%d runs while the question waits, want 2", len(runs))
	}
	var g goalJSON
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/goal", nil, &g)
	if g.Status != "active" || g.Runs != 1 {
		t.Fatalf("goal while the question waits = %+v", g)
	}
	rid := e2etest.Payload[event.ClarifyRequestedPayload](t, ask).RequestID
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+rid+"/respond", map[string]string{"answer": "tabs"}, nil); c != http.StatusOK {
		t.Fatalf("answer: %d", c)
	}
	if stopped := goalStopped(t, st); stopped.Status != "met" || stopped.Runs != 3 {
		t.Fatalf("goal stopped as %+v, want met after 3", stopped)
	}
	if got := continuations(t, s, sid); len(got) != 3 {
		t.Fatalf("%d runs, want 3", len(got))
	}
}

// Bad input is refused with a stable code and changes nothing.
func TestGoalBadInput(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("ok"))))
	sid := s.NewSession(t)
	for _, body := range []map[string]any{
		{"text": "  "},
		{"text": "x", "max_runs": -1},
		{"text": "x", "max_duration": "soon"},
		{"text": "x", "status": "paused"},
		{"status": "met"},
		{},
	} {
		var e e2etest.ErrorJSON
		if c := e2etest.Do(t, "PUT", s.URL+"/api/sessions/"+sid+"/goal", body, &e); c != http.StatusBadRequest || e.Error.Code != "invalid_input" {
			t.Errorf("PUT goal %v: %d %s, want 400 invalid_input", body, c, e.Error.Code)
		}
	}
	var e e2etest.ErrorJSON
	if c := e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/goal", nil, &e); c != http.StatusNotFound || e.Error.Code != "not_found" {
		t.Fatalf("GET goal of a session without one: %d %s", c, e.Error.Code)
	}
	if runs := s.Runs(t, sid); len(runs) != 0 {
		t.Fatalf("refused goals queued %d runs", len(runs))
	}
}
