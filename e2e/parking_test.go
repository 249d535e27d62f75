package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/config"
)

// Runs that wait for a person hold no runner slot: with more unanswered
// questions than the runner has slots, a message in another session is
// answered at once, and every question is still answerable afterwards.
func TestWaitingRunsHoldNoSlot(t *testing.T) {
	s := startServer(t, scenarios(
		scenario("ask", turn(call("clarify", `{"question":"Which colour?","choices":["red","blue"]}`)), turn(text("Noted."))),
		scenario("", turn(text("Hello at once."))),
	), func(c *config.Config) { c.MaxConcurrent = 4 })

	const waiting = 20
	runs := make([]runJSON, waiting)
	for i := range runs {
		runs[i] = s.send(t, s.newSession(t), fmt.Sprintf("ask %d", i))
	}
	for _, r := range runs {
		s.waitStatus(t, r.ID, "awaiting_clarify")
	}
	h, _ := s.health(t)
	for _, rn := range h.Runners {
		if rn.RunsHeld != nil && *rn.RunsHeld != 0 {
			t.Errorf("runner %s holds %d runs while every run waits for a person", rn.ID, *rn.RunsHeld)
		}
	}

	start := time.Now()
	other := s.send(t, s.newSession(t), "hello")
	s.waitStatus(t, other.ID, "completed")
	t.Logf("a new message completed %v after it was sent, with %d questions unanswered", time.Since(start).Round(time.Millisecond), waiting)

	reqs := s.pending(t)
	if len(reqs) != waiting {
		t.Fatalf("%d pending requests, want %d", len(reqs), waiting)
	}
	for _, q := range reqs {
		if c := do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"answer": "blue"}, nil); c != http.StatusOK {
			t.Fatalf("answer %s: %d", q.ID, c)
		}
	}
	for _, r := range runs {
		s.waitStatus(t, r.ID, "completed")
		evs := s.journal(t, r.ID)
		checkJournal(t, evs)
		if n := countType(evs, "run.started"); n != 1 {
			t.Errorf("run %s: %d run.started, want 1 (continuing after an answer is no new start)", r.ID, n)
		}
	}
}
