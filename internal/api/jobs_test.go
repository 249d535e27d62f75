package api_test

// Scheduled jobs (issue 17, h17-jobs).

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

func withJobs() envOpt { return func(c *envConfig) { c.jobs = true } }

type jobJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Prompt   string `json:"prompt"`
	Schedule struct {
		Kind string `json:"kind"`
		Expr string `json:"expr"`
		TZ   string `json:"tz"`
	} `json:"schedule"`
	Enabled       bool    `json:"enabled"`
	Overlap       string  `json:"overlap"`
	Missed        string  `json:"missed"`
	Session       string  `json:"session"`
	RunExpirySecs int64   `json:"run_expiry_seconds"`
	NextFireAt    *string `json:"next_fire_at"`
	LastRunID     string  `json:"last_run_id"`
	LastRunStatus string  `json:"last_run_status"`
}

func TestJobsRoutes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e := newEnv(t, withStore(open), withJobs())
		r := e.req("POST", "/api/jobs", `{"name":"morning report","prompt":"summarise the night",
			"schedule":{"kind":"cron","expr":"0 9 * * 1-5","tz":"Europe/Berlin"},"overlap":"queue","run_expiry_seconds":600}`)
		r.want(t, http.StatusCreated, "")
		var j jobJSON
		r.decode(t, &j)
		if j.ID == "" || !j.Enabled || j.Overlap != "queue" || j.Missed != "once" || j.Session != "new" || j.RunExpirySecs != 600 ||
			j.Schedule.TZ != "Europe/Berlin" || j.NextFireAt == nil {
			t.Fatalf("created job = %+v", j)
		}
		next, err := time.Parse(time.RFC3339Nano, *j.NextFireAt)
		if err != nil {
			t.Fatal(err)
		}
		if berlin, _ := time.LoadLocation("Europe/Berlin"); next.In(berlin).Hour() != 9 || next.Before(time.Now()) {
			t.Fatalf("next fire %v, want a coming 09:00 in Berlin", next)
		}

		var list struct{ Jobs []jobJSON }
		e.req("GET", "/api/jobs", "").decode(t, &list)
		if len(list.Jobs) != 1 || list.Jobs[0].ID != j.ID {
			t.Fatalf("list = %+v", list)
		}

		// Pause clears nothing but stops fires; resume computes the next.
		e.req("POST", "/api/jobs/"+j.ID+"/pause", "").decode(t, &j)
		if j.Enabled {
			t.Fatalf("paused job enabled")
		}
		e.req("POST", "/api/jobs/"+j.ID+"/resume", "").decode(t, &j)
		if !j.Enabled || j.NextFireAt == nil {
			t.Fatalf("resumed job = %+v", j)
		}
		r = e.req("PATCH", "/api/jobs/"+j.ID, `{"name":"renamed","schedule":{"kind":"interval","expr":"every 2h"}}`)
		r.want(t, http.StatusOK, "")
		r.decode(t, &j)
		if j.Name != "renamed" || j.Schedule.Kind != "interval" || j.Schedule.TZ != "" || j.Prompt != "summarise the night" {
			t.Fatalf("patched job = %+v", j)
		}

		// Run now starts one at once; the history lists it.
		r = e.req("POST", "/api/jobs/"+j.ID+"/run", "")
		r.want(t, http.StatusAccepted, "")
		var started struct {
			RunID     string `json:"run_id"`
			SessionID string `json:"session_id"`
			Status    string `json:"status"`
		}
		r.decode(t, &started)
		if started.RunID == "" || started.Status != "queued" {
			t.Fatalf("run now = %+v", started)
		}
		var hist struct {
			Runs []struct {
				RunID     string `json:"run_id"`
				SessionID string `json:"session_id"`
				Manual    bool   `json:"manual"`
				Status    string `json:"status"`
			} `json:"runs"`
		}
		e.req("GET", "/api/jobs/"+j.ID+"/runs", "").decode(t, &hist)
		if len(hist.Runs) != 1 || hist.Runs[0].RunID != started.RunID || !hist.Runs[0].Manual || hist.Runs[0].Status != "queued" ||
			hist.Runs[0].SessionID != started.SessionID {
			t.Fatalf("history = %+v", hist)
		}
		e.req("GET", "/api/jobs/"+j.ID, "").decode(t, &j)
		if j.LastRunID != started.RunID || j.LastRunStatus != "queued" {
			t.Fatalf("job after run now = %+v", j)
		}

		e.req("DELETE", "/api/jobs/"+j.ID, "").want(t, http.StatusNoContent, "")
		e.req("GET", "/api/jobs/"+j.ID, "").want(t, http.StatusNotFound, "not_found")
		e.req("DELETE", "/api/jobs/"+j.ID, "").want(t, http.StatusNotFound, "not_found")
		e.req("GET", "/api/jobs/"+j.ID+"/runs", "").want(t, http.StatusNotFound, "not_found")
	})
}

func TestJobsRejectBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withJobs())
	tests := []struct {
		name, body, code string
	}{
		{"bad cron", `{"name":"a","prompt":"p","schedule":{"expr":"0 25 * * *"}}`, "invalid_schedule"},
		{"bad zone", `{"name":"a","prompt":"p","schedule":{"expr":"0 9 * * *","tz":"Mars/Base"}}`, "invalid_schedule"},
		{"interval too short", `{"name":"a","prompt":"p","schedule":{"kind":"interval","expr":"every 100ms"}}`, "invalid_schedule"},
		{"no schedule", `{"name":"a","prompt":"p"}`, "invalid_schedule"},
		{"no prompt", `{"name":"a","schedule":{"expr":"0 9 * * *"}}`, "invalid_job"},
		{"bad overlap", `{"name":"a","prompt":"p","schedule":{"expr":"0 9 * * *"},"overlap":"sometimes"}`, "invalid_job"},
		{"unknown profile", `{"name":"a","prompt":"p","schedule":{"expr":"0 9 * * *"},"profile_id":"prf_nope"}`, "invalid_job"},
		{"unknown field", `{"name":"a","prompt":"p","schedule":{"expr":"0 9 * * *"},"colour":"red"}`, "invalid_input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.req("POST", "/api/jobs", tc.body)
			if r.code != http.StatusBadRequest || r.errCode() != tc.code {
				t.Fatalf("status %d code %q, want 400 %s; body %s", r.code, r.errCode(), tc.code, r.body)
			}
		})
	}
	var list struct{ Jobs []jobJSON }
	e.req("GET", "/api/jobs", "").decode(t, &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("refused creates stored %d jobs", len(list.Jobs))
	}
	// A refused patch changes nothing.
	r := e.req("POST", "/api/jobs", `{"name":"a","prompt":"p","schedule":{"expr":"0 9 * * *"}}`)
	r.want(t, http.StatusCreated, "")
	var j jobJSON
	r.decode(t, &j)
	e.req("PATCH", "/api/jobs/"+j.ID, `{"name":"b","schedule":{"expr":"nonsense"}}`).want(t, http.StatusBadRequest, "invalid_schedule")
	var got jobJSON
	e.req("GET", "/api/jobs/"+j.ID, "").decode(t, &got)
	if got.Name != "a" || got.Schedule.Expr != "0 9 * * *" {
		t.Fatalf("refused patch changed the job: %+v", got)
	}
	e.req("GET", "/api/jobs/job_nope", "").want(t, http.StatusNotFound, "not_found")
}

func TestSchedulePreview(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withJobs())
	var p struct{ Fires []string }
	r := e.req("GET", "/api/schedules/preview?expr=30+2+*+*+*&tz=America/New_York", "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &p)
	if len(p.Fires) != 5 {
		t.Fatalf("preview = %+v, want five fire times", p)
	}
	r = e.req("GET", "/api/schedules/preview?kind=interval&expr=every+2s", "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &p)
	a, _ := time.Parse(time.RFC3339Nano, p.Fires[0])
	b, _ := time.Parse(time.RFC3339Nano, p.Fires[1])
	if b.Sub(a) != 2*time.Second {
		t.Fatalf("interval preview %v", p.Fires)
	}
	r = e.req("GET", "/api/schedules/preview?expr=61+*+*+*+*", "")
	r.want(t, http.StatusBadRequest, "invalid_schedule")
	if !strings.Contains(string(r.body), "61") {
		t.Fatalf("the parse error does not say what is wrong: %s", r.body)
	}
	e.req("GET", "/api/schedules/preview?expr=0+9+*+*+*&tz=Nowhere/Town", "").want(t, http.StatusBadRequest, "invalid_schedule")
	// Without a scheduler the routes that need one say so.
	plain := newEnv(t)
	plain.req("GET", "/api/schedules/preview?expr=0+9+*+*+*", "").want(t, http.StatusServiceUnavailable, "jobs_unavailable")
}
