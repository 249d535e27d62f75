package api_test

// Scheduled jobs (issue 17, h17-jobs): acceptance.

import (
	"net/http"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

type jobRunJSON struct {
	RunID     string    `json:"run_id"`
	SessionID string    `json:"session_id"`
	FireAt    time.Time `json:"fire_at"`
	Manual    bool      `json:"manual"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
}

func jobHistory(t *testing.T, url, jobID string) []jobRunJSON {
	t.Helper()
	var h struct{ Runs []jobRunJSON }
	if c := e2etest.Do(t, "GET", url+"/api/jobs/"+jobID+"/runs?limit=200", nil, &h); c != http.StatusOK {
		t.Fatalf("job history: %d", c)
	}
	return h.Runs
}

// An interval job of 2 s fires about every 2 s; paused it stops; resumed
// it goes on; "run now" starts one at once.
func TestIntervalJobFiresPausesResumesAndRunsNow(t *testing.T) {
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("report done"))), e2etest.WithApprovalMode("off"))
	var job struct {
		ID string `json:"id"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs", map[string]any{"name": "every two", "prompt": "report",
		"schedule": map[string]any{"kind": "interval", "expr": "every 2s"}, "overlap": "queue"}, &job); c != http.StatusCreated {
		t.Fatalf("create job: %d", c)
	}
	// overlap queue: every due time makes a run even when a loaded machine
	// has not finished the last one (skip, the default, would drop it).
	time.Sleep(7 * time.Second)
	h := jobHistory(t, s.URL, job.ID)
	if len(h) < 3 || len(h) > 4 {
		t.Fatalf("%d runs in 7 s of a 2 s job, want 3 or 4", len(h))
	}
	for i, r := range h {
		if r.Manual {
			t.Fatalf("run %s manual", r.RunID)
		}
		// Within the scheduler's grace: later would count as missed.
		if late := r.CreatedAt.Sub(r.FireAt); late < 0 || late > 5*time.Second {
			t.Errorf("run %s queued %v after its due time %v", r.RunID, late, r.FireAt)
		}
		if i > 0 && h[i-1].FireAt.Sub(r.FireAt) != 2*time.Second {
			t.Errorf("fires %v and %v are not 2 s apart", r.FireAt, h[i-1].FireAt)
		}
	}

	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs/"+job.ID+"/pause", nil, nil); c != http.StatusOK {
		t.Fatalf("pause: %d", c)
	}
	// A fire claimed just before the pause may still be recording its
	// run: count after it has.
	time.Sleep(time.Second)
	paused := len(jobHistory(t, s.URL, job.ID))
	time.Sleep(5 * time.Second)
	if n := len(jobHistory(t, s.URL, job.ID)); n != paused {
		t.Fatalf("%d runs while paused (had %d)", n, paused)
	}

	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs/"+job.ID+"/resume", nil, nil); c != http.StatusOK {
		t.Fatalf("resume: %d", c)
	}
	// Two more fires come about 4 s after resuming; a loaded machine
	// (CI) may take longer to record them, so wait for them.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		n := len(jobHistory(t, s.URL, job.ID))
		if n >= paused+2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs 15 s after resuming (had %d), want at least 2 more", n, paused)
		}
	}

	var started struct {
		RunID string `json:"run_id"`
	}
	asked := time.Now()
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs/"+job.ID+"/run", nil, &started); c != http.StatusAccepted {
		t.Fatalf("run now: %d", c)
	}
	// The run now is in the history at once, and runs to the end.
	var found *jobRunJSON
	for _, r := range jobHistory(t, s.URL, job.ID) {
		if r.RunID == started.RunID {
			found = &r
		}
	}
	if found == nil || !found.Manual || found.CreatedAt.Sub(asked) > time.Second {
		t.Fatalf("run now %s in history: %+v", started.RunID, found)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var r struct {
			Status string `json:"status"`
		}
		e2etest.Do(t, "GET", s.URL+"/api/runs/"+started.RunID, nil, &r)
		if r.Status == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run now is %s after 10 s, want completed", r.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs/"+job.ID+"/pause", nil, nil); c != http.StatusOK {
		t.Fatalf("pause at the end: %d", c)
	}
}
