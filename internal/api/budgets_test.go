package api_test

// Budgets, pause and resume (issue 16, h16-budgets).

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

type pausedRunJSON struct {
	Status   string   `json:"status"`
	Controls []string `json:"controls"`
	Waiting  *struct {
		Reason string `json:"reason"`
	} `json:"waiting"`
	Paused *struct {
		Code    string         `json:"code"`
		Reason  string         `json:"reason"`
		Details map[string]any `json:"details"`
	} `json:"paused"`
}

// pauseHeld pauses a run as its runner would on reaching a 500-token
// budget.
func (e *env) pauseHeld(t *testing.T, runID string) {
	t.Helper()
	e.hold(t, runID, "rn_1")
	err := e.w.Do(e.ctx, func(tx store.Tx) error {
		return control.Pause(e.ctx, tx, runID, "rn_1", control.PauseCause{Code: control.PauseBudget,
			Reason:  "token budget of 500 reached: 512 used",
			Details: map[string]any{"scope": "run", "limit": "max_tokens", "max": "500", "used": "512"}})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPauseAndResumeRoutes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e := newEnv(t, withStore(open))
		s := e.session(t)
		ru := e.send(t, s.ID, "work")
		// A queued run pauses at once.
		r := e.req("POST", "/api/runs/"+ru.ID+"/pause", "")
		r.want(t, http.StatusAccepted, "")
		var got pausedRunJSON
		r.decode(t, &got)
		if got.Status != "paused" || got.Paused == nil || got.Paused.Code != control.PauseByPerson || got.Waiting == nil || got.Waiting.Reason != "person" {
			t.Fatalf("paused queued run = %+v", got)
		}
		e.req("POST", "/api/runs/"+ru.ID+"/resume", "").want(t, http.StatusAccepted, "")

		// A run paused by its budget says why, and resumes with more.
		s2 := e.session(t)
		ru2 := e.send(t, s2.ID, "work")
		e.pauseHeld(t, ru2.ID)
		r = e.req("GET", "/api/runs/"+ru2.ID, "")
		r.want(t, http.StatusOK, "")
		r.decode(t, &got)
		if got.Paused == nil || got.Paused.Reason != "token budget of 500 reached: 512 used" || got.Paused.Details["used"] != "512" {
			t.Fatalf("paused run = %+v", got)
		}
		e.runErrCases(t, []errCase{
			{name: "negative tokens", method: "POST", path: "/api/runs/" + ru2.ID + "/resume", body: `{"budget":{"max_tokens":-1}}`, status: 400, code: control.CodeInvalidBudget},
			{name: "fractional tokens", method: "POST", path: "/api/runs/" + ru2.ID + "/resume", body: `{"budget":{"max_tokens":1.5}}`, status: 400, code: control.CodeInvalidInput},
			{name: "unknown limit", method: "POST", path: "/api/runs/" + ru2.ID + "/resume", body: `{"budget":{"max_bananas":1}}`, status: 400, code: control.CodeInvalidInput},
			{name: "pause a paused run's neighbour that is unknown", method: "POST", path: "/api/runs/run_01m7y3svk0qzqr34e8q9rjq2bz/pause", status: 404, code: control.CodeNotFound},
		})
		if b, err := e.st.ListBudgets(e.ctx, ""); err != nil || len(b) != 0 {
			t.Fatalf("refused resumes wrote budgets %+v, %v", b, err)
		}
		r = e.req("POST", "/api/runs/"+ru2.ID+"/resume", `{"budget":{"max_tokens":5000}}`)
		r.want(t, http.StatusAccepted, "")
		if b, err := e.st.GetBudget(e.ctx, budget.ScopeRun, ru2.ID); err != nil || b.Limits.MaxTokens != 5000 {
			t.Fatalf("run budget after resume = %+v, %v", b, err)
		}
		// A run that ended cannot pause.
		e.req("POST", "/api/runs/"+ru2.ID+"/cancel", "").want(t, http.StatusOK, "")
		e.req("POST", "/api/runs/"+ru2.ID+"/pause", "").want(t, http.StatusConflict, control.CodeNotPausable)
	})
}

func TestBudgetsRoutes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e := newEnv(t, withStore(open))
		s := e.session(t)
		e.req("PUT", "/api/budgets", `{"scope":"day","limits":{"max_tokens":100000,"max_cost_usd":2.5}}`).want(t, http.StatusOK, "")
		e.req("PUT", "/api/budgets", `{"scope":"session","target":"`+s.ID+`","limits":{"max_tool_calls":30}}`).want(t, http.StatusOK, "")
		e.runErrCases(t, []errCase{
			{name: "bad scope", method: "PUT", path: "/api/budgets", body: `{"scope":"week","limits":{}}`, status: 400, code: "invalid_scope"},
			{name: "day with a target", method: "PUT", path: "/api/budgets", body: `{"scope":"day","target":"x","limits":{}}`, status: 400, code: control.CodeInvalidInput},
			{name: "session without one", method: "PUT", path: "/api/budgets", body: `{"scope":"session","limits":{}}`, status: 400, code: control.CodeInvalidInput},
			{name: "unknown profile", method: "PUT", path: "/api/budgets", body: `{"scope":"profile","target":"prf_nope","limits":{"max_tokens":5}}`, status: 404, code: control.CodeNotFound},
			{name: "negative cost", method: "PUT", path: "/api/budgets", body: `{"scope":"day","limits":{"max_cost_usd":-1}}`, status: 400, code: control.CodeInvalidBudget},
			{name: "unknown limit", method: "PUT", path: "/api/budgets", body: `{"scope":"day","limits":{"max_fun":1}}`, status: 400, code: control.CodeInvalidBudget},
			{name: "bad scope filter", method: "GET", path: "/api/budgets?scope=week", status: 400, code: "invalid_scope"},
		})
		r := e.req("GET", "/api/budgets", "")
		r.want(t, http.StatusOK, "")
		var got struct {
			Budgets []struct {
				Scope  string        `json:"scope"`
				Target string        `json:"target"`
				Limits budget.Limits `json:"limits"`
			} `json:"budgets"`
			Today map[string]any `json:"today"`
		}
		r.decode(t, &got)
		if len(got.Budgets) != 2 || got.Budgets[0].Scope != "day" || got.Budgets[0].Limits.MaxCostUSD != 2.5 ||
			got.Budgets[1].Target != s.ID || got.Budgets[1].Limits.MaxToolCalls != 30 || got.Today["day"] == nil {
			b, _ := json.Marshal(got)
			t.Fatalf("GET /api/budgets = %s", b)
		}
		// Limits that set nothing remove them.
		e.req("PUT", "/api/budgets", `{"scope":"day","limits":{}}`).want(t, http.StatusOK, "")
		if bs, err := e.st.ListBudgets(e.ctx, budget.ScopeDay); err != nil || len(bs) != 0 {
			t.Fatalf("day budgets after clearing = %+v, %v", bs, err)
		}
	})
}
