package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// waitMetrics scrapes until ok holds for a scrape, for at most 10 s: the
// runner counts an execution only after its ending is written, a moment
// after clients see it.
func waitMetrics(t *testing.T, url, tok, what string, ok func(e2etest.Metrics) bool) e2etest.Metrics {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := e2etest.Scrape(t, url, tok)
		if ok(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never showed %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Acceptance: GET /metrics parses with the Prometheus text parser and
// moves when a run runs: the store gauges while it waits for approval,
// then the counters of its two executions, its model calls, its tool and
// the journal.
func TestMetricsMoveWhenARunRuns(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Text("Let me look."), e2etest.Call("run_command", `{"command":"echo hi"}`)),
		e2etest.Turn(e2etest.Text("done")),
	))
	url := s.URL + "/metrics"
	// The in-process runner registers just after the server starts.
	before := waitMetrics(t, url, "", "the runner registered", func(m e2etest.Metrics) bool {
		return m.Value("caduceus_runners") == 1
	})
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"caduceus_store_up", nil, 1},
		{"caduceus_runners", nil, 1},
		{"caduceus_runs", []string{"status", "queued"}, 0},
		{"caduceus_queue_depth", nil, 0},
		{"caduceus_requests_pending", []string{"kind", "approval"}, 0},
		{"caduceus_runner_executions_total", []string{"outcome", "completed"}, 0},
		{"caduceus_sse_subscribers", []string{"stream", "session"}, 0},
	} {
		if got := before.Value(c.name, c.labels...); got != c.want {
			t.Errorf("before: %s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}

	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.Send(t, sid, "go")
	st.Until(t, "approval", e2etest.IsType(event.ApprovalRequested))
	// Parking is written just after the request: wait for the run to hold
	// no runner, as the gauges read the store.
	waiting := waitMetrics(t, url, "", "the run parked", func(m e2etest.Metrics) bool {
		return m.Value("caduceus_runner_executions_total", "outcome", "parked") == 1
	})
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"caduceus_runs", []string{"status", "awaiting_approval"}, 1},
		{"caduceus_requests_pending", []string{"kind", "approval"}, 1},
		{"caduceus_queue_depth", nil, 0}, // it waits for a person, not a runner
		{"caduceus_sse_subscribers", []string{"stream", "session"}, 1},
		{"caduceus_runner_queue_wait_seconds", nil, 1},
		{"caduceus_model_call_seconds", []string{"provider", "demo", "model", "demo"}, 1},
	} {
		if got := waiting.Value(c.name, c.labels...); got != c.want {
			t.Errorf("waiting: %s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}

	q := s.Pending(t)[0]
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"choice": "once"}, nil); c != http.StatusOK {
		t.Fatalf("respond: %d", c)
	}
	st.Until(t, "run.done", e2etest.IsDone(r.ID))
	after := waitMetrics(t, url, "", "the run completed", func(m e2etest.Metrics) bool {
		return m.Value("caduceus_runner_executions_total", "outcome", "completed") == 1
	})
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"caduceus_runs", []string{"status", "awaiting_approval"}, 0},
		{"caduceus_requests_pending", []string{"kind", "approval"}, 0},
		{"caduceus_runner_executions_total", []string{"outcome", "parked"}, 1},
		// The queue wait is of the first start only; the answered run
		// continued without a new one.
		{"caduceus_runner_queue_wait_seconds", nil, 1},
		{"caduceus_model_call_seconds", []string{"provider", "demo", "model", "demo"}, 2},
		{"caduceus_model_errors_total", nil, -1},
		{"caduceus_tool_calls_total", []string{"tool", "run_command", "status", "ok"}, 1},
		{"caduceus_tool_duration_seconds", []string{"tool", "run_command"}, 1},
		{"caduceus_journal_commit_failures_total", nil, 0},
	} {
		if got := after.Value(c.name, c.labels...); got != c.want {
			t.Errorf("after: %s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if in := after.Value("caduceus_model_tokens_total", "provider", "demo", "kind", "input"); in <= 0 {
		t.Errorf("input tokens %v", in)
	}
	if a, b := after.Value("caduceus_journal_append_seconds"), before.Value("caduceus_journal_append_seconds"); a <= b+5 {
		t.Errorf("journal appends %v before, %v after a whole run", b, a)
	}

	st.Close()
	waitMetrics(t, url, "", "the stream closed", func(m e2etest.Metrics) bool {
		return m.Value("caduceus_sse_subscribers", "stream", "session") == 0
	})
}

// /metrics is guarded like the API: with a token set, only with it.
func TestMetricsNeedTheToken(t *testing.T) {
	t.Parallel()
	const tok = "metrics-test-token-0123456789abcdef"
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hello"))), e2etest.WithToken(tok))
	for _, c := range []struct {
		name   string
		header string
		want   int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"wrong token", "Bearer nope-nope-nope-nope-nope", http.StatusUnauthorized},
		{"the token", "Bearer " + tok, http.StatusOK},
	} {
		req, _ := http.NewRequest("GET", s.URL+"/metrics", nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	if m := e2etest.Scrape(t, s.URL+"/metrics", tok); m.Value("caduceus_store_up") != 1 {
		t.Fatalf("store_up %v", m.Value("caduceus_store_up"))
	}
}
