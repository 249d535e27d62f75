package api

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// busyStatuses are the statuses that keep a session busy.
func busyStatuses() []run.Status {
	var out []run.Status
	for _, s := range run.All() {
		if s.Busy() {
			out = append(out, s)
		}
	}
	return out
}

// pathID returns the {id} path value when it is a well-formed id of the
// prefix; otherwise it answers 404 itself, without touching the store.
func pathID(w http.ResponseWriter, r *http.Request, prefix, what string) (string, bool) {
	v := r.PathValue("id")
	if !id.Valid(prefix, v) {
		writeError(w, http.StatusNotFound, control.CodeNotFound, what+" not found", nil)
		return "", false
	}
	return v, true
}

// maxSearchChars bounds a title search. Titles hold at most 200
// characters, so a longer search cannot match; the bound keeps the LIKE
// pattern far below SQLite's limit (50,000 bytes), which a longer one
// would hit as an internal error.
const maxSearchChars = 500

func (a *API) listSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 200 {
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "limit must be an integer from 1 to 200", nil)
			return
		}
		limit = n
	}
	search := q.Get("q")
	if utf8.RuneCountInString(search) > maxSearchChars {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput,
			fmt.Sprintf("q must be at most %d characters", maxSearchChars), map[string]any{"max_chars": maxSearchChars})
		return
	}
	// Read before the list, so a stream opened after it misses nothing
	// that changed the list.
	cursor, err := a.st.LastEventID(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	archived, project, ok := organiseFilter(w, q)
	if !ok {
		return
	}
	sessions, next, err := a.st.ListSessions(r.Context(), store.SessionPage{Limit: limit, Cursor: q.Get("cursor"), Query: search,
		Archived: archived, ProjectID: project})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	busy, err := a.st.RunsWithStatus(r.Context(), busyStatuses()...)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	answered, err := a.answeredRuns(r, busy)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]sessionView, len(sessions))
	for i, s := range sessions {
		out[i] = newSessionView(s, busy, answered)
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out, "next_cursor": next, "last_event_id": cursor})
}

func (a *API) sessionView(r *http.Request, sessionID string) (sessionView, error) {
	s, err := a.st.GetSession(r.Context(), sessionID)
	if err != nil {
		return sessionView{}, err
	}
	runs, err := a.st.SessionRuns(r.Context(), sessionID)
	if err != nil {
		return sessionView{}, err
	}
	var busy []store.Run
	for _, ru := range runs {
		if ru.Status.Busy() {
			busy = append(busy, ru)
		}
	}
	answered, err := a.answeredRuns(r, busy)
	if err != nil {
		return sessionView{}, err
	}
	return newSessionView(s, busy, answered), nil
}

// StatusAnswered is a session's status while its run, parked on a question
// that was answered, waits for a runner to continue.
const StatusAnswered = "answered"

// answeredRuns are the runs among busy parked on a question that has been
// answered (none of their requests is pending).
func (a *API) answeredRuns(r *http.Request, busy []store.Run) (map[string]bool, error) {
	out := map[string]bool{}
	for _, ru := range busy {
		if ru.RunnerID == "" && (ru.Status == run.AwaitingApproval || ru.Status == run.AwaitingClarify) {
			out[ru.ID] = true
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	reqs, err := a.st.ListRequests(r.Context(), store.RequestQuery{Status: store.RequestPending})
	if err != nil {
		return nil, err
	}
	for _, q := range reqs {
		delete(out, q.RunID)
	}
	return out, nil
}

func (a *API) createSession(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title     string `json:"title"`
		Workspace string `json:"workspace"`
		Model     string `json:"model"`
		ProjectID string `json:"project_id"`
		ProfileID string `json:"profile_id"` // h16-profiles
	}
	if r.ContentLength != 0 && !decode(w, r, &in) {
		return
	}
	s, err := a.svc.CreateSession(r.Context(), control.NewSession{Title: in.Title, Workspace: in.Workspace, Model: in.Model, ProjectID: in.ProjectID,
		ProfileID: in.ProfileID})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, newSessionView(s, nil, nil))
}

func (a *API) getSession(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	v, err := a.sessionView(r, sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (a *API) patchSession(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	var in struct {
		Title *string `json:"title"`
		Model *string `json:"model"`
		organiseInput
		ProfileID *string `json:"profile_id"` // h16-profiles
	}
	if !decode(w, r, &in) {
		return
	}
	patch := control.SessionPatch{Title: in.Title, Model: in.Model, ProfileID: in.ProfileID}
	if !in.organiseInput.apply(w, &patch) {
		return
	}
	if _, err := a.svc.UpdateSession(r.Context(), sid, patch); err != nil {
		a.fail(w, r, err)
		return
	}
	v, err := a.sessionView(r, sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (a *API) deleteSession(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	if err := a.svc.DeleteSession(r.Context(), sid); err != nil {
		a.fail(w, r, err)
		return
	}
	a.closeSessionTerminals(sid)
	w.WriteHeader(http.StatusNoContent)
}

// listMessages serves the normalised transcript, run by run, and the
// cursor to stream from so nothing is missed or shown twice.
func (a *API) listMessages(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	ses, err := a.st.GetSession(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	evs, last, err := a.transcriptEvents(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	// A branch shows its parent's history up to the branch point first;
	// of the session's own runs only the version on screen: the
	// conversation's end and its ancestors (a journal without versions is
	// every run).
	pevs, pids, err := store.Inherited(r.Context(), a.st, ses, store.EventQuery{NotTypes: []event.Type{event.MessageDelta, event.ReasoningDelta}, Fold: true})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	tree := transcript.Versions(evs)
	all := evs // a branch's inherited events first; a copy only then
	if len(pevs) > 0 {
		all = append(pevs, evs...)
	}
	snap := transcript.FoldSession(all, append(pids, tree.Path(tree.Leaf)...))
	snap.Items = settled(snap.Items, pids)
	tree.MarkVersions(snap.Items)
	if snap.Items == nil {
		snap.Items = []transcript.Item{}
	}
	var undone any
	if u := tree.LastUndo; u != nil {
		// Turns a person undid and can still restore (issue 15).
		undone = map[string]any{"turns": u.Turns}
	}
	writeTranscript(w, snap, last, undone)
}

func (a *API) sendMessage(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	var in struct {
		Content     string          `json:"content"`
		IfBusy      string          `json:"if_busy"`
		Model       string          `json:"model"`
		Attachments []attachmentRef `json:"attachments"`
		// ExpiresIn (h17-expiry): how long the run may take ("10m").
		ExpiresIn string `json:"expires_in"`
		// WebhookURL (h17-hooks) is told of the run's end, signed with
		// the server's run key.
		WebhookURL string `json:"webhook_url"`
	}
	if !decode(w, r, &in) {
		return
	}
	expiresIn, err := control.ParseExpiresIn(in.ExpiresIn)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if in.WebhookURL != "" {
		if err := checkHookURL(in.WebhookURL); err != nil {
			a.fail(w, r, err)
			return
		}
	}
	atts, ok := a.attachments(w, r, sid, in.Model, in.Attachments)
	if !ok {
		return
	}
	ru, steered, err := a.svc.Deliver(r.Context(), sid, control.Message{Content: in.Content, IfBusy: in.IfBusy, Model: in.Model, By: actor(r),
		TraceParent: a.opt.Tracer.TraceParent(r.Context()), Attachments: atts, ExpiresIn: expiresIn,
		WebhookURL: in.WebhookURL})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.opt.Tracer.TagRun(r.Context(), ru.ID)
	v, err := a.runView(r, ru, nil, 0, nil)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v.Steered = steered
	writeJSON(w, http.StatusAccepted, v)
}

// compactSession queues a run that summarises the session's older turns.
// It takes no body.
func (a *API) compactSession(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	ru, err := a.svc.Compact(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.writeRun(w, r, http.StatusAccepted, ru)
}

func (a *API) listSessionRuns(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	if _, err := a.st.GetSession(r.Context(), sid); err != nil {
		a.fail(w, r, err)
		return
	}
	asOf, err := a.st.LastEventID(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	runs, err := a.st.SessionRuns(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	var q *queue
	if slices.ContainsFunc(runs, waits) {
		rq, err := a.readQueue(r.Context())
		if err != nil {
			a.fail(w, r, err)
			return
		}
		q = &rq
	}
	ids := make([]string, len(runs))
	for i, ru := range runs {
		ids[i] = ru.ID
	}
	jobOf, err := a.st.JobsOfRuns(r.Context(), ids)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]runView, 0, len(runs))
	for _, ru := range runs {
		v, err := a.runView(r, ru, q, asOf, jobOf)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
}

// transcriptEvents reads what the transcript of a session is folded from.
// Streamed fragments are most of a long session's journal, yet a finished
// run's segments are all closed by message.done / reasoning.done carrying
// the whole text, so fragments are read only for runs still going: a
// 2,000-message session then reads thousands of events, not hundreds of
// thousands.
func (a *API) transcriptEvents(ctx context.Context, sid string) ([]event.Event, int64, error) {
	// The cursor is read first: every event up to it is committed, so
	// the session's events read next hold all of them.
	last, err := a.st.LastEventID(ctx)
	if err != nil {
		return nil, 0, err
	}
	deltas := []event.Type{event.MessageDelta, event.ReasoningDelta}
	evs, err := a.st.Events(ctx, store.EventQuery{SessionID: sid, NotTypes: deltas, Fold: true})
	if err != nil {
		return nil, 0, err
	}
	if n := len(evs); n > 0 && evs[n-1].ID > last {
		last = evs[n-1].ID
	}
	// The client resumes its stream after last, so what is added must end
	// there too: a fragment read later would carry the cursor past events
	// it never saw (a run.done, an answer's message.done). Which runs were
	// unfinished is judged at last as well, from the events themselves.
	open := map[string]bool{} // run → unfinished at last; run.done is final
	for _, ev := range evs {
		if ev.RunID == "" {
			continue
		}
		if u, ok := open[ev.RunID]; !ok || u {
			open[ev.RunID] = !event.IsTerminal(ev.Type)
		}
	}
	merged := false
	for id, unfinished := range open {
		if !unfinished {
			continue
		}
		more, err := a.st.Events(ctx, store.EventQuery{RunID: id, Types: deltas, Fold: true})
		if err != nil {
			return nil, 0, err
		}
		more = slices.DeleteFunc(more, func(ev event.Event) bool { return ev.ID > last })
		evs, merged = append(evs, more...), merged || len(more) > 0
	}
	if merged {
		slices.SortFunc(evs, func(x, y event.Event) int { return cmp.Compare(x.ID, y.ID) })
	}
	return evs, last, nil
}
