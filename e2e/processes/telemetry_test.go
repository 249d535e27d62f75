package processes

import (
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// A runner process serves its own /metrics (--metrics-addr): the runs it
// executed, their model and tool calls. The web tier, which executes
// nothing, reports the store: the live runner and no unfinished run.
func TestRunnerProcessMetrics(t *testing.T) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.Call("list_dir", `{}`)), e2etest.Turn(e2etest.Text("done"))))
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp)
	_, line := e2etest.Launch(t, binary, "runner", []string{"runner", "--data-dir", dataDir, "--workspace", ws, "--demo-script", sp,
		"--lease", "2s", "--metrics-addr", "127.0.0.1:0"}, func(l string) bool {
		return strings.HasPrefix(strings.TrimSpace(l), "metrics: ")
	})
	runnerURL := strings.TrimPrefix(strings.TrimSpace(line), "metrics: ")

	sid := web.NewSession(t)
	r := web.Send(t, sid, "go")
	web.WaitStatus(t, r.ID, "completed")
	var m e2etest.Metrics
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Counted once the run's ending is written, just after clients see it.
		if m = e2etest.Scrape(t, runnerURL, ""); m.Value("caduceus_runner_executions_total", "outcome", "completed") == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the runner's metrics never counted the run")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"caduceus_model_call_seconds", []string{"provider", "demo"}, 2},
		{"caduceus_tool_calls_total", []string{"tool", "list_dir", "status", "ok"}, 1},
		{"caduceus_runner_queue_wait_seconds", nil, 1},
		// The store gauges are the web tier's: every runner would repeat them.
		{"caduceus_runs", nil, -1},
	} {
		if got := m.Value(c.name, c.labels...); got != c.want {
			t.Errorf("runner: %s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if m.Sum("caduceus_journal_append_seconds") == 0 {
		t.Error("the runner's journal appends were not counted")
	}
	w := e2etest.Scrape(t, web.URL+"/metrics", "")
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"caduceus_runners", nil, 1},
		{"caduceus_runs", []string{"status", "running"}, 0},
		{"caduceus_runner_executions_total", []string{"outcome", "completed"}, 0},
		{"caduceus_model_call_seconds", nil, -1},
	} {
		if got := w.Value(c.name, c.labels...); got != c.want {
			t.Errorf("web: %s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
}
