package api

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/config"
)

// Runs that wait for a person hold no runner slot: with more unanswered
// questions than the runner has slots, a message in another session is
// answered at once, and every question is still answerable afterwards.
func TestWaitingRunsHoldNoSlot(t *testing.T) {
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("ask", e2etest.Turn(e2etest.Call("clarify", `{"question":"Which colour?","choices":["red","blue"]}`)), e2etest.Turn(e2etest.Text("Noted."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Hello at once."))),
	), func(c *config.Config) { c.MaxConcurrent = 4 })

	const waiting = 20
	runs := make([]e2etest.RunJSON, waiting)
	for i := range runs {
		runs[i] = s.Send(t, s.NewSession(t), fmt.Sprintf("ask %d", i))
	}
	for _, r := range runs {
		s.WaitStatus(t, r.ID, "awaiting_clarify")
	}
	// A run shows its question a moment before its runner has wound the
	// step down and let it go (control.Park): every one is let go soon.
	held := func() (n int) {
		h, _ := s.Health(t)
		for _, rn := range h.Runners {
			if rn.RunsHeld != nil {
				n += *rn.RunsHeld
			}
		}
		return n
	}
	for deadline := time.Now().Add(10 * time.Second); held() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("runners still hold %d runs 10 s after every run asked its question", held())
		}
	}

	start := time.Now()
	other := s.Send(t, s.NewSession(t), "hello")
	s.WaitStatus(t, other.ID, "completed")
	t.Logf("a new message completed %v after it was sent, with %d questions unanswered", time.Since(start).Round(time.Millisecond), waiting)

	reqs := s.Pending(t)
	if len(reqs) != waiting {
		t.Fatalf("%d pending requests, want %d", len(reqs), waiting)
	}
	for _, q := range reqs {
		if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"answer": "blue"}, nil); c != http.StatusOK {
			t.Fatalf("answer %s: %d", q.ID, c)
		}
	}
	for _, r := range runs {
		s.WaitStatus(t, r.ID, "completed")
		evs := s.Journal(t, r.ID)
		e2etest.CheckJournal(t, evs)
		if n := e2etest.CountType(evs, "run.started"); n != 1 {
			t.Errorf("run %s: %d run.started, want 1 (continuing after an answer is no new start)", r.ID, n)
		}
	}
}
