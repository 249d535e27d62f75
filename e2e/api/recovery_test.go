package api

import (
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// A provider that keeps failing transiently: the run is retried by itself
// once (recovering, with its retry number and time), then stops as
// interrupted rather than failed, and a person can resume it.
func TestTransientProviderErrorRecovers(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(demo.Step{Kind: demo.KindError, Code: "rate_limited", Message: "slow down", Retryable: true})),
		e2etest.WithRetries(1, 100*time.Millisecond))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.Send(t, sid, "go")
	isStatus := func(status string) func(event.Event) bool {
		return func(e event.Event) bool {
			return e.Type == event.RunStatus && strings.Contains(string(e.Payload), `"status":"`+status+`"`)
		}
	}
	evs := st.Until(t, "recovering", isStatus("recovering"))
	rec := e2etest.Payload[event.RunStatusPayload](t, evs[len(evs)-1])
	if rec.Retry != 1 || rec.MaxRetries != 1 || rec.RetryAt == nil {
		t.Fatalf("recovering = %+v", rec)
	}
	evs = append(evs, st.Until(t, "interrupted", isStatus("interrupted"))...)
	evs = append(evs, st.Until(t, "its diagnostic", e2etest.IsType(event.Diagnostic))...)
	var started []event.RunStartedPayload
	var diags []event.DiagnosticPayload
	for _, e := range evs {
		switch e.Type {
		case event.RunStarted:
			started = append(started, e2etest.Payload[event.RunStartedPayload](t, e))
		case event.Diagnostic:
			diags = append(diags, e2etest.Payload[event.DiagnosticPayload](t, e))
		case event.RunDone:
			t.Fatalf("a transient failure ended the run: %s", e.Payload)
		}
	}
	if len(started) != 2 || started[0].Resumed || !started[1].Resumed || started[1].Attempt != 2 {
		t.Fatalf("run.started = %+v, want a first attempt and a resumed second", started)
	}
	if len(diags) != 2 || !strings.Contains(diags[0].Message, "retry 1 of 1") || !strings.Contains(diags[1].Message, "gave up after 1 automatic retries") {
		t.Fatalf("diagnostics = %+v", diags)
	}
	got := s.Run(t, r.ID)
	if got.Status != "interrupted" || got.Terminal || !strings.Contains(strings.Join(got.Controls, ","), "resume") {
		t.Fatalf("run = %+v", got)
	}

	// A person resumes it: it runs once more (and fails the same way here).
	var resumed e2etest.RunJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/resume", nil, &resumed); c != 202 || resumed.Status != "queued" {
		t.Fatalf("resume: %d %+v", c, resumed)
	}
	st.Until(t, "third attempt", func(e event.Event) bool {
		return e.Type == event.RunStarted && e2etest.Payload[event.RunStartedPayload](t, e).Attempt == 3
	})
	s.WaitStatus(t, r.ID, "interrupted")
}

// Resume answers bad requests with stable codes and changes nothing.
func TestResumeErrors(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("done"))))
	sid := s.NewSession(t)
	r := s.Send(t, sid, "go")
	s.WaitStatus(t, r.ID, "completed")
	cases := []struct {
		name string
		id   string
		code int
		want string
	}{
		{"completed run", r.ID, 409, "not_resumable"},
		{"unknown run", "run_01m7y3svk0qzqr34e8q9rjq2bz", 404, "not_found"},
		{"not a run id", "ses_nope", 404, "not_found"}, // a malformed id names nothing
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var e struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+tc.id+"/resume", nil, &e); c != tc.code || e.Error.Code != tc.want {
				t.Fatalf("got %d %q, want %d %q", c, e.Error.Code, tc.code, tc.want)
			}
		})
	}
	if got := s.Run(t, r.ID); got.Status != "completed" {
		t.Fatalf("run is %s after refused resumes", got.Status)
	}
}
