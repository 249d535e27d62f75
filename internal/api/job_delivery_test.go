package api_test

// Job delivery, schedules in words and a run's job (issue 17, h17-deliver).

import (
	"net/http"
	"reflect"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

type jobDeliveryJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Schedule struct {
		Words string `json:"words"`
	} `json:"schedule"`
	Delivery *struct {
		Notify     bool     `json:"notify"`
		WebhookIDs []string `json:"webhook_ids"`
	} `json:"delivery"`
}

func TestJobDelivery(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		var none *hook.Deliverer
		e := newEnv(t, withStore(open), withJobs(), withHooks(hookBox(t), &none))
		hooks := make([]string, 3)
		for i := range hooks {
			var wh struct{ ID string }
			e.req("POST", "/api/webhooks", `{"name":"h`+string(rune('a'+i))+`","url":"http://127.0.0.1:9/x"}`).decode(t, &wh)
			hooks[i] = wh.ID
		}
		get := func(id string) jobDeliveryJSON {
			t.Helper()
			var j jobDeliveryJSON
			r := e.req("GET", "/api/jobs/"+id, "")
			r.want(t, http.StatusOK, "")
			r.decode(t, &j)
			return j
		}

		// A job without delivery shows an empty one, never null.
		r := e.req("POST", "/api/jobs", `{"name":"plain","prompt":"p","schedule":{"expr":"0 9 * * 1-5","tz":"Europe/Berlin"}}`)
		r.want(t, http.StatusCreated, "")
		var plain jobDeliveryJSON
		r.decode(t, &plain)
		if plain.Delivery == nil || plain.Delivery.Notify || plain.Delivery.WebhookIDs == nil || len(plain.Delivery.WebhookIDs) != 0 {
			t.Fatalf("job without delivery = %s", r.body)
		}
		if plain.Schedule.Words != "every weekday at 09:00, Europe/Berlin" {
			t.Fatalf("schedule words = %q", plain.Schedule.Words)
		}

		r = e.req("POST", "/api/jobs", `{"name":"report","prompt":"p","schedule":{"kind":"interval","expr":"every 2h"},
			"delivery":{"notify":true,"webhook_ids":["`+hooks[2]+`","`+hooks[0]+`","`+hooks[2]+`"]}}`)
		r.want(t, http.StatusCreated, "")
		var j jobDeliveryJSON
		r.decode(t, &j)
		if !j.Delivery.Notify || !reflect.DeepEqual(j.Delivery.WebhookIDs, []string{hooks[2], hooks[0]}) || j.Schedule.Words != "every 2 hours" {
			t.Fatalf("created job = %s", r.body)
		}

		// An unknown webhook is refused and changes nothing.
		e.req("POST", "/api/jobs", `{"name":"x","prompt":"p","schedule":{"expr":"0 9 * * *"},
			"delivery":{"webhook_ids":["wh_nope"]}}`).want(t, http.StatusBadRequest, "unknown_webhook")
		var list struct{ Jobs []jobDeliveryJSON }
		e.req("GET", "/api/jobs", "").decode(t, &list)
		if len(list.Jobs) != 2 {
			t.Fatalf("a refused create stored a job: %d jobs", len(list.Jobs))
		}
		e.req("PATCH", "/api/jobs/"+j.ID, `{"name":"renamed","delivery":{"notify":false,"webhook_ids":["`+hooks[1]+`","wh_nope"]}}`).
			want(t, http.StatusBadRequest, "unknown_webhook")
		if got := get(j.ID); got.Name != "report" || !reflect.DeepEqual(got.Delivery, j.Delivery) {
			t.Fatalf("a refused patch changed the job: %+v", got)
		}

		// A patch without delivery keeps it; one with it replaces it.
		e.req("PATCH", "/api/jobs/"+j.ID, `{"name":"renamed"}`).want(t, http.StatusOK, "")
		if got := get(j.ID); got.Name != "renamed" || !reflect.DeepEqual(got.Delivery, j.Delivery) {
			t.Fatalf("a patch without delivery changed it: %+v", got.Delivery)
		}
		e.req("PATCH", "/api/jobs/"+j.ID, `{"delivery":{"notify":false,"webhook_ids":["`+hooks[1]+`","`+hooks[0]+`"]}}`).
			want(t, http.StatusOK, "")
		if got := get(j.ID); got.Delivery.Notify || !reflect.DeepEqual(got.Delivery.WebhookIDs, []string{hooks[1], hooks[0]}) {
			t.Fatalf("replaced delivery = %+v", got.Delivery)
		}

		// Deleting a webhook takes it off the job.
		e.req("DELETE", "/api/webhooks/"+hooks[0], "").want(t, http.StatusNoContent, "")
		if got := get(j.ID); !reflect.DeepEqual(got.Delivery.WebhookIDs, []string{hooks[1]}) {
			t.Fatalf("delivery after deleting a webhook = %+v", got.Delivery)
		}
		e.req("PATCH", "/api/jobs/"+j.ID, `{"delivery":{"webhook_ids":["`+hooks[0]+`"]}}`).want(t, http.StatusBadRequest, "unknown_webhook")

		// A run a job started names it; another run names none.
		var started struct {
			RunID     string `json:"run_id"`
			SessionID string `json:"session_id"`
		}
		e.req("POST", "/api/jobs/"+j.ID+"/run", "").decode(t, &started)
		var rv struct {
			JobID *string `json:"job_id"`
		}
		e.req("GET", "/api/runs/"+started.RunID, "").decode(t, &rv)
		if rv.JobID == nil || *rv.JobID != j.ID {
			t.Fatalf("run of a job: job_id %v, want %s", rv.JobID, j.ID)
		}
		// The session's run list says so too (read for the list at once).
		var listed struct {
			Runs []struct {
				ID    string `json:"id"`
				JobID string `json:"job_id"`
			} `json:"runs"`
		}
		e.req("GET", "/api/sessions/"+started.SessionID+"/runs", "").decode(t, &listed)
		if len(listed.Runs) != 1 || listed.Runs[0].ID != started.RunID || listed.Runs[0].JobID != j.ID {
			t.Fatalf("the job session's runs = %+v", listed.Runs)
		}
		other := e.send(t, e.session(t).ID, "hello")
		rv.JobID = nil
		e.req("GET", "/api/runs/"+other.ID, "").decode(t, &rv)
		if rv.JobID == nil || *rv.JobID != "" {
			t.Fatalf("run of no job: job_id %v, want \"\"", rv.JobID)
		}
		e.req("GET", "/api/sessions/"+other.SessionID+"/runs", "").decode(t, &listed)
		if len(listed.Runs) != 1 || listed.Runs[0].JobID != "" {
			t.Fatalf("another session's runs = %+v", listed.Runs)
		}
	})
}

func TestSchedulePreviewWords(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withJobs())
	for _, tc := range []struct{ query, words string }{
		{"expr=0+9,17+*+*+1-5&tz=Europe/Berlin", "at 09:00 and 17:00 on weekdays, Europe/Berlin"},
		{"kind=interval&expr=every+15m", "every 15 minutes"},
		{"kind=once&expr=2099-12-01T09:00:00Z", "once, on 2099-12-01 at 09:00 UTC"},
		{"expr=0+9+1-7+*+1", "cron 0 9 1-7 * 1, UTC"},
	} {
		var p struct {
			Fires []string `json:"fires"`
			Words string   `json:"words"`
		}
		r := e.req("GET", "/api/schedules/preview?"+tc.query, "")
		r.want(t, http.StatusOK, "")
		r.decode(t, &p)
		if p.Words != tc.words || len(p.Fires) == 0 {
			t.Errorf("preview %s = %s, want words %q", tc.query, r.body, tc.words)
		}
	}
}
