package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

const noRun = "run_00000000000000000000000000"
const noReq = "req_00000000000000000000000000"

// Bad input to the run, request and rule routes.
func TestRunRequestRuleErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	queued := e.send(t, s.ID, "hi")
	// A run held by a (made-up) runner, waiting for a person.
	s2 := e.session(t)
	held := e.send(t, s2.ID, "go")
	e.hold(t, held.ID, "rnr_test")
	approval := e.ask(t, held.ID, "rnr_test", store.KindApproval)
	s3 := e.session(t)
	held3 := e.send(t, s3.ID, "go")
	e.hold(t, held3.ID, "rnr_test")
	clarify := e.ask(t, held3.ID, "rnr_test", store.KindClarify)

	e.runErrCases(t, []errCase{
		{name: "run: malformed id", method: "GET", path: "/api/runs/x", status: 404, code: "not_found"},
		{name: "run: unknown", method: "GET", path: "/api/runs/" + noRun, status: 404, code: "not_found"},
		{name: "cancel unknown", method: "POST", path: "/api/runs/" + noRun + "/cancel", status: 404, code: "not_found"},
		{name: "resume unknown", method: "POST", path: "/api/runs/" + noRun + "/resume", status: 404, code: "not_found"},
		{name: "resume a queued run", method: "POST", path: "/api/runs/" + queued.ID + "/resume", status: 409, code: "not_resumable"},
		{name: "resume a run waiting for a person", method: "POST", path: "/api/runs/" + held.ID + "/resume", status: 409, code: "not_resumable"},
		{name: "requests: bad status", method: "GET", path: "/api/requests?status=open", status: 400, code: "invalid_input"},
		{name: "request: malformed id", method: "GET", path: "/api/requests/x", status: 404, code: "not_found"},
		{name: "request: unknown", method: "GET", path: "/api/requests/" + noReq, status: 404, code: "not_found"},
		{name: "respond to unknown", method: "POST", path: "/api/requests/" + noReq + "/respond", body: `{"choice":"once"}`, status: 404, code: "not_found"},
		{name: "respond: bad choice", method: "POST", path: "/api/requests/" + approval + "/respond", body: `{"choice":"sometimes"}`, status: 400, code: "invalid_choice"},
		{name: "respond: no choice", method: "POST", path: "/api/requests/" + approval + "/respond", body: `{}`, status: 400, code: "invalid_choice"},
		{name: "respond: unknown field", method: "POST", path: "/api/requests/" + approval + "/respond", body: `{"choice":"once","why":"x"}`, status: 400, code: "invalid_input"},
		{name: "respond: empty body", method: "POST", path: "/api/requests/" + approval + "/respond", status: 400, code: "invalid_input"},
		{name: "clarify: empty answer", method: "POST", path: "/api/requests/" + clarify + "/respond", body: `{"answer":"  "}`, status: 400, code: "invalid_input"},
		{name: "rule: no tool", method: "POST", path: "/api/rules", body: `{"pattern":"go test *"}`, status: 400, code: "invalid_input"},
		{name: "rule: only wildcards", method: "POST", path: "/api/rules", body: `{"tool":"run_command","pattern":"* *"}`, status: 400, code: "invalid_input"},
		{name: "rule: bad session id", method: "POST", path: "/api/rules", body: `{"tool":"run_command","pattern":"ls","session_id":"x"}`, status: 400, code: "invalid_input"},
		{name: "rule: unknown session", method: "POST", path: "/api/rules", body: `{"tool":"run_command","pattern":"ls","session_id":"ses_00000000000000000000000000"}`, status: 404, code: "not_found"},
		{name: "rule: unknown field", method: "POST", path: "/api/rules", body: `{"tool":"run_command","pattern":"ls","scope":"always"}`, status: 400, code: "invalid_input"},
		{name: "delete rule: malformed id", method: "DELETE", path: "/api/rules/x", status: 404, code: "not_found"},
		{name: "delete rule: unknown", method: "DELETE", path: "/api/rules/rul_00000000000000000000000000", status: 404, code: "not_found"},
	})
}

// Reading a run: its view, its session's runs, and pending request ids
// while it waits for a person.
func TestGetRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	ru := e.send(t, s.ID, "hello")
	got := e.run(t, ru.ID)
	if got.ID != ru.ID || got.Status != "queued" || got.LastEventID == 0 || got.PendingRequestIDs == nil || len(got.PendingRequestIDs) != 0 {
		t.Fatalf("queued run %+v", got)
	}
	if !slices.Contains(got.Controls, "cancel") {
		t.Fatalf("a queued run's controls %v lack cancel", got.Controls)
	}
	e.hold(t, ru.ID, "rnr_test")
	q := e.ask(t, ru.ID, "rnr_test", store.KindApproval)
	got = e.run(t, ru.ID)
	if got.Status != "awaiting_approval" || !slices.Equal(got.PendingRequestIDs, []string{q}) || !slices.Contains(got.Controls, "approve") {
		t.Fatalf("waiting run %+v", got)
	}
	if runs := e.runsOf(t, s.ID); len(runs) != 1 || runs[0].ID != ru.ID || runs[0].Status != "awaiting_approval" {
		t.Fatalf("session runs %+v", runs)
	}
}

// Cancel: a queued run ends at once (200, cancelled) and a second cancel
// changes nothing; a run its runner holds moves to cancelling (202) and
// its pending request no longer takes answers.
func TestCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	ru := e.send(t, s.ID, "hi")
	var got runJSON
	r := e.req("POST", "/api/runs/"+ru.ID+"/cancel", "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &got)
	if got.Status != "cancelled" || !got.Terminal {
		t.Fatalf("cancelled queued run %s", r.body)
	}
	last := e.lastID()
	r = e.req("POST", "/api/runs/"+ru.ID+"/cancel", "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &got)
	if got.Status != "cancelled" || e.lastID() != last {
		t.Fatalf("second cancel: %s, journal %d -> %d", r.body, last, e.lastID())
	}

	s2 := e.session(t)
	held := e.send(t, s2.ID, "go")
	e.hold(t, held.ID, "rnr_test")
	q := e.ask(t, held.ID, "rnr_test", store.KindApproval)
	r = e.req("POST", "/api/runs/"+held.ID+"/cancel", "")
	r.want(t, http.StatusAccepted, "")
	r.decode(t, &got)
	if got.Status != "cancelling" || got.Terminal {
		t.Fatalf("cancel of a held run: %s", r.body)
	}
	last = e.lastID()
	e.req("POST", "/api/runs/"+held.ID+"/cancel", "").want(t, http.StatusAccepted, "")
	if e.lastID() != last {
		t.Fatal("a second cancel of a cancelling run wrote events")
	}
	e.req("POST", "/api/requests/"+q+"/respond", `{"choice":"once"}`).want(t, http.StatusConflict, "not_pending")
}

// Resume queues an interrupted run again, once.
func TestResume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	ru := e.send(t, s.ID, "go")
	e.hold(t, ru.ID, "rnr_dead")
	e.interrupt(t, ru.ID)
	if got := e.run(t, ru.ID); got.Status != "interrupted" || !slices.Contains(got.Controls, "resume") {
		t.Fatalf("interrupted run %+v", got)
	}
	var got runJSON
	r := e.req("POST", "/api/runs/"+ru.ID+"/resume", "")
	r.want(t, http.StatusAccepted, "")
	r.decode(t, &got)
	if got.Status != "queued" || got.ID != ru.ID {
		t.Fatalf("resumed %s", r.body)
	}
	e.req("POST", "/api/runs/"+ru.ID+"/resume", "").want(t, http.StatusConflict, "not_resumable")

	// A run whose session has moved on cannot be resumed.
	s2 := e.session(t)
	old := e.send(t, s2.ID, "first")
	e.hold(t, old.ID, "rnr_dead")
	e.interrupt(t, old.ID)
	later := e.send(t, s2.ID, "second")
	e.hold(t, later.ID, "rnr_live")
	e.req("POST", "/api/runs/"+old.ID+"/resume", "").want(t, http.StatusConflict, "superseded")
}

// Requests: listed by status and session, read one, answered once; a
// second answer is refused with not_pending.
func TestRequestsRespond(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s1, s2 := e.session(t), e.session(t)
	r1 := e.send(t, s1.ID, "go")
	e.hold(t, r1.ID, "rnr_test")
	approval := e.ask(t, r1.ID, "rnr_test", store.KindApproval)
	r2 := e.send(t, s2.ID, "go")
	e.hold(t, r2.ID, "rnr_test")
	clarify := e.ask(t, r2.ID, "rnr_test", store.KindClarify)

	list := func(query string) []requestJSON {
		t.Helper()
		var out struct {
			Requests []requestJSON `json:"requests"`
		}
		r := e.req("GET", "/api/requests"+query, "")
		r.want(t, 200, "")
		r.decode(t, &out)
		if out.Requests == nil {
			t.Fatalf("%s: requests is not a list: %s", query, r.body)
		}
		return out.Requests
	}
	ids := func(qs []requestJSON) []string {
		var out []string
		for _, q := range qs {
			out = append(out, q.ID)
		}
		slices.Sort(out)
		return out
	}
	both := []string{approval, clarify}
	slices.Sort(both)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", both},
		{"?status=pending", both},
		{"?status=resolved", nil},
		{"?session_id=" + s1.ID, []string{approval}},
		{"?status=pending&session_id=" + s2.ID, []string{clarify}},
	} {
		if got := ids(list(tc.query)); !slices.Equal(got, tc.want) {
			t.Errorf("requests%s = %v, want %v", tc.query, got, tc.want)
		}
	}

	var q requestJSON
	r := e.req("GET", "/api/requests/"+approval, "")
	r.want(t, 200, "")
	r.decode(t, &q)
	if q.Kind != "approval" || q.Status != "pending" || q.RunID != r1.ID || !strings.Contains(string(r.body), `"prompt":{`) {
		t.Fatalf("request %s", r.body)
	}

	tests := []struct {
		name, id, body string
		wantResponse   string
	}{
		{"approve once", approval, `{"choice":"once"}`, "once"},
		{"clarify with a choice", clarify, `{"choice":"b"}`, "b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.req("POST", "/api/requests/"+tc.id+"/respond", tc.body)
			r.want(t, 200, "")
			var got requestJSON
			r.decode(t, &got)
			if got.Status != "resolved" || got.Response != tc.wantResponse {
				t.Fatalf("answered %s", r.body)
			}
			last := e.lastID()
			e.req("POST", "/api/requests/"+tc.id+"/respond", tc.body).want(t, http.StatusConflict, "not_pending")
			if e.lastID() != last {
				t.Fatal("a refused answer wrote events")
			}
		})
	}
	if got := list("?status=pending"); len(got) != 0 {
		t.Fatalf("pending after answers: %+v", got)
	}
	if got := ids(list("?status=resolved")); !slices.Equal(got, both) {
		t.Fatalf("resolved %v", got)
	}
}

// Rules: created (global or for a session), listed, deleted once.
func TestRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	type ruleJSON struct {
		ID        string `json:"id"`
		Tool      string `json:"tool"`
		Pattern   string `json:"pattern"`
		Scope     string `json:"scope"`
		SessionID string `json:"session_id"`
		CreatedAt string `json:"created_at"`
	}
	var global, local ruleJSON
	r := e.req("POST", "/api/rules", `{"tool":" run_command ","pattern":"go test *"}`)
	r.want(t, http.StatusCreated, "")
	r.decode(t, &global)
	if !strings.HasPrefix(global.ID, "rul_") || global.Tool != "run_command" || global.Pattern != "go test *" || global.Scope != "always" || global.SessionID != "" || global.CreatedAt == "" {
		t.Fatalf("global rule %s", r.body)
	}
	r = e.req("POST", "/api/rules", `{"tool":"run_command","pattern":"make *","session_id":"`+s.ID+`"}`)
	r.want(t, http.StatusCreated, "")
	r.decode(t, &local)
	if local.Scope != "session" || local.SessionID != s.ID {
		t.Fatalf("session rule %s", r.body)
	}
	var out struct {
		Rules []ruleJSON `json:"rules"`
	}
	e.req("GET", "/api/rules", "").decode(t, &out)
	if len(out.Rules) != 2 {
		t.Fatalf("rules %+v", out.Rules)
	}
	e.req("DELETE", "/api/rules/"+global.ID, "").want(t, http.StatusNoContent, "")
	e.req("DELETE", "/api/rules/"+global.ID, "").want(t, 404, "not_found")
	out.Rules = nil
	r = e.req("GET", "/api/rules", "")
	r.decode(t, &out)
	if len(out.Rules) != 1 || out.Rules[0].ID != local.ID {
		t.Fatalf("rules after delete: %s", r.body)
	}
}

// Health: ok with a live runner or nothing waiting; degraded, still 200,
// when runs wait and no runner is alive.
func TestHealth(t *testing.T) {
	t.Parallel()
	type health struct {
		Status     string            `json:"status"`
		Store      string            `json:"store"`
		RunnerMode string            `json:"runner_mode"`
		Runners    []json.RawMessage `json:"runners"`
		QueueDepth int               `json:"queue_depth"`
		Recovering int               `json:"recovering"`
		Reason     string            `json:"reason"`
	}
	read := func(t *testing.T, e *env) health {
		t.Helper()
		r := e.req("GET", "/api/health", "")
		r.want(t, 200, "")
		var h health
		r.decode(t, &h)
		if h.Runners == nil {
			t.Fatalf("runners is not a list: %s", r.body)
		}
		return h
	}

	t.Run("no runner", func(t *testing.T) {
		e := newEnv(t)
		if h := read(t, e); h.Status != "ok" || h.Store != "ok" || h.RunnerMode != "inprocess" || len(h.Runners) != 0 || h.QueueDepth != 0 {
			t.Fatalf("idle health %+v", h)
		}
		s := e.session(t)
		e.send(t, s.ID, "one")
		e.send(t, s.ID, "two")
		if h := read(t, e); h.Status != "degraded" || h.QueueDepth != 2 || !strings.Contains(h.Reason, "2 runs are waiting") {
			t.Fatalf("health with work and no runner %+v", h)
		}
	})
	t.Run("live runner", func(t *testing.T) {
		e := newEnv(t, withRunner(script(turn(text("hi")))), withLeaseWindow(time.Minute))
		deadline := time.Now().Add(10 * time.Second)
		for {
			h := read(t, e)
			if len(h.Runners) == 1 {
				if h.Status != "ok" {
					t.Fatalf("health with a runner %+v", h)
				}
				var rn struct {
					ID       string `json:"id"`
					PID      int    `json:"pid"`
					RunsHeld *int   `json:"runs_held"`
				}
				if err := json.Unmarshal(h.Runners[0], &rn); err != nil || !strings.HasPrefix(rn.ID, "rnr_") || rn.PID == 0 || rn.RunsHeld == nil {
					t.Fatalf("runner %s", h.Runners[0])
				}
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the runner never showed: %+v", h)
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// With a runner: a command waits for approval, the answer lets it run,
// and the run completes; cancelling it afterwards changes nothing.
func TestApproveThenComplete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, withRunner(script(turn(call("run_command", `{"command":"echo hi"}`)), turn(text("done")))))
	s := e.session(t)
	ru := e.send(t, s.ID, "run it")
	waiting := e.waitRun(t, ru.ID, "awaiting_approval", status("awaiting_approval"))
	if len(waiting.PendingRequestIDs) != 1 {
		t.Fatalf("waiting run %+v", waiting)
	}
	q := waiting.PendingRequestIDs[0]
	e.req("POST", "/api/requests/"+q+"/respond", `{"choice":"once"}`).want(t, 200, "")
	e.req("POST", "/api/requests/"+q+"/respond", `{"choice":"deny"}`).want(t, 409, "not_pending")
	done := e.waitRun(t, ru.ID, "completed", status("completed"))
	if !done.Terminal || len(done.PendingRequestIDs) != 0 || len(done.Controls) != 0 && slices.Contains(done.Controls, "cancel") {
		t.Fatalf("completed run %+v", done)
	}
	var after runJSON
	r := e.req("POST", "/api/runs/"+ru.ID+"/cancel", "")
	r.want(t, http.StatusOK, "")
	r.decode(t, &after)
	if after.Status != "completed" {
		t.Fatalf("cancel after completion: %s", r.body)
	}
}
