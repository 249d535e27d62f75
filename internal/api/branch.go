package api

import (
	"context"
	"net/http"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// branchSession makes a new session whose history is this one's up to and
// including the message item_id (a user or assistant message of GET
// messages). The parent is unchanged.
func (a *API) branchSession(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	var in struct {
		ItemID string `json:"item_id"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.ItemID == "" {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "item_id is required", nil)
		return
	}
	parent, err := a.st.GetSession(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	items, err := a.sessionItems(r.Context(), parent)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var at *transcript.Item
	for i := range items {
		if items[i].ID == in.ItemID {
			at = &items[i]
			break
		}
	}
	switch {
	case at == nil:
		writeError(w, http.StatusNotFound, control.CodeNotFound, "message not found in this session", map[string]any{"item_id": in.ItemID})
		return
	case at.Kind != transcript.KindUser && at.Kind != transcript.KindAssistant:
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "a branch starts after a user or assistant message", map[string]any{"kind": at.Kind})
		return
	case at.Open || at.Queued:
		writeError(w, http.StatusConflict, control.CodeConflict, "the message is not finished yet", nil)
		return
	}
	ses, err := a.svc.Branch(r.Context(), parent, at.LastEventID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v, err := a.sessionView(r, ses.ID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// sessionItems folds a session's whole transcript, a branch's inherited
// part first, as GET messages serves it.
func (a *API) sessionItems(ctx context.Context, s store.Session) ([]transcript.Item, error) {
	runs, err := a.st.SessionRuns(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	evs, err := a.transcriptEvents(ctx, s.ID, runs)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(runs))
	for i, ru := range runs {
		ids[i] = ru.ID
	}
	pevs, pids, err := store.Inherited(ctx, a.st, s, []event.Type{event.MessageDelta, event.ReasoningDelta})
	if err != nil {
		return nil, err
	}
	return settled(transcript.FoldRuns(append(pevs, evs...), append(pids, ids...), ""), pids), nil
}

// settled clears Queued on the items of inherited runs: a branch taken at
// a user message cuts its run before it started, and in the branch that
// message is history, not a message waiting for a runner.
func settled(items []transcript.Item, inherited []string) []transcript.Item {
	if len(inherited) == 0 {
		return items
	}
	old := make(map[string]bool, len(inherited))
	for _, id := range inherited {
		old[id] = true
	}
	for i := range items {
		if old[items[i].RunID] {
			items[i].Queued = false
		}
	}
	return items
}
