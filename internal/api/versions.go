package api

import (
	"net/http"

	"github.com/caduceus-dev/caduceus/internal/control"
)

// Versions of a conversation (issue 15): retry, edit, continue, switching
// versions, undo and restore. Each is a new run or a version.selected on
// the journal (control/versions.go); nothing is rewritten.

// decodeOptional decodes a JSON body that may be absent altogether.
func decodeOptional(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.ContentLength == 0 {
		return true
	}
	return decode(w, r, v)
}

// retryRun answers a run's message again: POST /api/runs/{id}/retry {model?}.
func (a *API) retryRun(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "run", "run")
	if !ok {
		return
	}
	var in struct {
		Model string `json:"model"`
	}
	if !decodeOptional(w, r, &in) {
		return
	}
	ru, err := a.svc.Retry(r.Context(), rid, in.Model, actor(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRun(w, r, http.StatusAccepted, ru)
}

// continueRun goes on from a cut answer: POST /api/runs/{id}/continue.
func (a *API) continueRun(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "run", "run")
	if !ok {
		return
	}
	ru, err := a.svc.Continue(r.Context(), rid, actor(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRun(w, r, http.StatusAccepted, ru)
}

// editMessage regenerates from an edited message:
// POST /api/sessions/{id}/edit {item_id, content}.
func (a *API) editMessage(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	var in struct {
		ItemID  string `json:"item_id"`
		Content string `json:"content"`
	}
	if !decode(w, r, &in) {
		return
	}
	ru, err := a.svc.Edit(r.Context(), sid, in.ItemID, in.Content, actor(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRun(w, r, http.StatusAccepted, ru)
}

// undoTurns takes the last turns out of the conversation, or with
// {restore: true} puts the last undone ones back:
// POST /api/sessions/{id}/undo {turns} | {restore: true}.
func (a *API) undoTurns(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	var in struct {
		Turns   *int `json:"turns"`
		Restore bool `json:"restore"`
	}
	if !decodeOptional(w, r, &in) {
		return
	}
	var leaf string
	var err error
	switch {
	case in.Restore && in.Turns != nil:
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "send either {turns} or {restore: true}", nil)
		return
	case in.Restore:
		leaf, err = a.svc.Restore(r.Context(), sid, actor(r))
	default:
		n := 1
		if in.Turns != nil {
			n = *in.Turns
		}
		leaf, err = a.svc.Undo(r.Context(), sid, n, actor(r))
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"leaf_run_id": leaf})
}

// selectVersion shows another version of a message:
// POST /api/sessions/{id}/versions {item_id, version}.
func (a *API) selectVersion(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	var in struct {
		ItemID  string `json:"item_id"`
		Version int    `json:"version"`
	}
	if !decode(w, r, &in) {
		return
	}
	leaf, err := a.svc.SelectVersion(r.Context(), sid, in.ItemID, in.Version, actor(r))
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"leaf_run_id": leaf})
}
