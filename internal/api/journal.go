package api

// The operator's console: a run's journal, raw (h16-ops). Every event of
// the run with its payload, as stored: seed 004's debug tier.

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Bounds of a page of GET /api/runs/{id}/journal.
const (
	defaultJournalPage = 200
	maxJournalPage     = 1000
	maxJournalBytes    = 4 << 20
)

func (a *API) runJournal(w http.ResponseWriter, r *http.Request) {
	rid, ok := pathID(w, r, "run", "run")
	if !ok {
		return
	}
	q := r.URL.Query()
	limit := defaultJournalPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxJournalPage {
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput, fmt.Sprintf("limit must be an integer from 1 to %d", maxJournalPage), nil)
			return
		}
		limit = n
	}
	after := int64(0)
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, control.CodeInvalidCursor, "after must be a non-negative event id", nil)
			return
		}
		after = n
	}
	ru, err := a.st.GetRun(r.Context(), rid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	evs, err := a.st.Events(r.Context(), store.EventQuery{RunID: rid, AfterID: after, Limit: limit + 1, MaxBytes: maxJournalBytes})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	// One more than asked says whether there is more; a page cut by
	// MaxBytes says so too.
	more := len(evs) > limit
	if more {
		evs = evs[:limit]
	} else if len(evs) > 0 && len(evs) < limit+1 {
		more = pageFull(evs)
	}
	next := after
	if len(evs) > 0 {
		next = evs[len(evs)-1].ID
	}
	if evs == nil {
		evs = []event.Event{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"run_id": rid, "session_id": ru.SessionID, "status": ru.Status,
		"events": evs, "next": next, "more": more})
}

// pageFull reports whether a page reached the byte bound, so that more
// events may follow it.
func pageFull(evs []event.Event) bool {
	n := 0
	for _, e := range evs {
		n += len(e.Payload)
	}
	return n >= maxJournalBytes
}
