package api

import (
	"fmt"
	"net/http"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// runView renders ru. q is the waiting work, read once per request when
// several runs are rendered; nil reads it when ru waits. asOf is the
// journal's cursor read before ru was, or 0.
//
// The view's last_event_id says which of the run's events it reflects,
// and a client skips those: it must not run ahead of ru. A cursor read
// after a "running" row that takes in the run's run.done left the run
// running in the browser (TestUIVersions). So the cursor is capped at
// asOf, or, without one, ru is read again after the cursor.
//
// jobOf maps a list's runs to their jobs (JobsOfRuns, one read for the
// list); nil reads the run's job alone.
func (a *API) runView(r *http.Request, ru store.Run, q *queue, asOf int64, jobOf map[string]string) (runView, error) {
	cursor, err := a.st.RunCursor(r.Context(), ru.ID)
	if err != nil {
		return runView{}, err
	}
	if asOf > 0 {
		cursor = min(cursor, asOf)
	} else if ru, err = a.st.GetRun(r.Context(), ru.ID); err != nil {
		return runView{}, err
	}
	var pending []string
	if ru.Status == run.AwaitingApproval || ru.Status == run.AwaitingClarify || ru.Status == run.Cancelling {
		reqs, err := a.st.ListRequests(r.Context(), store.RequestQuery{RunID: ru.ID, Status: store.RequestPending})
		if err != nil {
			return runView{}, err
		}
		for _, q := range reqs {
			pending = append(pending, q.ID)
		}
	}
	if !ru.Status.Terminal() {
		// A live run's total is written when it ends; until then sum the
		// journal's usage events.
		evs, err := a.st.Events(r.Context(), store.EventQuery{RunID: ru.ID, Types: []event.Type{event.Usage}})
		if err != nil {
			return runView{}, err
		}
		ru.Usage = control.SumUsage(evs)
	}
	v := newRunView(ru, cursor, pending)
	if jobOf != nil {
		v.JobID = jobOf[ru.ID]
	} else if v.JobID, err = a.st.JobOfRun(r.Context(), ru.ID); err != nil {
		return runView{}, err
	}
	if v.Paused, err = a.pausedOf(r, ru); err != nil {
		return runView{}, err
	}
	switch {
	case len(pending) > 0 && ru.Status != run.Cancelling, ru.Status == run.Paused:
		// A person holds it up; no need to read the line.
		v.Waiting = &waitingView{Reason: WaitPerson}
	case ru.Status == run.Recovering && ru.RetryAt.After(time.Now()):
		v.Waiting = &waitingView{Reason: WaitRetry, RetryAt: &event.Time{Time: ru.RetryAt}}
	case waits(ru):
		if q == nil {
			rq, err := a.readQueue(r.Context())
			if err != nil {
				return runView{}, err
			}
			q = &rq
		}
		v.Waiting = q.waitingFor(ru)
	}
	return v, nil
}

// waits reports whether ru is neither executing nor ended.
func waits(ru store.Run) bool {
	switch ru.Status {
	case run.Queued, run.Recovering, run.AwaitingApproval, run.AwaitingClarify:
		return true
	}
	return false
}

func (a *API) writeRun(w http.ResponseWriter, r *http.Request, status int, ru store.Run) {
	v, err := a.runView(r, ru, nil, 0, nil)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, status, v)
}

func (a *API) getRun(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "run", "run")
	if !ok {
		return
	}
	ru, err := a.st.GetRun(r.Context(), rid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRun(w, r, http.StatusOK, ru)
}

// cancelRun records the intent; the owning runner stops the run and writes
// the terminal event. Repeating it changes nothing.
func (a *API) cancelRun(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "run", "run")
	if !ok {
		return
	}
	ru, err := a.svc.Cancel(r.Context(), rid, actor(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	status := http.StatusAccepted
	if ru.Status.Terminal() {
		status = http.StatusOK
	}
	a.writeRun(w, r, status, ru)
}

func (a *API) listRequests(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	status := q.Get("status")
	switch status {
	case "", store.RequestPending, store.RequestResolved, store.RequestExpired, store.RequestCancelled:
	default:
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "status must be pending, resolved, expired or cancelled", nil)
		return
	}
	reqs, err := a.st.ListRequests(r.Context(), store.RequestQuery{Status: status, SessionID: q.Get("session_id")})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]requestView, len(reqs))
	for i, rq := range reqs {
		out[i] = newRequestView(rq)
	}
	a.nameParents(r.Context(), out)
	writeJSON(w, http.StatusOK, map[string]any{"requests": out})
}

func (a *API) getRequest(w http.ResponseWriter, r *http.Request) {
	qid, ok := pathID(w, r, "req", "request")
	if !ok {
		return
	}
	q, err := a.st.GetRequest(r.Context(), qid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := []requestView{newRequestView(q)}
	a.nameParents(r.Context(), out)
	writeJSON(w, http.StatusOK, out[0])
}

func (a *API) respond(w http.ResponseWriter, r *http.Request) {
	qid, ok := pathID(w, r, "req", "request")
	if !ok {
		return
	}
	var in struct {
		Choice string `json:"choice"`
		Answer string `json:"answer"`
		// Note goes with choice deny: what to do instead.
		Note string `json:"note"`
	}
	if !decode(w, r, &in) {
		return
	}
	q, err := a.svc.Respond(r.Context(), qid, control.Response{Choice: in.Choice, Answer: in.Answer, Note: in.Note, By: actor(r)})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newRequestView(q))
}

func (a *API) listRules(w http.ResponseWriter, r *http.Request) {
	rules, err := a.st.ListRules(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]ruleView, len(rules))
	for i, ru := range rules {
		out[i] = newRuleView(ru)
	}
	writeJSON(w, http.StatusOK, map[string]any{"rules": out})
}

// createRule remembers an approval ahead of time: {tool, pattern,
// session_id?}. The pattern uses `*` wildcards (docs/POLICY.md).
func (a *API) createRule(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Tool      string `json:"tool"`
		Pattern   string `json:"pattern"`
		SessionID string `json:"session_id"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.SessionID != "" && !id.Valid("ses", in.SessionID) {
		httpguard.WriteError(w, http.StatusBadRequest, control.CodeInvalidInput, "session_id is not a session id", nil)
		return
	}
	ru, err := a.svc.CreateRule(r.Context(), control.NewRule{Tool: in.Tool, Pattern: in.Pattern, SessionID: in.SessionID, By: actor(r)})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, newRuleView(ru))
}

func (a *API) deleteRule(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "rul", "rule")
	if !ok {
		return
	}
	if err := a.svc.DeleteRule(r.Context(), rid); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// health reports the store, the live runners and the work waiting for
// them. It answers 503 only when the store is unreachable: no runner is a
// state to show, not an outage of this process.
func (a *API) health(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{"status": "ok", "store": "ok", "runner_mode": a.info.RunnerMode}
	if _, err := a.st.LastEventID(r.Context()); err != nil {
		a.log.Error("health: store", "err", err)
		out["status"], out["store"] = "degraded", "unavailable"
		writeJSON(w, http.StatusServiceUnavailable, out)
		return
	}
	runners, err := a.st.ListRunners(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var owned []run.Status
	for _, s := range run.All() {
		if s.Owned() {
			owned = append(owned, s)
		}
	}
	held, err := a.st.RunsWithStatus(r.Context(), owned...)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	perRunner := map[string]int{}
	for _, ru := range held {
		if ru.RunnerID != "" {
			perRunner[ru.RunnerID]++
		}
	}
	live := []runnerView{}
	for _, ru := range runners {
		if time.Since(ru.HeartbeatAt) < a.opt.LeaseWindow {
			live = append(live, runnerView{ID: ru.ID, Host: ru.Host, PID: ru.PID, Version: ru.Version,
				StartedAt: event.Time{Time: ru.StartedAt}, HeartbeatAt: event.Time{Time: ru.HeartbeatAt}, RunsHeld: perRunner[ru.ID]})
		}
	}
	q, err := a.readQueue(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	// answered: runs whose person answered while they were parked; they
	// wait for a runner like queued ones.
	out["runners"], out["queue_depth"], out["recovering"], out["answered"] = live, q.queued, q.recovering, q.answered
	out["waiting_for_person"] = len(q.pendingRuns)
	if n := q.queued + q.recovering + q.answered; len(live) == 0 && n > 0 {
		out["status"] = "degraded"
		out["reason"] = fmt.Sprintf("no runner is alive and %d %s waiting", n, plural(n, "run is", "runs are"))
	}
	if a.opt.Writes != nil {
		if tr := a.opt.Writes.Trouble(); tr != nil {
			// Reads still work (health got this far); writes do not.
			out["status"], out["store"] = "degraded", "write_failing"
			out["store_failing_since"] = event.Time{Time: tr.Since}
			out["reason"] = writeTrouble(tr.Err)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// writeTrouble says in plain words why the store refuses writes.
func writeTrouble(err error) string {
	switch {
	case store.Full(err):
		return "the server's disk is full, so nothing new can be saved until space is freed"
	case store.Transient(err):
		return "the server's database is busy or failing, so writes are retried until it answers"
	}
	return "the server cannot write to its database; see the server log"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// SchemaVersion of the API and event shapes; bump on incompatible change.
const SchemaVersion = 1

// listModels describes every provider and model; keys never appear, only
// whether one is set.
func (a *API) listModels(w http.ResponseWriter, r *http.Request) {
	if a.opt.Models == nil {
		writeJSON(w, http.StatusOK, map[string]any{"default": a.info.DefaultModel, "providers": []any{}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"default": a.opt.Models.Default(), "providers": a.opt.Models.List(r.Context())})
}

func (a *API) meta(w http.ResponseWriter, r *http.Request) {
	types := []string{}
	for _, i := range event.Catalog() {
		types = append(types, string(i.Type))
	}
	roots, defWS := a.svc.WorkspaceRoots()
	// The console's default model may change while the server runs
	// (issue 16, h16-providers).
	defModel, demo := a.info.DefaultModel, a.info.Demo
	if a.opt.Models != nil {
		defModel = a.opt.Models.Default()
		if d, ok := a.opt.Models.(interface{ DemoOnly() bool }); ok {
			demo = d.DemoOnly()
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		// Workspaces: where new sessions may work (the new-session dialog).
		"workspaces":     map[string]any{"default": defWS, "roots": roots},
		"product":        "caduceus",
		"version":        a.info.Version,
		"schema_version": SchemaVersion,
		"store_schema":   a.info.SchemaVersion,
		"default_model":  defModel,
		"demo_model":     demo,
		"capabilities": map[string]any{
			"event_types":      types,
			"if_busy":          []string{control.IfBusyEnqueue, control.IfBusyInterrupt, control.IfBusyReject, control.IfBusySteer},
			"approval_choices": control.ApprovalChoices(),
			"stream_resume":    []string{"Last-Event-ID", "after"},
			"run_statuses":     run.All(),
			"browser":          a.info.Browser, // h18-browser
		},
	})
}
