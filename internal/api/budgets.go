package api

// Budgets, pause and resume (issue 16, h16-budgets): a person pauses a run
// at its next step boundary and resumes a paused one with raised limits;
// the limits of sessions, profiles and the server's day are read and set
// here.

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Codes of the budget routes.
const (
	codeInvalidScope = "invalid_scope"
)

// pausedView says why a paused run paused (from the journal's diagnostic).
type pausedView struct {
	Code    string         `json:"code"` // budget_exceeded | looks_stuck | paused_by_person
	Reason  string         `json:"reason"`
	Details map[string]any `json:"details,omitempty"`
}

// pausedOf reads the cause of a paused run's pause.
func (a *API) pausedOf(r *http.Request, ru store.Run) (*pausedView, error) {
	if ru.Status != run.Paused {
		return nil, nil
	}
	evs, err := a.st.Events(r.Context(), store.EventQuery{RunID: ru.ID, Types: []event.Type{event.Diagnostic}})
	if err != nil {
		return nil, err
	}
	c, ok := control.PausedBy(evs)
	if !ok {
		return &pausedView{Code: control.PauseByPerson, Reason: "paused"}, nil
	}
	return &pausedView{Code: c.Code, Reason: c.Reason, Details: c.Details}, nil
}

// pauseRun asks a run to pause: POST /api/runs/{id}/pause (no body).
func (a *API) pauseRun(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "run", "run")
	if !ok {
		return
	}
	ru, err := a.svc.RequestPause(r.Context(), rid, actor(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRun(w, r, http.StatusAccepted, ru)
}

// resumeRun queues an interrupted, recovering or paused run again:
// POST /api/runs/{id}/resume, with an optional {"budget": {...}} raising
// the limits of a paused run.
func (a *API) resumeRun(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "run", "run")
	if !ok {
		return
	}
	var in struct {
		Budget *budget.Limits `json:"budget"`
	}
	if !decodeOptional(w, r, &in) {
		return
	}
	ru, err := a.svc.ResumeWith(r.Context(), rid, control.ResumeInput{Budget: in.Budget, By: actor(r)})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRun(w, r, http.StatusAccepted, ru)
}

type budgetView struct {
	Scope     string        `json:"scope"`
	Target    string        `json:"target"`
	Limits    budget.Limits `json:"limits"`
	UpdatedAt event.Time    `json:"updated_at"`
}

// listBudgets: GET /api/budgets[?scope=] — the limits set, and what the
// server spent today.
func (a *API) listBudgets(w http.ResponseWriter, r *http.Request) {
	scope := r.URL.Query().Get("scope")
	if scope != "" && !budget.ValidScope(scope) {
		writeError(w, http.StatusBadRequest, codeInvalidScope, "scope must be run, session, profile or day", nil)
		return
	}
	bs, err := a.st.ListBudgets(r.Context(), scope)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]budgetView, len(bs))
	for i, b := range bs {
		out[i] = budgetView{Scope: b.Scope, Target: b.Target, Limits: b.Limits, UpdatedAt: event.Time{Time: b.UpdatedAt}}
	}
	today := budget.Day(time.Now())
	u, err := a.st.DayUsage(r.Context(), today)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"budgets": out,
		"today": map[string]any{"day": today, "tokens": u.Tokens, "cost_usd": u.CostUSD, "tool_calls": u.ToolCalls}})
}

// putBudget: PUT /api/budgets {"scope", "target", "limits"} sets the
// limits of a scope's target; limits that set nothing remove them. The
// day's target is "".
func (a *API) putBudget(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Scope  string          `json:"scope"`
		Target string          `json:"target"`
		Limits json.RawMessage `json:"limits"`
	}
	if !decode(w, r, &in) {
		return
	}
	if !budget.ValidScope(in.Scope) {
		writeError(w, http.StatusBadRequest, codeInvalidScope, "scope must be run, session, profile or day", map[string]any{"field": "scope"})
		return
	}
	if (in.Scope == budget.ScopeDay) != (in.Target == "") {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "target names the run, session or profile; the day's is empty", map[string]any{"field": "target"})
		return
	}
	var l budget.Limits
	if len(in.Limits) > 0 {
		dec := json.NewDecoder(bytes.NewReader(in.Limits))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			writeError(w, http.StatusBadRequest, control.CodeInvalidBudget, "limits: "+err.Error(), map[string]any{"field": "limits"})
			return
		}
	}
	if err := l.Validate(); err != nil {
		var fe *budget.FieldError
		errors.As(err, &fe)
		writeError(w, http.StatusBadRequest, control.CodeInvalidBudget, "limits."+fe.Field+" "+fe.Message, map[string]any{"field": "limits." + fe.Field})
		return
	}
	b, err := a.svc.SetBudget(r.Context(), in.Scope, in.Target, l)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, budgetView{Scope: b.Scope, Target: b.Target, Limits: b.Limits, UpdatedAt: event.Time{Time: b.UpdatedAt}})
}
