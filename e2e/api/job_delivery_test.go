package api_test

// A job's delivery (issue 17, h17-deliver): acceptance.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/hook"
)

// A job run's end reaches the webhook the job chose, signed, although the
// webhook's own filter (another session) would not match it; a webhook
// the job did not choose, with the same filter, gets nothing.
func TestJobRunReachesItsWebhook(t *testing.T) {
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("Night report: all green.")))),
		e2etest.WithApprovalMode("off"))
	chosen, bystander := &receiver{okFirst: true}, &receiver{okFirst: true}
	chosenSrv, bystanderSrv := httptest.NewServer(chosen), httptest.NewServer(bystander)
	defer chosenSrv.Close()
	defer bystanderSrv.Close()
	elsewhere := s.NewSession(t)

	var whChosen, whBystander struct{ ID, Secret string }
	if c := e2etest.Do(t, "POST", s.URL+"/api/webhooks", map[string]any{"name": "chosen", "url": chosenSrv.URL,
		"session_id": elsewhere}, &whChosen); c != http.StatusCreated {
		t.Fatalf("create webhook: %d", c)
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/webhooks", map[string]any{"name": "bystander", "url": bystanderSrv.URL,
		"session_id": elsewhere}, &whBystander); c != http.StatusCreated {
		t.Fatalf("create webhook: %d", c)
	}
	var job struct {
		ID       string `json:"id"`
		Delivery struct {
			WebhookIDs []string `json:"webhook_ids"`
		} `json:"delivery"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs", map[string]any{"name": "night report", "prompt": "report",
		"schedule": map[string]any{"kind": "interval", "expr": "every 24h"},
		"delivery": map[string]any{"notify": true, "webhook_ids": []string{whChosen.ID}}}, &job); c != http.StatusCreated ||
		len(job.Delivery.WebhookIDs) != 1 {
		t.Fatalf("create job: %d %+v", c, job)
	}
	var started struct {
		RunID     string `json:"run_id"`
		SessionID string `json:"session_id"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs/"+job.ID+"/run", nil, &started); c != http.StatusAccepted {
		t.Fatalf("run now: %d", c)
	}
	s.WaitStatus(t, started.RunID, "completed")
	var rv struct {
		JobID string `json:"job_id"`
	}
	if e2etest.Do(t, "GET", s.URL+"/api/runs/"+started.RunID, nil, &rv); rv.JobID != job.ID {
		t.Fatalf("the run's job_id = %q, want %s", rv.JobID, job.ID)
	}

	deadline := time.Now().Add(20 * time.Second)
	hdrs, bodies := chosen.posts()
	for len(bodies) < 1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		hdrs, bodies = chosen.posts()
	}
	if len(bodies) != 1 {
		t.Fatalf("the chosen webhook got %d posts, want 1", len(bodies))
	}
	ts := hdrs[0].Get(hook.HeaderTimestamp)
	sec, _ := strconv.ParseInt(ts, 10, 64)
	if err := hook.Verify(whChosen.Secret, ts, hdrs[0].Get(hook.HeaderSignature), bodies[0], time.Unix(sec, 0)); err != nil {
		t.Fatalf("the post's signature: %v", err)
	}
	var p hook.Payload
	if err := json.Unmarshal(bodies[0], &p); err != nil {
		t.Fatal(err)
	}
	if p.Event != "run.completed" || p.Run.ID != started.RunID || p.Run.SessionID != started.SessionID || p.Summary != "Night report: all green." {
		t.Fatalf("the post = %s", bodies[0])
	}
	// Every webhook a run's end is queued for is queued in one
	// transaction: the bystander's would be in its log by now.
	var log struct{ Deliveries []struct{ RunID string } }
	if c := e2etest.Do(t, "GET", s.URL+"/api/webhooks/"+whBystander.ID+"/deliveries", nil, &log); c != http.StatusOK || len(log.Deliveries) != 0 {
		t.Fatalf("the bystander's deliveries: %d %+v, want none", c, log.Deliveries)
	}
	if _, b := bystander.posts(); len(b) != 0 {
		t.Fatalf("the bystander got %d posts", len(b))
	}
}
