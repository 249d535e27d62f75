package processes

// Scheduled jobs (issue 17, h17-jobs): exactly once across processes, and
// the missed policy across a restart.

import (
	"net/http"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

type jobFire struct {
	RunID  string    `json:"run_id"`
	FireAt time.Time `json:"fire_at"`
	Manual bool      `json:"manual"`
}

func jobFires(t *testing.T, url, jobID string) []jobFire {
	t.Helper()
	var h struct{ Runs []jobFire }
	if c := e2etest.Do(t, "GET", url+"/api/jobs/"+jobID+"/runs?limit=200", nil, &h); c != http.StatusOK {
		t.Fatalf("job history: %d", c)
	}
	sort.Slice(h.Runs, func(i, j int) bool { return h.Runs[i].FireAt.Before(h.Runs[j].FireAt) })
	return h.Runs
}

func createJob(t *testing.T, url string, body map[string]any) string {
	t.Helper()
	var job struct {
		ID string `json:"id"`
	}
	if c := e2etest.Do(t, "POST", url+"/api/jobs", body, &job); c != http.StatusCreated {
		t.Fatalf("create job: %d", c)
	}
	return job.ID
}

// Two serve processes (each with its runner) and two runner processes on
// one store fire a job every second for 20 s: every due time makes one
// run, none twice, none missed.
func TestJobFiresOnceAcrossProcesses(t *testing.T) {
	e2etest.EachStore(t, pg, testJobFiresOnceAcrossProcesses)
}

func testJobFiresOnceAcrossProcesses(t *testing.T, dbArgs []string) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.Text("tick"))))
	web1 := e2etest.StartServe(t, binary, dataDir, ws, sp, dbArgs...)
	web2 := e2etest.StartServe(t, binary, dataDir, ws, sp, dbArgs...)
	e2etest.StartRunner(t, binary, dataDir, ws, sp, dbArgs...)
	e2etest.StartRunner(t, binary, dataDir, ws, sp, dbArgs...)
	id := createJob(t, web1.URL, map[string]any{"name": "every second", "prompt": "tick",
		"schedule": map[string]any{"kind": "interval", "expr": "every 1s"}, "overlap": "queue"})
	time.Sleep(20 * time.Second)
	if c := e2etest.Do(t, "POST", web2.URL+"/api/jobs/"+id+"/pause", nil, nil); c != http.StatusOK {
		t.Fatalf("pause: %d", c)
	}
	time.Sleep(2 * time.Second) // fires claimed before the pause finish recording
	fires := jobFires(t, web2.URL, id)
	if len(fires) < 17 {
		t.Fatalf("%d fires in 20 s of a job every second, want about 20", len(fires))
	}
	for i, f := range fires {
		if i > 0 {
			if gap := f.FireAt.Sub(fires[i-1].FireAt); gap != time.Second {
				t.Errorf("fire %v follows %v: %v apart, want 1 s (0: twice; more: one missed)", f.FireAt, fires[i-1].FireAt, gap)
			}
		}
	}
	// Each run is a run of its own, queued once in the journal.
	seen := map[string]bool{}
	for _, f := range fires {
		if seen[f.RunID] {
			t.Errorf("run %s listed twice", f.RunID)
		}
		seen[f.RunID] = true
		var r struct {
			Status string `json:"status"`
		}
		if c := e2etest.Do(t, "GET", web1.URL+"/api/runs/"+f.RunID, nil, &r); c != http.StatusOK {
			t.Errorf("run %s: %d", f.RunID, c)
		}
	}
	t.Logf("%d fires, from %v to %v", len(fires), fires[0].FireAt, fires[len(fires)-1].FireAt)
}

// The only process is down across several due times: with missed "once"
// exactly one catch-up run follows the restart; with "skip" none. On
// both stores (h17-deliver).
func TestJobMissedWhileDown(t *testing.T) {
	for _, tc := range []struct {
		missed string
		want   int
	}{{"once", 1}, {"skip", 0}} {
		t.Run(tc.missed, func(t *testing.T) {
			t.Parallel()
			e2etest.EachStore(t, pg, func(t *testing.T, dbArgs []string) { testJobMissedWhileDown(t, dbArgs, tc.missed, tc.want) })
		})
	}
}

func testJobMissedWhileDown(t *testing.T, dbArgs []string, missed string, want int) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.Text("tick"))))
	web := e2etest.StartServe(t, binary, dataDir, ws, sp, dbArgs...)
	id := createJob(t, web.URL, map[string]any{"name": "every two", "prompt": "tick", "missed": missed,
		"schedule": map[string]any{"kind": "interval", "expr": "every 2s"}, "overlap": "queue"})
	time.Sleep(3 * time.Second)
	if err := web.Stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Down for 9 s: four or five due times pass, the oldest more
	// than the scheduler's 5 s grace late.
	time.Sleep(9 * time.Second)
	restarting := time.Now()
	web2 := e2etest.StartServe(t, binary, dataDir, ws, sp, dbArgs...)
	time.Sleep(3 * time.Second)
	if c := e2etest.Do(t, "POST", web2.URL+"/api/jobs/"+id+"/pause", nil, nil); c != http.StatusOK {
		t.Fatalf("pause: %d", c)
	}
	time.Sleep(time.Second)
	fires := jobFires(t, web2.URL, id)
	// Which process fired a due time is told by when its run was
	// queued: one due while the first was shutting down is missed
	// too, though it came before the stop returned.
	var catchUp, before, after int
	for _, f := range fires {
		var r struct {
			CreatedAt time.Time `json:"created_at"`
		}
		if c := e2etest.Do(t, "GET", web2.URL+"/api/runs/"+f.RunID, nil, &r); c != http.StatusOK {
			t.Fatalf("run %s: %d", f.RunID, c)
		}
		switch {
		case r.CreatedAt.Before(restarting):
			before++
		case f.FireAt.Before(restarting):
			catchUp++
		default:
			after++
		}
	}
	if before == 0 || after == 0 {
		t.Fatalf("fires before the stop %d, after the restart %d: want some of each (%+v)", before, after, fires)
	}
	if catchUp != want {
		t.Fatalf("%d catch-up runs for the due times missed while down, want %d (%+v)", catchUp, want, fires)
	}
}
