package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
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
	at, status, msg := a.branchPoint(r.Context(), parent, in.ItemID)
	if msg != "" {
		code := map[int]string{http.StatusNotFound: control.CodeNotFound, http.StatusBadRequest: control.CodeInvalidInput,
			http.StatusConflict: control.CodeConflict}[status]
		writeError(w, status, code, msg, map[string]any{"item_id": in.ItemID})
		return
	}
	if status != 0 {
		a.fail(w, r, errBranchRead)
		return
	}
	ses, err := a.svc.Branch(r.Context(), parent, at)
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
	evs, _, err := a.transcriptEvents(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	// Read after the events: every run they hold is listed.
	runs, err := a.st.SessionRunStates(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(runs))
	for i, ru := range runs {
		ids[i] = ru.ID
	}
	pevs, pids, err := store.Inherited(ctx, a.st, s, store.EventQuery{NotTypes: []event.Type{event.MessageDelta, event.ReasoningDelta}, Fold: true})
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

var errBranchRead = errors.New("reading the branch point")

// branchPoint finds the event a branch at message itemID starts after: the
// message.user of a user message, the message.done of an assistant one.
// It reads only those two types, not the whole transcript, so branching a
// long session costs a fraction of opening it. A message of a run no
// runner has taken yet, or text still streaming, has no end yet (409).
func (a *API) branchPoint(ctx context.Context, s store.Session, itemID string) (at int64, status int, msg string) {
	f := store.EventQuery{Types: []event.Type{event.MessageUser, event.MessageDone}, Fold: true}
	evs, _, err := store.Inherited(ctx, a.st, s, f)
	if err != nil {
		return 0, http.StatusInternalServerError, ""
	}
	own, err := a.st.Events(ctx, store.EventQuery{SessionID: s.ID, Types: f.Types, Fold: true})
	if err != nil {
		return 0, http.StatusInternalServerError, ""
	}
	evs = append(evs, own...)
	key := []byte(`"` + itemID + `"`)
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		if !bytes.Contains(e.Payload, key) {
			continue
		}
		switch e.Type {
		case event.MessageUser:
			var p event.MessageUserPayload
			if json.Unmarshal(e.Payload, &p) != nil || p.MessageID != itemID {
				continue
			}
			ru, err := a.st.GetRun(ctx, e.RunID)
			if err != nil {
				return 0, http.StatusInternalServerError, ""
			}
			if ru.Status == run.Queued {
				return 0, http.StatusConflict, "the message waits for a runner: it is not part of the conversation yet"
			}
			return e.ID, 0, ""
		case event.MessageDone:
			var p event.DonePayload
			if json.Unmarshal(e.Payload, &p) != nil || p.ID != itemID {
				continue
			}
			return e.ID, 0, ""
		}
	}
	// Not a finished message: still streaming, another kind of item, or
	// none at all.
	for _, it := range a.itemsOrNil(ctx, s) {
		if it.ID == itemID {
			if it.Kind == transcript.KindAssistant && it.Open {
				return 0, http.StatusConflict, "the message is not finished yet"
			}
			return 0, http.StatusBadRequest, "a branch starts after a user or assistant message"
		}
	}
	return 0, http.StatusNotFound, "message not found in this session"
}

// itemsOrNil is the session's transcript, or nil when it cannot be read
// (the caller then answers not found).
func (a *API) itemsOrNil(ctx context.Context, s store.Session) []transcript.Item {
	items, err := a.sessionItems(ctx, s)
	if err != nil {
		return nil
	}
	return items
}
